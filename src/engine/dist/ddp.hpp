// DistributedDataParallel in C++: PyTorch's own c10d::Reducer driven in the exact
// sequence torch/nn/parallel/distributed.py uses (single device per process).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/logger.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/models/model.hpp"

namespace ddpbench {

/// The c10d::Logger keys of the Reducer's timers (DDPLoggingData.ints_map, ns):
/// forward compute, backward compute, backward communication, and their overlap.
inline constexpr size_t kNumReducerTimers = 4;
inline constexpr const char* kReducerTimerKeys[kNumReducerTimers] = {
    "avg_forward_compute_time", "avg_backward_compute_time", "avg_backward_comm_time",
    "avg_backward_compute_comm_overlap_time"};

/// DDP knobs, with Python's defaults.
struct DdpOptions {
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;      ///< bucket_cap_mb * 2^20
  int64_t first_bucket_cap_bytes = 1024 * 1024;     ///< dist._DEFAULT_FIRST_BUCKET_BYTES
  bool broadcast_buffers = true;                    ///< broadcast BatchNorm buffers from rank 0 each forward
  bool gradient_as_bucket_view = false;
  int64_t broadcast_bucket_bytes = 250 * 1024 * 1024;  ///< DDP.broadcast_bucket_size
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
  torch::Tensor forward(const torch::Tensor& x);

  /// Replaces the Reducer's built-in allreduce with `hook` (engine/dist/comm_hooks.hpp);
  /// call before the first forward. Throws c10::Error when a hook is already registered.
  void register_comm_hook(std::unique_ptr<c10d::CommHookInterface> hook) {
    reducer_->register_comm_hook(std::move(hook));
  }

  /// The wrapped module.
  Model& module() { return *module_; }
  /// Parameters handed to the Reducer (those requiring grad, module order).
  const std::vector<at::Tensor>& parameters() const { return params_; }
  /// True once the Reducer rebuilt its buckets in gradient-ready order.
  bool buckets_rebuilt() const { return rebuilt_; }
  /// Bucket sizes in bytes as the Reducer holds them now (after rebuild: the rebuilt ones).
  std::vector<int64_t> bucket_sizes_bytes();
  /// The Reducer's timers via c10d::Logger::get_ddp_logging_data(), in ns: averages of
  /// forward compute, backward compute, backward communication and their overlap over the
  /// iterations the Reducer samples (the first 10, then every 100th); empty where absent.
  std::map<std::string, int64_t> reducer_timers_ns();

 private:
  ModelPtr module_;
  c10::intrusive_ptr<c10d::ProcessGroup> pg_;
  DdpOptions opts_;
  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> buffers_;
  std::shared_ptr<c10d::Reducer> reducer_;
  std::shared_ptr<c10d::Logger> logger_;
  bool rebuilt_ = false;
};

}  // namespace ddpbench
