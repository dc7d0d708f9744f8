// The training step being measured: synthetic data, cross-entropy, SGD with momentum (image
// models) or AdamW (language models).
#pragma once

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <cstdint>
#include <memory>

#include "core/config/run_config.hpp"
#include "core/result/row_sections.hpp"
#include "engine/dist/ddp.hpp"
#include "engine/dist/sharded.hpp"
#include "engine/models/model.hpp"
#include "engine/timing.hpp"
#include "engine/train/precision.hpp"

namespace ddpbench {

/// One synthetic batch, generated once and reused every iteration (as PyTorch's
/// benchmark.py does) so storage and data loading never enter the measurement.
struct SyntheticBatch {
  torch::Tensor input;   ///< float32 [batch, 3, image, image], N(0, 1)
  torch::Tensor target;  ///< int64 [batch], uniform in [0, classes)
};

/// Draws a batch on `device` from torch's default generators seeded with `seed`.
SyntheticBatch make_synthetic_batch(int64_t batch, int64_t image, int64_t classes, const c10::Device& device,
                                    uint64_t seed);

/// A language model's synthetic batch: seq_len + 1 token ids per sequence drawn uniformly
/// from [0, vocab); input the first seq_len, target the same sequence shifted by one (the
/// next token at every position), both int64 [batch, seq_len], on `device`, seeded with `seed`.
SyntheticBatch make_token_batch(int64_t batch, int64_t seq_len, int64_t vocab, const c10::Device& device,
                                uint64_t seed);

/// The language models' optimizer: AdamW at PyTorch's defaults (torch.optim.AdamW: lr 0.001,
/// betas (0.9, 0.999), eps 1e-8, weight decay 0.01), as LLM training jobs use it.
torch::optim::AdamWOptions trainer_adamw_options();

/// The optimizer the step of `model` uses (its options; the sharded strategies step the same):
/// AdamW (trainer_adamw_options) for a language model, else SGD (trainer_sgd_options).
ShardOptimizer trainer_optimizer(const Model& model);

/// The optimizer's hyper-parameters: SGD lr 0.001, momentum 0.9, weight decay 1e-4 (the
/// values of PyTorch's benchmarks/distributed/ddp/benchmark.py). The sharded strategies
/// step with the same ones.
torch::optim::SGDOptions trainer_sgd_options();

/// A model, its optimizer (trainer_optimizer: SGD lr 0.001, momentum 0.9, weight decay 1e-4,
/// the values of benchmark.py, or a language model's AdamW; over the parameters that require
/// gradients) and optionally the DDP
/// wrapper that reduces its gradients. fp16/bf16 run forward and loss under autocast;
/// fp16 also scales the loss (LossScaler) and skips steps whose gradients overflow.
/// Where one step's time went by our own marks (StepTimer::mark), seconds per step,
/// summed over the micro-steps of gradient accumulation.
struct StepPhases {
  double zero_grad_s = 0;      ///< optimizer.zero_grad
  double forward_s = 0;        ///< forward + loss (DDP: Reducer prepare, buffer broadcast)
  double backward_s = 0;       ///< loss.backward() until it returned (DDP: with the wait for the last bucket)
  double optimizer_s = 0;      ///< optimizer step (fp16: unscale, skip check, scale update)
  double last_backward_s = 0;  ///< backward of the last (synchronised) micro-step alone
  /// The loss of the last micro-step alone (after the model's output; inside forward_s). DDP's
  /// Reducer starts its backward-compute timer in prepare_for_backward, at the end of DDP's
  /// forward, so its backward compute includes this.
  double last_loss_s = 0;
  bool complete = false;       ///< false when the step was not marked as expected
};

/// The DDP settings of `cfg` with the list-valued ones from `v`, as DistributedDataParallel takes
/// them (caps in bytes: MiB * 2^20, as distributed.py's int(bucket_cap_mb * 1024 * 1024)).
DdpOptions ddp_options_of(const RunConfig& cfg, const DdpVariant& v);

/// The same settings as a row records them (BenchResult::ddp_options), caps in MiB.
RowDdpOptions row_ddp_options(const RunConfig& cfg, const DdpVariant& v);

/// Whether the linked torch's DistributedDataParallel caps the first bucket at an explicit
/// bucket_cap_mb (compat::kExplicitBucketCapCapsFirstBucket); RunConfig::bucket_cap_caps_first_bucket
/// is this and --bucket-cap-mb given.
bool ddp_explicit_cap_caps_first_bucket();

/// Refuses a DDP setting of `cfg` that the linked torch's DDP does not have: UsageError
/// "--skip-all-reduce-unused-params needs torch 2.7+ ..." (compat::kReducerSkipsUnusedParams).
void check_ddp_settings_supported(const RunConfig& cfg);

/// Python's Optimizer.zero_grad(set_to_none) on `params`: with set_to_none every gradient is
/// dropped (p.grad = None: the next backward allocates it anew, or DDP's Reducer points it at
/// its bucket view); otherwise each is zeroed in place (detach_ only where it has a grad_fn),
/// so gradients that are views into DDP buckets stay views.
void zero_grads(const std::vector<torch::Tensor>& params, bool set_to_none);

/// The linked torch's default set_to_none of Optimizer.zero_grad: true from torch 2.0, false
/// before (compat::kZeroGradSetToNoneByDefault).
bool default_zero_grad_set_to_none();

/// The step's set_to_none: run's --zero-grad-set-to-none where given, else the linked torch's default.
bool zero_grad_set_to_none(const RunConfig& cfg);

class Trainer {
 public:
  /// `ddp` may be null: then the model trains alone (the "no ddp" baseline). `grad_accum` K
  /// >= 1: each step runs K micro-steps on the batch (loss / K each), the first K-1 under
  /// no_sync, then one optimizer step.
  Trainer(ModelPtr model, std::unique_ptr<DistributedDataParallel> ddp, SyntheticBatch batch, const c10::Device& device,
          const std::string& precision = "fp32", int grad_accum = 1,
          bool zero_grad_set_to_none = default_zero_grad_set_to_none());

