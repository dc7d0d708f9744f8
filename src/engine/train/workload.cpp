#include "engine/train/workload.hpp"

#include <torch/nn/functional/loss.h>
#include <torch/utils.h>

#include <stdexcept>

#include <ATen/ops/cat.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include <fmt/format.h>
#include <torch/version.h>

#include "core/config/instruments.hpp"
#include "core/util/errors.hpp"
#include "engine/compat.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/memory.hpp"

namespace ddpbench {

SyntheticBatch make_synthetic_batch(int64_t batch, int64_t image, int64_t classes, const c10::Device& device,
                                    uint64_t seed) {
  torch::manual_seed(seed);
  SyntheticBatch b;
  b.input = at::randn({batch, 3, image, image}, at::TensorOptions().device(device).dtype(at::kFloat));
  b.target = at::randint(0, classes, {batch}, at::TensorOptions().device(device).dtype(at::kLong));
  return b;
}

SyntheticBatch make_token_batch(int64_t batch, int64_t seq_len, int64_t vocab, const c10::Device& device,
                                uint64_t seed) {
  torch::manual_seed(seed);
  const auto tokens =
      at::randint(0, vocab, {batch, seq_len + 1}, at::TensorOptions().device(device).dtype(at::kLong));
  SyntheticBatch b;
  b.input = tokens.slice(1, 0, seq_len).contiguous();
  b.target = tokens.slice(1, 1, seq_len + 1).contiguous();
  return b;
}

namespace {
std::vector<torch::Tensor> trainable(torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (auto& p : m.parameters())
    if (p.requires_grad()) out.push_back(p);
  return out;
}
}  // namespace

torch::optim::SGDOptions trainer_sgd_options() {
  return torch::optim::SGDOptions(0.001).momentum(0.9).weight_decay(1e-4);
}

torch::optim::AdamWOptions trainer_adamw_options() { return torch::optim::AdamWOptions(0.001); }

ShardOptimizer trainer_optimizer(const Model& model) {
  if (model.vocab_size() > 0) return trainer_adamw_options();
  return trainer_sgd_options();
}

namespace {
std::unique_ptr<torch::optim::Optimizer> make_optimizer(Model& model) {
  const ShardOptimizer o = trainer_optimizer(model);
  if (o.kind == ShardOptimizer::Kind::kAdamW) return std::make_unique<torch::optim::AdamW>(trainable(model), o.adamw);
  return std::make_unique<torch::optim::SGD>(trainable(model), o.sgd);
}
}  // namespace

Trainer::Trainer(ModelPtr model, std::unique_ptr<DistributedDataParallel> ddp, SyntheticBatch batch,
                 const c10::Device& device, const std::string& precision, int grad_accum, bool zero_grad_set_to_none)
    : model_(std::move(model)),
      ddp_(std::move(ddp)),
      batch_(std::move(batch)),
      device_(device),
      precision_(precision),
      scaler_(precision == "fp16" ? std::make_unique<LossScaler>(device) : nullptr),
      optimizer_(make_optimizer(*model_)),
      grad_accum_(std::max(1, grad_accum)),
      set_to_none_(zero_grad_set_to_none) {}

// The optimizer's one parameter group holds exactly the trainable parameters: no module
// walk per step (Python's GradScaler also reads optimizer.param_groups).
const std::vector<torch::Tensor>& Trainer::parameters() { return optimizer_->param_groups().front().params(); }

void zero_grads(const std::vector<torch::Tensor>& params, bool set_to_none) {
  for (const auto& p : params) {
    // mutable_grad() is the gradient slot itself (non-const by design, as p.grad in Python).
    auto& g = const_cast<torch::Tensor&>(p).mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g.reset();
      continue;
    }
    // libtorch's own zero_grad(false) detaches every gradient in place, which a gradient
    // that is a view into a DDP bucket (gradient_as_bucket_view) refuses.
    if (g.grad_fn()) g.detach_();
    else g.requires_grad_(false);
    g.zero_();
  }
}

DdpOptions ddp_options_of(const RunConfig& cfg, const DdpVariant& v) {
  DdpOptions opts;
  opts.bucket_cap_bytes = static_cast<int64_t>(v.bucket_cap_mb * 1024 * 1024);
  opts.first_bucket_cap_bytes = static_cast<int64_t>(v.first_bucket_cap_mb * 1024 * 1024);
#define DDPBENCH_COPY_DDP_FLAG(X, name, def, flag, label, help) opts.name = cfg.name;
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_COPY_DDP_FLAG, _)
#undef DDPBENCH_COPY_DDP_FLAG
  opts.runtime_stats_every_iteration = instrument_on(cfg.instruments_off, "timers");
  return opts;
}

