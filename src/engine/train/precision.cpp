#include "engine/train/precision.hpp"

#include <ATen/Context.h>
#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_amp_update_scale.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>

#include "engine/compat.hpp"

namespace ddpbench {

nlohmann::json math_json(const MathModes& m) {
  return {{"cudnn_allow_tf32", m.cudnn_allow_tf32},
          {"cublas_allow_tf32", m.cublas_allow_tf32},
          {"cudnn_benchmark", m.cudnn_benchmark},
          {"fused_attention", compat::kHasFusedAttention}};
}

MathModes math_modes_for(const PrecisionConfig& cfg) {
  const auto& ctx = at::globalContext();
  MathModes m{ctx.allowTF32CuBLAS(), ctx.allowTF32CuDNN(), cfg.cudnn_benchmark};
  if (cfg.precision == "fp32-strict" || cfg.precision == "tf32")
    m.cublas_allow_tf32 = m.cudnn_allow_tf32 = cfg.precision == "tf32";
  return m;
}

MathModes apply_math_modes(const PrecisionConfig& cfg) {
  const MathModes m = math_modes_for(cfg);
  auto& ctx = at::globalContext();
  // Only what changes: a job that asks for PyTorch's defaults leaves them untouched.
  if (m.cublas_allow_tf32 != ctx.allowTF32CuBLAS()) ctx.setAllowTF32CuBLAS(m.cublas_allow_tf32);
  if (m.cudnn_allow_tf32 != ctx.allowTF32CuDNN()) ctx.setAllowTF32CuDNN(m.cudnn_allow_tf32);
  ctx.setBenchmarkCuDNN(m.cudnn_benchmark);
  return {ctx.allowTF32CuBLAS(), ctx.allowTF32CuDNN(), ctx.benchmarkCuDNN()};
}

AutocastScope::AutocastScope(const c10::Device& device, const std::string& precision) : device_(device) {
  if (precision != "fp16" && precision != "bf16") return;
  compat::enable_autocast(device_, precision == "fp16" ? at::kHalf : at::kBFloat16);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  at::autocast::decrement_nesting();
  compat::disable_autocast(device_);  // also clears the cast-weight cache
}

LossScaler::LossScaler(const c10::Device& device, double init_scale, double growth_factor, double backoff_factor,
                       int64_t growth_interval)
    : scale_(at::full({1}, init_scale, at::TensorOptions().dtype(at::kFloat).device(device))),
      growth_tracker_(at::zeros({1}, at::TensorOptions().dtype(at::kInt).device(device))),
      found_inf_(at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(device))),
      growth_factor_(growth_factor),
      backoff_factor_(backoff_factor),
      growth_interval_(growth_interval) {}

torch::Tensor LossScaler::scale(const torch::Tensor& loss) const { return loss * scale_.to(loss.dtype()); }

bool LossScaler::unscale(const std::vector<torch::Tensor>& params) {
  std::vector<at::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.mutable_grad());
  found_inf_.zero_();
  const auto inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  if (!grads.empty()) at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
  last_finite_ = found_inf_.item<float>() == 0.0f;
  if (!last_finite_) ++skipped_;
  return last_finite_;
}

void LossScaler::update() {
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, growth_factor_, backoff_factor_, growth_interval_);
}

double LossScaler::current_scale() const { return scale_.item<double>(); }

void to_channels_last(Model& model) {
  torch::NoGradGuard ng;
  auto convert = [](torch::Tensor& t) {
    if (t.dim() != 4) return;
    auto nhwc = at::empty(t.sizes(), t.options().memory_format(at::MemoryFormat::ChannelsLast));
    nhwc.copy_(t);
    t.set_data(nhwc);
  };
  for (auto& p : model.parameters()) convert(p);
  for (auto& b : model.buffers()) convert(b);
}

}  // namespace ddpbench