  /// zero_grad -> K x (forward -> the model's loss (cross-entropy) -> backward; DDP: the last with bucketed
  /// allreduce) -> optimizer step. Asynchronous on a GPU: time it with StepTimer; with a
  /// `timer` it marks the phase boundaries (phases() reads them). Returns the last loss.
  torch::Tensor step(StepTimer* timer = nullptr);

  /// The phases of the step just timed with `timer` (after timer.stop_s() returned `step_s`):
  /// marks are [zero_grad end, then per micro-step model output, loss end, backward end].
  StepPhases phases(const StepTimer& timer, double step_s) const;

  /// Optimizer.zero_grad(set_to_none) with the constructor's set_to_none (zero_grads).
  void zero_grad();

  /// Micro-steps per optimizer step.
  int grad_accum() const { return grad_accum_; }

  /// zero_grad -> K x (forward -> loss -> backward) only (no optimizer step): for checks.
  torch::Tensor forward_backward(StepTimer* timer = nullptr);

  /// The optimizer step alone (after forward_backward); with loss scaling, unscale,
  /// skip the step on overflow, update the scale.
  void optimizer_step();

  /// `run --mode inference`'s step: one forward of the batch under torch::NoGradGuard, the
  /// model switched to eval mode (BatchNorm uses its running statistics, dropout is off) and
  /// --precision's autocast; no loss, no backward, no optimizer, no DDP (the wrapper, if any,
  /// is bypassed). Asynchronous on a GPU: time it with StepTimer. Returns the logits [batch, classes].
  torch::Tensor infer();

  /// The optimizer (its state: engine/memory model_state_bytes).
  const torch::optim::Optimizer& optimizer() const { return *optimizer_; }

  /// The loss scaler (fp16), or null.
  const LossScaler* scaler() const { return scaler_.get(); }

  Model& model() { return *model_; }
  DistributedDataParallel* ddp() { return ddp_.get(); }

  /// Trains through `sharded` (--strategy zero2|fsdp) instead of DDP: forward through it,
  /// its reduce-scatters after the backward (timed as backward), its optimizer step on the
  /// shards. Needs a Trainer built without DDP, grad_accum 1 and no fp16 loss scaling
  /// (std::invalid_argument otherwise).
  void set_sharded(std::unique_ptr<ShardedDataParallel> sharded);
  ShardedDataParallel* sharded() { return sharded_.get(); }
  /// Bytes of parameters, gradients and optimizer state this rank holds between steps
  /// (sharded: ShardedDataParallel::model_state_bytes; else every parameter, gradient and
  /// momentum buffer: engine/memory model_state_bytes).
  ModelStateBytes model_state_bytes();
  /// Parameters the optimizer updates (those requiring gradients, module order).
  const std::vector<torch::Tensor>& parameters();

 private:
  ModelPtr model_;
  std::unique_ptr<DistributedDataParallel> ddp_;
  std::unique_ptr<ShardedDataParallel> sharded_;
  SyntheticBatch batch_;
  c10::Device device_;
  std::string precision_;
  std::unique_ptr<LossScaler> scaler_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  int grad_accum_ = 1;
  bool set_to_none_ = false;
};

/// Spread of gradients across the ranks of `pg` after a DDP step: max over elements of
/// (max over ranks - min over ranks) of each gradient, and max |g|. With a correct
/// allreduce every rank holds the same averaged gradient, so the spread is 0 up to
/// rounding. Collective over `pg` (two allreduces of all gradients, one of a scalar).
struct GradSpread {
  double max_abs_diff = 0;  ///< max_i (max_r g_r[i] - min_r g_r[i])
  double max_abs_grad = 0;  ///< max_i max_r |g_r[i]|
};
GradSpread grad_spread_across_ranks(const std::vector<torch::Tensor>& params,
                                    const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                    std::chrono::milliseconds timeout);

}  // namespace ddpbench
