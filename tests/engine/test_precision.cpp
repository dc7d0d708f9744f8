// Mixed precision: bf16 autocast trains on the CPU; the fp16 loss scaler skips overflowing
// steps and adapts its scale, with ATen's AMP kernels.
#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include <cmath>
#include <limits>

#include "engine/models/registry.hpp"
#include "engine/timing.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {

TEST(Precision, Bf16AutocastTrainsOnTheCpuCloseToFp32) {
  const c10::Device cpu(c10::kCPU);
  torch::manual_seed(3);
  auto m32 = make_model("resnet18", 10);
  torch::manual_seed(3);
  auto m16 = make_model("resnet18", 10);
  const auto batch = make_synthetic_batch(4, 64, 10, cpu, 11);
  Trainer t32(m32, nullptr, batch, cpu, "fp32"), t16(m16, nullptr, batch, cpu, "bf16");
  for (int step = 0; step < 2; ++step) {
    const double l32 = t32.step().item<double>(), l16 = t16.step().item<double>();
    ASSERT_TRUE(std::isfinite(l16));
    EXPECT_NEAR(l16, l32, 0.05 * l32) << "step " << step;
  }
  {  // Autocast is really on inside the scope: convolutions compute in bfloat16 ...
    AutocastScope scope(cpu, "bf16");
    EXPECT_EQ(m16->forward_features(batch.input).scalar_type(), at::kBFloat16);
  }
  // ... and off again after it.
  EXPECT_EQ(m16->forward_features(batch.input).scalar_type(), at::kFloat);
  EXPECT_EQ(t16.scaler(), nullptr);  // bf16 needs no loss scaling
}

TEST(Precision, MathModesFollowThePrecision) {
  auto m = apply_math_modes({"fp32-strict", false});
  EXPECT_FALSE(m.cublas_allow_tf32);
  EXPECT_FALSE(m.cudnn_allow_tf32);
  EXPECT_FALSE(m.cudnn_benchmark);
  m = apply_math_modes({"tf32", true});
  EXPECT_TRUE(m.cublas_allow_tf32);
  EXPECT_TRUE(m.cudnn_allow_tf32);
  EXPECT_TRUE(m.cudnn_benchmark);
}

TEST(Precision, ChannelsLastConvertsConvolutionWeights) {
  auto m = make_model("resnet18", 10);
  to_channels_last(*m);
  for (const auto& kv : m->named_parameters())
    if (kv.value().dim() == 4) EXPECT_TRUE(kv.value().is_contiguous(at::MemoryFormat::ChannelsLast)) << kv.key();
  // 1x1 kernels get the canonical NHWC strides (those cuDNN gives their gradients), not
  // the standard ones that would also count as channels_last-contiguous.
  const auto* w = m->named_parameters().find("layer2.0.downsample.0.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->strides().vec(), (std::vector<int64_t>{64, 1, 64, 64}));
}

// torch.amp.GradScaler's contract, on the GPU when there is one. ATen's AMP kernels have
// CPU implementations from torch 2.x on; torch 1.13 (Debian) has them for CUDA only.
TEST(Precision, LossScalerSkipsOverflowHalvesAndGrows) {
  const c10::Device dev = cuda_device_count() > 0 ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  LossScaler s(dev, /*init_scale=*/1024, /*growth=*/2.0, /*backoff=*/0.5, /*interval=*/2);
  auto p = torch::ones({3}, torch::TensorOptions().device(dev)).requires_grad_();
  p.mutable_grad() = torch::tensor({1.0f, std::numeric_limits<float>::infinity(), 2.0f}).to(dev);
  bool finite = true;
  try {
    finite = s.unscale({p});
  } catch (const c10::Error& e) {
    if (dev.is_cpu()) GTEST_SKIP() << "this torch has no CPU kernel for ATen's AMP ops (CUDA only before 2.x): "
                                   << std::string(e.what_without_backtrace()).substr(0, 120);
    throw;
  }
  EXPECT_FALSE(finite);
  s.update();
  EXPECT_EQ(s.current_scale(), 512.0);  // overflow: halved, step skipped
  EXPECT_EQ(s.skipped_steps(), 1);
  p.mutable_grad() = torch::tensor({512.0f, 1024.0f, 0.0f}).to(dev);
  EXPECT_TRUE(s.unscale({p}));
  EXPECT_TRUE(torch::allclose(p.grad().cpu(), torch::tensor({1.0f, 2.0f, 0.0f})));  // unscaled in place
  s.update();
  EXPECT_EQ(s.current_scale(), 512.0);  // one clean step: not yet
  p.mutable_grad() = torch::tensor({1.0f, 1.0f, 1.0f}).to(dev);
  EXPECT_TRUE(s.unscale({p}));
  s.update();
  EXPECT_EQ(s.current_scale(), 1024.0);  // two clean steps: doubled
  EXPECT_EQ(s.skipped_steps(), 1);
  EXPECT_TRUE(torch::allclose(s.scale(torch::ones({1}, torch::TensorOptions().device(dev))).cpu(),
                              torch::full({1}, 1024.0f)));
}

TEST(Precision, Fp16TrainingOnTheGpu) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "fp16 autocast and loss scaling need a GPU";
  const c10::Device gpu(c10::kCUDA, 0);
  auto m = make_model("resnet18", 10);
  m->to(gpu);
  Trainer t(m, nullptr, make_synthetic_batch(8, 64, 10, gpu, 5), gpu, "fp16");
  ASSERT_NE(t.scaler(), nullptr);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isfinite(t.step().item<double>()));
  // Early steps may overflow at GradScaler's initial 2^16: each one is skipped and halves
  // the scale; no growth within 2000 clean steps.
  const int64_t skipped = t.scaler()->skipped_steps();
  EXPECT_LT(skipped, 4);  // it recovers and trains
  EXPECT_EQ(t.scaler()->current_scale(), 65536.0 / std::pow(2.0, static_cast<double>(skipped)));
  {
    AutocastScope scope(gpu, "fp16");
    EXPECT_EQ(m->forward(torch::randn({2, 3, 64, 64}, torch::TensorOptions().device(gpu))).scalar_type(), at::kHalf);
  }
}

}  // namespace
}  // namespace ddpbench
