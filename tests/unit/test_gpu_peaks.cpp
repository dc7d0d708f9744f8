// Peak table lookups and the MFU arithmetic.
#include <gtest/gtest.h>

#include "core/stats/gpu_peaks.hpp"

namespace ddpbench {
namespace {

TEST(GpuPeaks, DeviceNamesAsCudaReportsThem) {
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H100 80GB HBM3", "bf16"), 989.5);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H100 80GB HBM3", "fp32"), 67);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H100 PCIe", "tf32"), 378);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H100 NVL", "fp16"), 835.5);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H200", "bf16"), 989.5);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA A100-SXM4-80GB", "tf32"), 156);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA A100 80GB PCIe", "bf16"), 312);
  EXPECT_DOUBLE_EQ(*peak_tflops("Tesla V100-SXM2-32GB", "fp16"), 125);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA B200", "bf16"), 2250);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA L40S", "fp16"), 362.05);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "bf16"), 503.8);
}

TEST(GpuPeaks, NoGuessForUnknownOrUnpublished) {
  EXPECT_FALSE(peak_tflops("NVIDIA GeForce RTX 4090", "bf16").has_value());         // not in the table
  EXPECT_FALSE(peak_tflops("Tesla V100-SXM2-16GB", "bf16").has_value());            // Volta has no bf16
  EXPECT_FALSE(peak_tflops("NVIDIA RTX 6000 Ada Generation", "bf16").has_value());  // no dense figure published
  EXPECT_FALSE(peak_tflops("NVIDIA H200 NVL", "bf16").has_value());
  EXPECT_FALSE(peak_tflops("NVIDIA H100 80GB HBM3", "int8").has_value());
  EXPECT_EQ(find_gpu_peak("cpu"), nullptr);
}

TEST(GpuPeaks, MfuDividesByTheFastestUnitTheMathAllows) {
  // PyTorch's default math (cuDNN TF32 on, cuBLAS off): convolutions run on TF32 tensor cores.
  EXPECT_EQ(mfu_basis("fp32", true, false).unit, "tf32");
  EXPECT_EQ(mfu_basis("fp32-strict", false, false).unit, "fp32");
  EXPECT_EQ(mfu_basis("fp32", false, false).unit, "fp32");  // an old file's fp32 with TF32 off
  EXPECT_EQ(mfu_basis("fp32", false, true).unit, "tf32");
  EXPECT_EQ(mfu_basis("tf32", true, true).unit, "tf32");
  EXPECT_EQ(mfu_basis("bf16", true, false).unit, "bf16");
  EXPECT_EQ(mfu_basis("fp16", false, false).unit, "fp16");
  EXPECT_NE(mfu_basis("fp32", true, false).label.find("cuDNN"), std::string::npos);
}

TEST(GpuPeaks, TrainingFlopsAndAchievedTflops) {
  // resnet50: 4.0892 GMACs forward; 1000 ex/s -> 6 * 4.0892e9 * 1000 / 1e12 = 24.535 TFLOP/s.
  EXPECT_DOUBLE_EQ(training_flops_per_example(4.0892e9), 6 * 4.0892e9);
  EXPECT_NEAR(achieved_tflops(training_flops_per_example(4.0892e9), 1000), 24.5352, 1e-4);
  // Frozen backbone of 1000 MACs behind a 300-MAC head whose first layer has 200:
  // backbone forward 2*700, head 6*300, minus the first layer's input gradient 2*200.
  EXPECT_DOUBLE_EQ(training_flops_per_example(1000, 300, 200), 2 * 700 + 6 * 300 - 2 * 200);
}

}  // namespace
}  // namespace ddpbench
