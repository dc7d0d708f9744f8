#include "engine/timing.hpp"

#ifdef DDPBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <malloc.h>

#include <fstream>
#include <string>

namespace ddpbench {
namespace {

// VmHWM of /proc/self/status (peak resident set size, kB) in bytes; -1 when unreadable.
long long peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return -1;
}

}  // namespace

void synchronize(const c10::Device& device) {
#ifdef DDPBENCH_WITH_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#else
  (void)device;
#endif
}

struct StepTimer::Impl {
#ifdef DDPBENCH_WITH_CUDA
  at::cuda::CUDAEvent start{cudaEventDefault};
  at::cuda::CUDAEvent end{cudaEventDefault};
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> marks;  // created on first use
#endif
};

StepTimer::StepTimer(const c10::Device& device) : device_(device), impl_(std::make_unique<Impl>()) {}
StepTimer::~StepTimer() = default;

void StepTimer::start() {
  n_marks_ = 0;
#ifdef DDPBENCH_WITH_CUDA
  if (device_.is_cuda()) {
    impl_->start.record();
    return;
  }
#endif
  cpu_marks_.reserve(kMaxMarks);
  cpu_marks_.clear();
  t0_ = std::chrono::steady_clock::now();
}

void StepTimer::mark() {
  if (n_marks_ >= kMaxMarks) return;
#ifdef DDPBENCH_WITH_CUDA
  if (device_.is_cuda()) {
    if (impl_->marks.size() <= n_marks_) impl_->marks.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
    impl_->marks[n_marks_]->record();
    ++n_marks_;
    return;
  }
#endif
  cpu_marks_.push_back(std::chrono::steady_clock::now());
  ++n_marks_;
}

double StepTimer::stop_s() {
  marks_s_.resize(n_marks_);
#ifdef DDPBENCH_WITH_CUDA
  if (device_.is_cuda()) {
    impl_->end.record();
    impl_->end.synchronize();
    for (size_t i = 0; i < n_marks_; ++i)
      marks_s_[i] = static_cast<double>(impl_->start.elapsed_time(*impl_->marks[i])) / 1000.0;
    return static_cast<double>(impl_->start.elapsed_time(impl_->end)) / 1000.0;
  }
#endif
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n_marks_; ++i) marks_s_[i] = std::chrono::duration<double>(cpu_marks_[i] - t0_).count();
  return std::chrono::duration<double>(now - t0_).count();
}

void set_current_device(const c10::Device& device) {
#ifdef DDPBENCH_WITH_CUDA
  if (device.is_cuda()) c10::cuda::set_device(device.index());
#else
  (void)device;
#endif
}

int cuda_device_count() {
#ifdef DDPBENCH_WITH_CUDA
  return static_cast<int>(c10::cuda::device_count());
#else
  return 0;
#endif
}

void reset_peak_memory(const c10::Device& device) {
#ifdef DDPBENCH_WITH_CUDA
  if (device.is_cuda()) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return;
  }
#endif
  if (device.is_cpu()) std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to the current RSS (Linux >= 4.0)
}

void release_free_host_memory(const c10::Device& device) {
  if (device.is_cpu()) ::malloc_trim(0);
}

long long peak_memory_bytes(const c10::Device& device) {
#ifdef DDPBENCH_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    // Index 0 is StatType::AGGREGATE (all pools) in every torch version; the enum itself
    // moved namespaces between 1.13 and 2.x.
    return static_cast<long long>(stats.allocated_bytes[0].peak);
  }
#endif
  if (device.is_cpu()) return peak_rss_bytes();
  return -1;
}

}  // namespace ddpbench
