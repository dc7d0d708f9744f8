// Numeric precision of training: math modes (TF32, cuDNN autotuning), autocast mixed
// precision, dynamic loss scaling for fp16, channels_last memory format.
#pragma once

#include <c10/core/Device.h>
#include <torch/types.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/models/model.hpp"

namespace ddpbench {

/// The process-wide math settings of a run (channels_last is per model: to_channels_last).
struct PrecisionConfig {
  std::string precision = "fp32";  ///< fp32 | fp32-strict | tf32 | fp16 | bf16
  bool cudnn_benchmark = true;
};

/// Sets the process-wide math modes: fp32 leaves PyTorch's defaults as an unmodified job
/// has them (cuDNN may use TF32 for convolutions, cuBLAS matmuls stay fp32: torch >= 1.12's
/// torch.backends.cudnn.allow_tf32 = True, torch.backends.cuda.matmul.allow_tf32 = False);
/// fp32-strict turns TF32 off for both (true IEEE fp32); tf32 turns it on for both;
/// fp16/bf16 keep PyTorch's defaults for their fp32 leftovers. cuDNN benchmark
/// (autotuning) per `cfg`. Returns what is now in effect, for the result file.
struct MathModes {
  bool cublas_allow_tf32, cudnn_allow_tf32, cudnn_benchmark;
};
MathModes apply_math_modes(const PrecisionConfig& cfg);

/// What apply_math_modes(cfg) sets, without setting it: the flags `cfg` changes, and this
/// process's current ones for the rest (PyTorch's defaults in a process that set none).
MathModes math_modes_for(const PrecisionConfig& cfg);

/// The result file's environment.math: {"cudnn_allow_tf32", "cublas_allow_tf32",
/// "cudnn_benchmark", "fused_attention" (the linked torch has scaled_dot_product_attention)}.
nlohmann::json math_json(const MathModes& m);

/// Autocast on `device` for the lifetime of the object when `precision` is fp16 or bf16
/// (torch.autocast(device_type, dtype) around forward and loss, as PyTorch's AMP recipe).
class AutocastScope {
 public:
  AutocastScope(const c10::Device& device, const std::string& precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::Device device_;
  bool active_ = false;
};

/// Dynamic loss scaling with ATen's AMP kernels, the algorithm of torch.amp.GradScaler:
/// the loss is multiplied by `scale` before backward; after backward (and DDP's
/// allreduce, so every rank sees the same gradients) the gradients are unscaled in place
/// and checked for inf/NaN (at::_amp_foreach_non_finite_check_and_unscale_); a step with
/// a non-finite gradient is skipped; at::_amp_update_scale_ then halves the scale after
/// such a step and doubles it after `growth_interval` clean steps.
class LossScaler {
 public:
  /// GradScaler's defaults: 2^16, growth 2, backoff 0.5, interval 2000.
  explicit LossScaler(const c10::Device& device, double init_scale = 65536.0, double growth_factor = 2.0,
                      double backoff_factor = 0.5, int64_t growth_interval = 2000);
  /// loss * scale.
  torch::Tensor scale(const torch::Tensor& loss) const;
  /// Unscales the gradients of `params` in place; true when all are finite (the
  /// optimizer may step). Synchronises with the device to read the flag, as Python does.
  bool unscale(const std::vector<torch::Tensor>& params);
  /// Updates the scale from the last unscale() (halve on overflow, grow after the interval).
  void update();
  double current_scale() const;
  int64_t skipped_steps() const { return skipped_; }
  /// Whether the last unscale() found only finite gradients (true before the first).
  bool last_step_finite() const { return last_finite_; }

 private:
  torch::Tensor scale_, growth_tracker_, found_inf_;
  double growth_factor_, backoff_factor_;
  int64_t growth_interval_;
  int64_t skipped_ = 0;
  bool last_finite_ = true;
};

/// Converts the model's 4-D parameters and buffers to channels_last, as
/// module.to(memory_format=torch.channels_last), with the canonical channels_last
/// strides even where the standard ones would also do (1x1 kernels): cuDNN produces
/// gradients with those, and DDP's Reducer wants gradient strides equal to the
/// parameter's ("Grad strides do not match bucket view strides" otherwise).
void to_channels_last(Model& model);

}  // namespace ddpbench
