// DistributedDataParallel in C++: PyTorch's own c10d::Reducer driven in the exact
// sequence torch/nn/parallel/distributed.py uses (single device per process).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/logger.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "core/config/ddp_settings.hpp"
#include "engine/models/model.hpp"

namespace ddpbench {

/// DDP knobs, with Python's defaults.
struct DdpOptions {
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;         ///< bucket_cap_mb * 2^20
  int64_t first_bucket_cap_bytes = 1024 * 1024;        ///< dist._DEFAULT_FIRST_BUCKET_BYTES
  /// DDP's flag settings at Python's defaults (core/config/ddp_settings.hpp): broadcast_buffers
  /// (BatchNorm buffers from rank 0 each forward), gradient_as_bucket_view, static_graph,
  /// find_unused_parameters, skip_all_reduce_unused_params.
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_MEMBER, _)
  int64_t broadcast_bucket_bytes = 250 * 1024 * 1024;  ///< DDP.broadcast_bucket_size
  /// The Reducer's runtime stats on every iteration (Python's _set_ddp_runtime_logging_sample_rate(1)),
  /// which the breakdown reads; false: PyTorch's default sampling (the first 10 iterations, then
  /// every 100th: reducer.cpp should_collect_runtime_stats).
  bool runtime_stats_every_iteration = true;
};

/// The Reducer's timers of one synchronised iteration (c10d::Logger ints_map, ns -> s):
/// forward compute (kForwardStart..kBackwardComputeStart), backward compute
/// (kBackwardComputeStart..kBackwardComputeEnd), backward communication (first bucket's
/// allreduce launched .. last bucket's finished) and their overlap (kBackwardCommStart..
/// kBackwardComputeEnd). Source: torch/csrc/distributed/c10d/logger.cpp, reducer.cpp.
struct ReducerIterationTimes {
  double forward_compute_s = 0, backward_compute_s = 0, backward_comm_s = 0, overlap_s = 0;
};

/// Wraps a model already on its device. Construction is collective over `pg` (all
/// ranks must construct together) and does what DistributedDataParallel.__init__ does:
///  1. verify parameter shapes across ranks (c10d::verify_params_across_processes),
///  2. broadcast parameters and buffers from rank 0 (c10d::broadcast_coalesced, 250 MiB),
///  3. assign the first iteration's buckets with compute_bucket_assignment_by_size: one
///     bucket ([sys.maxsize]) as Python does without find_unused_parameters, reversed,
///  4. build the c10d::Reducer (bucket caps for the rebuild after iteration 1) and a
///     c10d::Logger bound to it.
/// Throws c10::Error when ranks hold different models.
class DistributedDataParallel {
 public:
  DistributedDataParallel(ModelPtr module, c10::intrusive_ptr<c10d::ProcessGroup> pg, const DdpOptions& opts,
                          const at::Device& device);
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  /// One DDP forward, as DistributedDataParallel.forward with grad enabled:
  /// Logger runtime stats, Reducer::prepare_for_forward, rebuild_buckets (a collective
  /// the first time after iteration 1), buffer broadcast from rank 0, module forward,
  /// Reducer::prepare_for_backward. The following backward() allreduces gradients
  /// bucket by bucket, overlapped with the backward computation.
  /// `sync` false is Python's no_sync(): no Reducer preparation, so the backward that
  /// follows only accumulates gradients locally (no allreduce); the buffer broadcast is
  /// skipped in the forward after such a step, as Python's require_forward_param_sync does.
  /// With find_unused_parameters the Reducer traverses the graph from the output; with
  /// static_graph the first iteration's allreduce is delayed to the end of the backward
  /// (Reducer::delay_all_reduce queued on the autograd engine, as Python's _DDPSink does).
  torch::Tensor forward(const torch::Tensor& x, bool sync = true);

  /// Replaces the Reducer's built-in allreduce with `hook` (engine/dist/comm_hooks.hpp) and
  /// tells the Logger its `name`, as Python's register_comm_hook does; call before the first
  /// forward. Throws c10::Error when a hook is already registered.
  void register_comm_hook(std::unique_ptr<c10d::CommHookInterface> hook, const std::string& name);

  /// The Reducer's timers of the last synchronised iteration (call after its backward,
  /// outside any timed span: it records the iteration in the Logger, which Python does at
  /// the start of the next forward; the sample rate is 1, so every iteration is recorded).
  /// nullopt when the Reducer recorded nothing (no synchronised iteration yet).
  std::optional<ReducerIterationTimes> last_iteration_times();

  /// The wrapped module.
  Model& module() { return *module_; }
  /// Parameters handed to the Reducer (those requiring grad, module order).
  const std::vector<at::Tensor>& parameters() const { return params_; }
  /// True once the Reducer rebuilt its buckets in gradient-ready order.
  bool buckets_rebuilt() const { return rebuilt_; }
  /// Bucket sizes in bytes as the Reducer holds them now (after rebuild: the rebuilt ones).
  std::vector<int64_t> bucket_sizes_bytes();

 private:
  ModelPtr module_;
  c10::intrusive_ptr<c10d::ProcessGroup> pg_;
  DdpOptions opts_;
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> buffers_;
  std::shared_ptr<c10d::Reducer> reducer_;
  std::shared_ptr<c10d::Logger> logger_;
  bool rebuilt_ = false;
  bool param_sync_ = true;       ///< Python's require_forward_param_sync
  int64_t sync_iterations_ = 0;  ///< synchronised forwards so far (Python's num_iterations)
};

}  // namespace ddpbench
