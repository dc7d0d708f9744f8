// Dense peak throughput of GPUs per precision, from NVIDIA's datasheets, for model
// FLOPs utilisation (MFU). Torch-free.
#pragma once

#include <optional>
#include <string>

namespace ddpbench {

/// One GPU model's dense (no structured sparsity) peaks in TFLOP/s, and where they come from.
struct GpuPeak {
  const char* match;   ///< substring of the CUDA device name that identifies it
  const char* label;   ///< e.g. "H100 SXM5"
  double fp32, tf32, fp16, bf16;  ///< 0 where the GPU has no such unit or NVIDIA publishes no figure
  const char* source;
};

/// The entry whose `match` occurs in `device_name` (most specific first), or nullptr.
const GpuPeak* find_gpu_peak(const std::string& device_name);

/// Dense peak TFLOP/s of `device_name` for a training precision: "fp32" -> FP32 (non-
/// tensor-core; ddpbench turns TF32 off for fp32), "tf32" -> TF32 tensor cores, "fp16"
/// -> FP16 tensor cores (FP32 accumulate), "bf16" -> BF16 tensor cores. Empty for an
/// unknown GPU or a precision it has no published figure for: no MFU rather than a guess.
std::optional<double> peak_tflops(const std::string& device_name, const std::string& precision);

/// Model FLOPs utilisation: achieved / peak, where achieved TFLOP/s per GPU =
/// 3 (forward + backward) x 2 (FLOPs per multiply-add) x forward MACs per example x
/// examples/s per GPU / 1e12 (the "6 N" training-FLOPs convention, Kaplan et al. 2020,
/// arXiv:2001.08361, applied per layer; Chowdhery et al. 2022, arXiv:2204.02311, App. B).
double achieved_tflops(double forward_macs_per_example, double ex_per_s_per_gpu);

}  // namespace ddpbench