RowDdpOptions row_ddp_options(const RunConfig& cfg, const DdpVariant& v) {
  RowDdpOptions o;
  o.bucket_cap_mb = v.bucket_cap_mb;
  o.first_bucket_cap_mb = v.first_bucket_cap_mb;
#define DDPBENCH_COPY_DDP_FLAG(X, name, def, flag, label, help) o.name = cfg.name;
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_COPY_DDP_FLAG, _)
#undef DDPBENCH_COPY_DDP_FLAG
  o.comm_hook = v.comm_hook;
  return o;
}

bool ddp_explicit_cap_caps_first_bucket() { return compat::kExplicitBucketCapCapsFirstBucket; }

void check_ddp_settings_supported(const RunConfig& cfg) {
  if (cfg.skip_all_reduce_unused_params && !compat::kReducerSkipsUnusedParams)
    throw UsageError(fmt::format(
        "--skip-all-reduce-unused-params needs a torch whose DDP has skip_all_reduce_unused_params (2.7+), and "
        "this build links torch {}; drop the flag or build against a newer libtorch",
        TORCH_VERSION));
}

bool default_zero_grad_set_to_none() { return compat::kZeroGradSetToNoneByDefault; }

bool zero_grad_set_to_none(const RunConfig& cfg) {
  return cfg.zero_grad_set_to_none.value_or(default_zero_grad_set_to_none());
}

void Trainer::zero_grad() { zero_grads(parameters(), set_to_none_); }

torch::Tensor Trainer::forward_backward(StepTimer* timer) {
  zero_grad();
  if (timer) timer->mark();
  torch::Tensor loss;
  for (int k = 0; k < grad_accum_; ++k) {
    const bool sync = k == grad_accum_ - 1;  // the micro-steps before the last run under no_sync
    {
      AutocastScope autocast(device_, precision_);
      auto out = ddp_       ? ddp_->forward(batch_.input, sync)
                 : sharded_ ? sharded_->forward(batch_.input)
                            : model_->forward(batch_.input);
      if (timer) timer->mark();
      loss = model_->loss(out, batch_.target);
      if (grad_accum_ > 1) loss = loss / grad_accum_;
    }
    if (timer) timer->mark();
    if (scaler_) scaler_->scale(loss).backward();
    else loss.backward();
    if (sharded_) sharded_->finish_backward();
    if (timer) timer->mark();
  }
  return loss;
}

StepPhases Trainer::phases(const StepTimer& timer, double step_s) const {
  const auto& m = timer.marks_s();
  StepPhases p;
  if (m.size() != static_cast<size_t>(1 + 3 * grad_accum_)) return p;  // not marked (or beyond kMaxMarks)
  p.zero_grad_s = m[0];
  for (int k = 0; k < grad_accum_; ++k) {
    const size_t f = 2 + 3 * static_cast<size_t>(k);  // the loss's end
    p.forward_s += m[f] - m[f - 2];
    p.backward_s += m[f + 1] - m[f];
  }
  p.last_backward_s = m.back() - m[m.size() - 2];
  p.last_loss_s = m[m.size() - 2] - m[m.size() - 3];
  p.optimizer_s = step_s - m.back();
  p.complete = true;
  return p;
}

void Trainer::set_sharded(std::unique_ptr<ShardedDataParallel> sharded) {
  if (ddp_ || grad_accum_ != 1 || scaler_)
    throw std::invalid_argument("a sharded strategy needs a Trainer without DDP, grad_accum 1 and no fp16 scaling");
  sharded_ = std::move(sharded);
}

ModelStateBytes Trainer::model_state_bytes() {
  return sharded_ ? sharded_->model_state_bytes() : ddpbench::model_state_bytes(model_->parameters(), *optimizer_);
}

void Trainer::optimizer_step() {
  if (sharded_) {
    sharded_->optimizer_step();
    return;
  }
  if (!scaler_) {
    optimizer_->step();
    return;
  }
  if (scaler_->unscale(parameters())) optimizer_->step();
  scaler_->update();
}

torch::Tensor Trainer::step(StepTimer* timer) {
  auto loss = forward_backward(timer);
  optimizer_step();
  return loss;
}

torch::Tensor Trainer::infer() {
  if (model_->is_training()) model_->eval();
  torch::NoGradGuard no_grad;
  AutocastScope autocast(device_, precision_);
  return model_->forward(batch_.input);
}

GradSpread grad_spread_across_ranks(const std::vector<torch::Tensor>& params,
                                    const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                    std::chrono::milliseconds timeout) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return {};
  const auto [hi, lo] = max_min_across_ranks(grads, pg, timeout);  // engine/dist/collectives
  GradSpread s;
  s.max_abs_diff = (hi - lo).max().item<double>();
  s.max_abs_grad = std::max(hi.abs().max().item<double>(), lo.abs().max().item<double>());
  return s;
}

}  // namespace ddpbench
