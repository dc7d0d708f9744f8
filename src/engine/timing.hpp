// Per-iteration timing with device synchronisation.
#pragma once

#include <c10/core/Device.h>

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace ddpbench {

/// Waits until all work queued on `device` has finished (no-op on the CPU, where
/// ATen ops are synchronous).
void synchronize(const c10::Device& device);

/// Times one iteration. On a GPU: CUDA events (created with cudaEventDefault, since
/// the default-disabled timing flag would make them unusable) recorded on the current
/// stream, read after the end event completes. On the CPU: std::chrono::steady_clock.
class StepTimer {
 public:
  explicit StepTimer(const c10::Device& device);
  ~StepTimer();
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;
  /// Marks the start of an iteration.
  void start();
  /// Marks a phase boundary inside the iteration (a CUDA event on the current stream, or
  /// the clock on the CPU); nothing waits. At most kMaxMarks per iteration (later ones are ignored).
  void mark();
  /// Marks its end, waits for the device, and returns the elapsed time in seconds.
  double stop_s();
  /// After stop_s(): the time of each mark() since start(), seconds, in order.
  const std::vector<double>& marks_s() const { return marks_s_; }

  static constexpr size_t kMaxMarks = 3 * 1024 + 1;  ///< zero_grad + 3 per micro-step at --grad-accum 1024

 private:
  struct Impl;
  c10::Device device_;
  std::unique_ptr<Impl> impl_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<std::chrono::steady_clock::time_point> cpu_marks_;
  size_t n_marks_ = 0;
  std::vector<double> marks_s_;
};

/// Selects `device` as the current CUDA device of this thread (no-op on the CPU), as
/// Python's torch.cuda.set_device does: CUDA is initialised in this process first
/// (compat::lazy_init_cuda), so the caching allocator knows every device before the first
/// allocation, peak reset or memory fraction. Remembered for cuda_device_in_use().
void set_current_device(const c10::Device& device);

/// The CUDA device this process last selected with set_current_device, or nullopt when it
/// never selected one (a CPU run, or a command that does not touch CUDA). The teardown
/// (engine/run/teardown.hpp) waits for it and empties the caching allocator only then.
std::optional<c10::Device> cuda_device_in_use();

/// Number of CUDA devices visible to this process; 0 in a CPU build or without GPUs.
int cuda_device_count();

/// Resets the peak that peak_memory_bytes reports: the CUDA caching allocator's peak
/// on a GPU; on the CPU the process's peak RSS (VmHWM), by writing 5 to
/// /proc/self/clear_refs (Linux >= 4.0; ignored where that fails).
void reset_peak_memory(const c10::Device& device);

/// Before a series, outside any timing: on the CPU returns the heap's free memory to the
/// kernel (glibc malloc_trim(0)), so the peak RSS that follows is this series' and not an
/// earlier model's high-water mark kept by the tuned malloc; nothing on a GPU.
void release_free_host_memory(const c10::Device& device);

/// Peak memory since the last reset, bytes: on a GPU the caching allocator's allocated
/// bytes (CUDACachingAllocator::getDeviceStats().allocated_bytes[AGGREGATE].peak); on the
/// CPU the process's peak resident set size (VmHWM of /proc/self/status: the whole
/// process, model and libraries included). -1 when unknown.
long long peak_memory_bytes(const c10::Device& device);

}  // namespace ddpbench
