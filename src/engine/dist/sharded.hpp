// Sharded data parallel on the c10d process groups the DDP rows use (--strategy zero2|fsdp).
//  * zero2 (ZeRO stage 2, Rajbhandari et al. 2020, arXiv:1910.02054; DeepSpeed's stage 2,
//    PyTorch FSDP's SHARD_GRAD_OP): every rank keeps the full parameters. They are split
//    into buckets of consecutive parameters in the order the backward produces their
//    gradients (reverse module order, as DDP's Reducer), each at most the bucket cap; each
//    bucket is one flat fp32 buffer (padded to a multiple of the world size N) that its
//    parameters are views into. As soon as every gradient of a bucket is accumulated, the
//    bucket's gradients are copied into one bucket-sized buffer, released, and
//    reduce-scattered (average) so each rank keeps 1/N of the bucket's gradient; one bucket
//    is in flight while the backward goes on. SGD with momentum steps on the rank's 1/N
//    shard of each bucket, and the shards are all-gathered back. No rank ever holds the
//    model's full gradient at once.
//  * fsdp (FULL_SHARD, Zhao et al. 2023, arXiv:2304.11277; torch/distributed/fsdp): the
//    parameters of each unit of the model (Model::units(): a ResNet block, a ViT encoder or transformer
//    layer) and of the "root" group (the parameters outside every unit) form one flat
//    parameter sharded 1/N per rank. A unit's parameters are all-gathered before its
//    forward (the next unit's gather is prefetched asynchronously) and freed after it
//    (storage resized to 0, compat::free_storage), all-gathered again before its backward
//    (prefetching the previous unit's) and, once all its parameters have their gradient,
//    the unit's gradients are reduce-scattered and its parameters freed. The root group
//    stays gathered from the forward until the end of the backward. With CPU offload
//    (FSDP's CPUOffload(offload_params=True)) the parameter, gradient and momentum shards
//    live on the host between uses: a shard is copied to the device for each all-gather,
//    the reduce-scattered gradient shard is copied back, and SGD steps on the host.
// Both step the Trainer's optimizer (SGD with momentum, or a language model's AdamW) on the
// shards; gradients, optimizer state and (fsdp) parameters a rank holds between steps are 1/N
// of the model. BatchNorm buffers are not
// synchronised (each rank keeps its own running statistics, as PyTorch FSDP does after
// construction); the training forward uses batch statistics, so parameters do not depend on them.
// Gloo in torch 1.13 has no reduce_scatter: it is emulated by an all-to-all of the N
// chunks and a local sum (the method of `ddpbench comm`), with the same bytes on the wire.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/result/row_memory.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/models/model.hpp"

namespace ddpbench {

/// Bytes one rank sends for a ring reduce-scatter or all-gather of `padded_bytes` on
/// `n` ranks: (n-1)/n of the buffer (nccl-tests PERFORMANCE.md; ZeRO paper section 7).
int64_t ring_wire_bytes(int64_t padded_bytes, int n);

/// Options of ShardedDataParallel beyond the strategy.
struct ShardedOptions {
  /// zero2: the most bytes of fp32 gradient per bucket (a larger parameter is a bucket of
  /// its own); `run` passes DDP's bucket cap (--bucket-cap-mb, 25 MiB by default).
  int64_t bucket_cap_bytes = 25LL * 1024 * 1024;
  /// fsdp: keep the parameter, gradient and momentum shards on the host between uses and
  /// step SGD there (FSDP's CPUOffload(offload_params=True)). With a CPU device the host
  /// copies are still separate tensors (the logic runs; nothing is saved).
  bool cpu_offload = false;
};

/// The optimizer a sharded strategy steps on its shards, as the Trainer steps the whole
/// model: torch.optim.SGD (dampening 0, no Nesterov) or torch.optim.AdamW (amsgrad off), with
/// their hyper-parameters. Converts from either option set.
struct ShardOptimizer {
  enum class Kind { kSgd, kAdamW };
  Kind kind = Kind::kSgd;
  torch::optim::SGDOptions sgd{0.001};
  torch::optim::AdamWOptions adamw{0.001};
  ShardOptimizer(const torch::optim::SGDOptions& o) : kind(Kind::kSgd), sgd(o) {}  // NOLINT: implicit by design
  ShardOptimizer(const torch::optim::AdamWOptions& o) : kind(Kind::kAdamW), adamw(o) {}  // NOLINT
};

class ShardedDataParallel {
 public:
  /// Shards `model` (already on `device`, identical init on every rank: rank 0's
  /// parameters are broadcast first) over `pg`. `strategy` "zero2" or "fsdp" (else
  /// UsageError); `opts.cpu_offload` only with fsdp (else UsageError). Collective over
  /// `pg`. For fsdp it installs a unit runner on the model that wraps the one already
  /// installed (activation checkpointing: enable it first). Collectives time out after
  /// `timeout`. Only float32 trainable parameters (UsageError).
  ShardedDataParallel(ModelPtr model, c10::intrusive_ptr<c10d::ProcessGroup> pg, const std::string& strategy,
                      const ShardOptimizer& optimizer, const at::Device& device, std::chrono::milliseconds timeout,
                      const ShardedOptions& opts = {});
  ~ShardedDataParallel();
  ShardedDataParallel(const ShardedDataParallel&) = delete;
  ShardedDataParallel& operator=(const ShardedDataParallel&) = delete;

