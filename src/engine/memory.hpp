// Peak memory per rank and the bytes of model state a rank holds (schema 1.7; docs/
// METHODOLOGY.md "Memory per rank and inference mode"). The torch-free half (parsing
// /proc/self/status, the row's "memory" object) is core/result/row_memory.hpp.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/optim/optimizer.h>

#include <string>
#include <vector>

#include "core/result/row_memory.hpp"

namespace ddpbench {

/// Starts a new peak window on this rank. GPU: the CUDA caching allocator's peak stats of
/// `device` (CUDACachingAllocator::resetPeakStats, via compat.hpp, after CUDA's lazy
/// initialisation, compat::lazy_init_cuda: it may be the process's first CUDA call), and the
/// host's VmHWM.
/// CPU: the process's peak RSS, by writing "5" to /proc/self/clear_refs, which sets VmHWM to
/// the current RSS (Linux >= 4.0, proc(5)), after release_free_host_memory (engine/timing)
/// has returned the heap's free pages, so memory freed before the window does not count.
/// Returns false when that write failed (older kernel, no permission): VmHWM then keeps the
/// process's peak since it started. Never throws on the CPU; on a GPU, c10::Error when CUDA
/// cannot be initialised.
bool reset_memory_peaks(const c10::Device& device);

/// This rank's peaks since the last reset_memory_peaks, bytes: on a GPU the caching
/// allocator's allocated_bytes and reserved_bytes peaks (StatType AGGREGATE: all pools),
/// and on every device the process's peak RSS (VmHWM of /proc/self/status; it covers the
/// whole process: libraries, the model, the allocator's caches). Fields stay empty where
/// unreadable. Never throws on the CPU; on a GPU as reset_memory_peaks.
RankMemory read_memory_peaks(const c10::Device& device, int rank);

/// The "source" a row's memory object names: kMemorySourceCuda on a GPU; on a CPU
/// kMemorySourceRss, or kMemorySourceRssNoReset when `reset_ok` is false.
std::string memory_source(const c10::Device& device, bool reset_ok);

/// Bytes of the given tensors' storages, each storage counted once (a gradient that is a
/// view into a DDP bucket counts the bucket once; a shard that is a view into a flat buffer
/// counts that buffer); undefined tensors count 0.
///   parameters:      the parameter tensors (or shards) this rank keeps between steps;
///   gradients:       the gradient tensors it keeps between steps;
///   optimizer_state: the optimizer's per-parameter state tensors (SGD: momentum buffers).
/// The sharded strategies (engine/dist/sharded) call this with their shards.
ModelStateBytes model_state_bytes(const std::vector<at::Tensor>& parameters, const std::vector<at::Tensor>& gradients,
                                  const std::vector<at::Tensor>& optimizer_state);

/// Plain DDP (and the no-DDP baseline): every tensor of `parameters`, their .grad() where
/// defined, and every tensor in `optimizer`'s state (SGD: momentum_buffer; Adam/AdamW:
/// exp_avg, exp_avg_sq, max_exp_avg_sq; other optimizers' state counts 0). Call after at
/// least one optimizer step, when the state exists. The DDP Reducer's bucket buffers are
/// not counted (with gradient_as_bucket_view the gradients are views into them).
ModelStateBytes model_state_bytes(const std::vector<at::Tensor>& parameters, const torch::optim::Optimizer& optimizer);

}  // namespace ddpbench
