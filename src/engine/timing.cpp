#include "engine/timing.hpp"

#ifdef DDPBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <malloc.h>

#include <atomic>

#include "engine/compat.hpp"
#include "engine/memory.hpp"

#include <fstream>
#include <string>

namespace ddpbench {

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
    if (impl_->marks.size() <= n_marks_)
      impl_->marks.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
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

namespace {
std::atomic<int> g_cuda_device_in_use{-1};  // the index set_current_device selected last
}  // namespace

void set_current_device(const c10::Device& device) {
#ifdef DDPBENCH_WITH_CUDA
  if (device.is_cuda()) {
    compat::lazy_init_cuda();
    c10::cuda::set_device(device.index());
    g_cuda_device_in_use = device.index();
  }
#else
  (void)device;
#endif
}

std::optional<c10::Device> cuda_device_in_use() {
  const int index = g_cuda_device_in_use.load();
  if (index < 0) return std::nullopt;
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

int cuda_device_count() {
#ifdef DDPBENCH_WITH_CUDA
  return static_cast<int>(c10::cuda::device_count());
#else
  return 0;
#endif
}

void reset_peak_memory(const c10::Device& device) { (void)reset_memory_peaks(device); }

void release_free_host_memory(const c10::Device& device) {
  if (device.is_cpu()) ::malloc_trim(0);
}

long long peak_memory_bytes(const c10::Device& device) {
  const RankMemory m = read_memory_peaks(device, 0);
  if (device.is_cuda()) return m.peak_allocated_bytes ? static_cast<long long>(*m.peak_allocated_bytes) : -1;
  if (device.is_cpu()) return m.peak_rss_bytes ? static_cast<long long>(*m.peak_rss_bytes) : -1;
  return -1;
}

}  // namespace ddpbench