  /// The model's forward (fsdp: gathers the root group, the units gather themselves).
  torch::Tensor forward(const torch::Tensor& x);
  /// After loss.backward(): reduce-scatters the gradients not yet reduced (a bucket or
  /// unit whose gradients did not all arrive, fsdp's root group), waits for the last
  /// reduce-scatter in flight, frees the full gradients (and, fsdp, the gathered parameters).
  void finish_backward();
  /// The optimizer step on this rank's shards: SGD with momentum (g += wd p; m = momentum m
  /// + g; p -= lr m, torch.optim.SGD with dampening 0) or AdamW (torch.optim.AdamW's update:
  /// p *= 1 - lr wd; m, v the moving averages of g and g^2; p -= lr / (1 - b1^t) m /
  /// (sqrt(v) / sqrt(1 - b2^t) + eps)); zero2 then all-gathers the parameters.
  void optimizer_step();

  /// What this rank holds between steps (call between steps).
  ModelStateBytes model_state_bytes() const;
  /// Cumulative bytes this rank sent through reduce-scatters and all-gathers (ring
  /// accounting, ring_wire_bytes) since construction.
  long long wire_bytes() const { return wire_bytes_; }
  /// The row's "communication" facts: strategy, units (fsdp) or buckets and bucket cap
  /// (zero2), CPU offload, padded flat sizes, payload and wire bytes per step by formula,
  /// collective APIs used and whether reduce-scatter is emulated.
  nlohmann::json communication() const;
  /// The parameters as full tensors (module order, trainable only), gathered where sharded:
  /// collective over the group (fsdp). For tests and checks.
  std::vector<torch::Tensor> full_parameters();
  /// max over elements of (max over ranks - min over ranks) of the full parameters: 0 when
  /// every rank holds the same model after the step. Collective (two allreduces).
  double parameter_spread_across_ranks();

  const std::string& strategy() const { return strategy_; }
  Model& module() { return *model_; }

  struct Group;  // one flat parameter (a unit or the root group of fsdp, a bucket of zero2)

 private:
  void gather(size_t g, bool async);
  void wait_gather(size_t g);
  torch::Tensor largest_group_buffer() const;  // uninitialised, the largest group's padded size
  void reshard(size_t g);
  void reduce_grads(size_t g);  // starts the group's reduce-scatter (after finishing the one in flight)
  void finish_reduce();         // waits for the reduce-scatter in flight, if any
  torch::Tensor to_device(const torch::Tensor& host) const;
  torch::Tensor run_unit(size_t i, const torch::Tensor& x, const Model::UnitFn& fn, const Model::UnitRunner& inner);
  void pre_backward(size_t unit);

  ModelPtr model_;
  c10::intrusive_ptr<c10d::ProcessGroup> pg_;
  std::string strategy_;
  ShardOptimizer optimizer_;
  int64_t steps_ = 0;  // optimizer steps taken (AdamW's bias correction)
  at::Device device_;
  std::chrono::milliseconds timeout_;
  int n_ = 1, rank_ = 0;
  std::vector<std::unique_ptr<Group>> groups_;  // fsdp: units in order, then the root; zero2: one
  size_t root_ = 0;
  long long wire_bytes_ = 0;
  bool broadcast_gather_ = false, emulate_rs_ = false;
  ShardedOptions opts_;
  PendingReduceScatter rs_;  // the one reduce-scatter in flight
  size_t rs_group_ = 0;      // its group
  // The reduce-scatter's staging: the largest group's padded size, allocated once and reused
  // by every group (one reduce-scatter in flight), so the backward does not allocate and free
  // a bucket-sized buffer per bucket. stage_tmp_: the Gloo emulation's receive buffer.
  torch::Tensor stage_in_, stage_tmp_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<std::unique_ptr<std::function<void()>>> pre_backward_hooks_;  // per unit, for PreBackward
  Model::UnitRunner previous_runner_;
};

}  // namespace ddpbench
