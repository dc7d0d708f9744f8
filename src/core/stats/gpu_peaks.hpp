// Dense peak throughput of GPUs per precision, from NVIDIA's datasheets, for model
// FLOPs utilisation (MFU). Torch-free.
#pragma once

#include <optional>
#include <string>

namespace ddpbench {

/// One GPU model's dense (no structured sparsity) peaks in TFLOP/s, and where they come from.
struct GpuPeak {
  const char* match;              ///< substring of the CUDA device name that identifies it
  const char* label;              ///< e.g. "H100 SXM5"
  double fp32, tf32, fp16, bf16;  ///< 0 where the GPU has no such unit or NVIDIA publishes no figure
  const char* source;
};

/// The entry whose `match` occurs in `device_name` (most specific first), or nullptr.
const GpuPeak* find_gpu_peak(const std::string& device_name);

/// Dense peak TFLOP/s of `device_name` for an arithmetic unit: "fp32" -> FP32 (non-
/// tensor-core), "tf32" -> TF32 tensor cores, "fp16" -> FP16 tensor cores (FP32
/// accumulate), "bf16" -> BF16 tensor cores. Empty for an unknown GPU or a unit it has
/// no published figure for: no MFU rather than a guess.
std::optional<double> peak_tflops(const std::string& device_name, const std::string& unit);

/// The peak an MFU divides by: the fastest unit the run's math lets the GPU use.
struct PeakBasis {
  std::string unit;   ///< "fp32", "tf32", "fp16" or "bf16": the peak_tflops unit
  std::string label;  ///< for people, e.g. "TF32 dense peak (cuDNN may use TF32)"
};

/// Which peak a run's MFU divides by, from its --precision and the math in effect
/// (environment.math): fp16/bf16 -> that tensor-core peak; tf32 -> TF32; fp32 and
/// fp32-strict -> TF32 when cuDNN or cuBLAS may use TF32 (PyTorch's default lets cuDNN
/// convolutions do so), else FP32. Dividing by the fastest unit allowed keeps MFU an
/// honest lower bound: a convolution net under PyTorch's default math runs on TF32 tensor
/// cores, so an FP32 denominator would overstate it.
PeakBasis mfu_basis(const std::string& precision, bool cudnn_allow_tf32, bool cublas_allow_tf32);

/// Training FLOPs per example from forward multiply-adds (2 FLOPs each). Full training:
/// forward + backward = 3 x forward = 6 x MACs (the "6 N" convention of Kaplan et al.
/// 2020, arXiv:2001.08361, applied per layer; Chowdhery et al. 2022, arXiv:2204.02311,
/// App. B). Frozen backbone (`head_macs` > 0): the backbone runs forward only (2 x its
/// MACs); the head forward (2x), its weight gradients (2x) and its input gradients (2x)
/// except for its first layer, whose input (the frozen features) needs none:
/// 2 (total - head) + 6 head - 2 head_first_layer.
double training_flops_per_example(double forward_macs, double head_macs = 0, double head_first_layer_macs = 0);

/// Achieved TFLOP/s per GPU: training FLOPs per example x examples/s per GPU / 1e12.
/// MFU (model FLOPs utilisation) is this over peak_tflops.
double achieved_tflops(double train_flops_per_example, double ex_per_s_per_gpu);

}  // namespace ddpbench
