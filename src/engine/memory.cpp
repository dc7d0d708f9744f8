#include "engine/memory.hpp"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <fstream>
#include <unordered_set>

#include "engine/compat.hpp"
#include "engine/timing.hpp"

namespace ddpbench {

bool reset_memory_peaks(const c10::Device& device) {
#if DDPBENCH_HAVE_CUDA_ALLOCATOR_STATS
  if (device.is_cuda()) {
    // A process whose first CUDA call this is (inference: no allocation before the window)
    // initialises CUDA first, or the allocator refuses the device ("Invalid device argument").
    compat::lazy_init_cuda();
    compat::cuda_reset_peak_memory_stats(device.index());
  }
#else
  (void)device;
#endif
  // Free heap pages go back to the kernel first: with the tuned 1 GiB trim threshold, what
  // the steps before the window freed would otherwise stay resident and count in its peak.
  release_free_host_memory(device);
  // proc(5): writing 5 to clear_refs resets the peak resident set size (VmHWM) to the
  // current RSS (Linux >= 4.0). An older kernel rejects the value: the write fails.
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

RankMemory read_memory_peaks(const c10::Device& device, int rank) {
  RankMemory m;
  m.rank = rank;
#if DDPBENCH_HAVE_CUDA_ALLOCATOR_STATS
  if (device.is_cuda()) {
    compat::lazy_init_cuda();
    const compat::CudaMemoryPeaks p = compat::cuda_memory_peaks(device.index());
    m.peak_allocated_bytes = static_cast<double>(p.allocated_bytes);
    m.peak_reserved_bytes = static_cast<double>(p.reserved_bytes);
  }
#else
  (void)device;
#endif
  m.peak_rss_bytes = read_proc_status_bytes("/proc/self/status", "VmHWM:");
  return m;
}

std::string memory_source(const c10::Device& device, bool reset_ok) {
  if (device.is_cuda()) return kMemorySourceCuda;
  return reset_ok ? kMemorySourceRss : kMemorySourceRssNoReset;
}

namespace {
int64_t bytes_of(const std::vector<at::Tensor>& ts) {
  std::unordered_set<const void*> seen;
  int64_t b = 0;
  for (const auto& t : ts) {
    if (!t.defined()) continue;
    const c10::StorageImpl* s = t.storage().unsafeGetStorageImpl();
    if (seen.insert(s).second) b += static_cast<int64_t>(s->nbytes());
  }
  return b;
}
}  // namespace

ModelStateBytes model_state_bytes(const std::vector<at::Tensor>& parameters, const std::vector<at::Tensor>& gradients,
                                  const std::vector<at::Tensor>& optimizer_state) {
  ModelStateBytes s;
  s.parameters = bytes_of(parameters);
  s.gradients = bytes_of(gradients);
  s.optimizer = bytes_of(optimizer_state);
  return s;
}

ModelStateBytes model_state_bytes(const std::vector<at::Tensor>& parameters, const torch::optim::Optimizer& optimizer) {
  std::vector<at::Tensor> grads, state;
  for (const auto& p : parameters) grads.push_back(p.grad());
  for (const auto& kv : optimizer.state()) {
    const torch::optim::OptimizerParamState* st = kv.second.get();
    if (const auto* sgd = dynamic_cast<const torch::optim::SGDParamState*>(st)) {
      state.push_back(sgd->momentum_buffer());
    } else if (const auto* adam = dynamic_cast<const torch::optim::AdamParamState*>(st)) {
      state.insert(state.end(), {adam->exp_avg(), adam->exp_avg_sq(), adam->max_exp_avg_sq()});
    } else if (const auto* adamw = dynamic_cast<const torch::optim::AdamWParamState*>(st)) {
      state.insert(state.end(), {adamw->exp_avg(), adamw->exp_avg_sq(), adamw->max_exp_avg_sq()});
    }
  }
  return model_state_bytes(parameters, grads, state);
}

}  // namespace ddpbench
