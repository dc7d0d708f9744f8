#include "core/stats/gpu_peaks.hpp"

#include <vector>

namespace ddpbench {
namespace {

// Dense figures; where NVIDIA prints tensor-core numbers "with sparsity", half of them.
// More specific matches come first ("H100 NVL" before "H100").
const std::vector<GpuPeak>& table() {
  static const std::vector<GpuPeak> t = {
      {"V100-SXM2", "V100 SXM2", 15.7, 0, 125, 0, "NVIDIA V100 Tensor Core GPU datasheet (Volta has no TF32/BF16)"},
      {"V100-PCIE", "V100 PCIe", 14, 0, 112, 0, "NVIDIA V100 Tensor Core GPU datasheet (Volta has no TF32/BF16)"},
      {"A100", "A100 (SXM4 and PCIe)", 19.5, 156, 312, 312,
       "NVIDIA A100 Tensor Core GPU datasheet, nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (dense column)"},
      {"H100 NVL", "H100 NVL", 60, 417.5, 835.5, 835.5,
       "NVIDIA H100 NVL product brief PB-11773-001_v01 (sparsity figures halved)"},
      {"H100 PCIe", "H100 PCIe", 51, 378, 756.5, 756.5,
       "NVIDIA H100 datasheet, PCIe column (sparsity figures halved); H100 architecture whitepaper table 1"},
      {"H100", "H100 SXM5", 67, 494.5, 989.5, 989.5,
       "NVIDIA H100 product page, SXM column (sparsity figures halved); H100 architecture whitepaper table 1"},
      {"H200 NVL", "H200 NVL (no figures used)", 0, 0, 0, 0, "not in the table: no dense figures checked"},
      {"H200", "H200 SXM", 67, 494.5, 989.5, 989.5, "NVIDIA H200 product page (sparsity figures halved)"},
      {"GB200", "B200 in GB200 (no figures used)", 0, 0, 0, 0, "not in the table: differs from HGX B200"},
      {"B200", "B200 (HGX)", 75, 1100, 2250, 2250, "NVIDIA HGX B200 datasheet (sparsity figures halved)"},
      {"L40S", "L40S", 91.6, 183, 362.05, 362.05, "NVIDIA L40S product page and datasheet (dense column)"},
      {"RTX 6000 Ada", "RTX 6000 Ada", 91.1, 0, 0, 0,
       "NVIDIA RTX 6000 Ada datasheet (FP32 only; no dense tensor-core figures published)"},
      {"RTX PRO 6000 Blackwell Max-Q", "RTX PRO 6000 Blackwell Max-Q", 109.7, 219.5, 438.9, 438.9,
       "NVIDIA RTX Blackwell PRO GPU Architecture v1.0, appendix A"},
      {"RTX PRO 6000 Blackwell Server", "RTX PRO 6000 Blackwell Server", 120, 0, 0, 0,
       "NVIDIA RTX PRO 6000 Blackwell Server Edition page (FP32; tensor figures not labelled dense)"},
      {"RTX PRO 6000 Blackwell", "RTX PRO 6000 Blackwell Workstation", 126.0, 251.9, 503.8, 503.8,
       "NVIDIA RTX Blackwell PRO GPU Architecture v1.0, appendix A"},
  };
  return t;
}

}  // namespace

const GpuPeak* find_gpu_peak(const std::string& device_name) {
  for (const auto& p : table())
    if (device_name.find(p.match) != std::string::npos) return &p;
  return nullptr;
}

std::optional<double> peak_tflops(const std::string& device_name, const std::string& unit) {
  const GpuPeak* p = find_gpu_peak(device_name);
  if (!p) return std::nullopt;
  double v = 0;
  if (unit == "fp32") v = p->fp32;
  else if (unit == "tf32") v = p->tf32;
  else if (unit == "fp16") v = p->fp16;
  else if (unit == "bf16") v = p->bf16;
  if (!(v > 0)) return std::nullopt;
  return v;
}

PeakBasis mfu_basis(const std::string& precision, bool cudnn_allow_tf32, bool cublas_allow_tf32) {
  if (precision == "fp16") return {"fp16", "FP16 dense tensor-core peak"};
  if (precision == "bf16") return {"bf16", "BF16 dense tensor-core peak"};
  if (precision == "tf32") return {"tf32", "TF32 dense tensor-core peak"};
  if (cudnn_allow_tf32 && cublas_allow_tf32) return {"tf32", "TF32 dense tensor-core peak (TF32 allowed)"};
  if (cudnn_allow_tf32) return {"tf32", "TF32 dense tensor-core peak (cuDNN may use TF32 for convolutions)"};
  if (cublas_allow_tf32) return {"tf32", "TF32 dense tensor-core peak (cuBLAS may use TF32 for matmuls)"};
  return {"fp32", "FP32 peak (TF32 off)"};
}

double training_flops_per_example(double forward_macs, double head_macs, double head_first_layer_macs) {
  if (head_macs <= 0) return 6.0 * forward_macs;
  return 2.0 * (forward_macs - head_macs) + 6.0 * head_macs - 2.0 * head_first_layer_macs;
}

double achieved_tflops(double train_flops_per_example, double ex_per_s_per_gpu) {
  return train_flops_per_example * ex_per_s_per_gpu / 1e12;
}

}  // namespace ddpbench
