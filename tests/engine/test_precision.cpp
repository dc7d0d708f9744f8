// Mixed precision: bf16 autocast trains on the CPU with gradients and updates close to
// fp32's (and a wrong backward would not pass); math modes follow the precision and are
// restored after the test; the fp16 loss scaler skips overflowing steps and adapts its
// scale, with ATen's AMP kernels.
#include <gtest/gtest.h>

#include <ATen/Context.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "engine/models/registry.hpp"
#include "engine/timing.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {

/// How far a set of tensors (one per parameter) is from a reference set, as relative L2
/// errors computed in double: over all tensors as one vector, and the worst single tensor.
struct Deviation {
  double global = 0;     ///< ||a - b|| / ||b|| over the concatenation of all tensors
  double worst = 0;      ///< max over tensors i of ||a_i - b_i|| / ||b_i||
  double best = 0;       ///< min over tensors i of the same (for the negative controls)
  std::string worst_of;  ///< name of the worst tensor
};

/// Deviation of `a` from the reference `b`; `names` names the tensors (same order).
Deviation deviation(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                    const std::vector<std::string>& names) {
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(a.size(), names.size());
  Deviation d;
  d.best = std::numeric_limits<double>::infinity();
  double diff2 = 0, ref2 = 0;
  for (size_t i = 0; i < std::min({a.size(), b.size(), names.size()}); ++i) {
    const auto x = a[i].detach().to(at::kDouble), y = b[i].detach().to(at::kDouble);
    const double di = (x - y).pow(2).sum().item<double>(), ri = y.pow(2).sum().item<double>();
    diff2 += di;
    ref2 += ri;
    const double rel = ri > 0 ? std::sqrt(di / ri) : std::sqrt(di);
    if (rel > d.worst) {
      d.worst = rel;
      d.worst_of = names[i];
    }
    d.best = std::min(d.best, rel);
  }
  d.global = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return d;
}

/// Copies of the gradients of `params` (after a backward).
std::vector<torch::Tensor> grads_of(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> g;
  for (const auto& p : params) g.push_back(p.grad().detach().clone());
  return g;
}

/// Copies of `params` (their values now).
std::vector<torch::Tensor> values_of(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> v;
  for (const auto& p : params) v.push_back(p.detach().clone());
  return v;
}

/// params - start, per tensor: what the optimizer steps changed.
std::vector<torch::Tensor> updates_since(const std::vector<torch::Tensor>& params,
                                         const std::vector<torch::Tensor>& start) {
  std::vector<torch::Tensor> d;
  for (size_t i = 0; i < params.size(); ++i) d.push_back(params[i].detach() - start[i]);
  return d;
}

// Tolerances of bf16 against fp32. bf16 keeps 8 significant bits, so rounding a value to
// bf16 is off by at most u = 2^-8 = 0.39% of it. Under autocast each convolution and
// linear layer rounds its inputs to bf16 (and its output) in the forward pass and again
// in the backward pass; with fp32 accumulation, a sum of products of rounded factors is
// off by up to ~2u * sum|terms| / |sum of terms|. For most of a gradient that ratio is
// small, and ~20 layers of independent roundings add up to a few percent: the tolerance
// for the whole gradient (all parameters as one vector) is 15% (~40u). Where the terms
// cancel the ratio is large (the weight gradients of the first convolution and of some
// BatchNorm scales sum random-sign products over a thousand or more positions): one
// tensor may be off by far more. Measured (resnet18, batch 4, 64x64): torch 1.13 / 2.11 on
// earlier machines, whole gradient 5.8% / 6.2%, worst tensor 19% / 19%, updates after three
// steps 5.6% / 5.6%, worst tensor 24% / 18%; torch 1.13 on an AVX2-only AMD EPYC (no
// AVX-512; oneDNN's bf16 kernels differ by ISA), whole gradient 19.2%, worst tensor 57%,
// updates 18.0%, worst tensor 78%. Hence 30% for the whole gradient and 90% for one tensor.
// A wrong backward is still outside both: a gradient doubled or zeroed is off by 100% in
// every tensor, negated by 200% (the negative controls below).
// BatchNorm uses its running statistics (eval mode): with batch statistics the same
// comparison measured 37% for the whole gradient on both torch versions and at batches of
// 4 to 32, which would leave no room to tell a wrong backward from rounding.
constexpr double kBf16GlobalTol = 0.30, kBf16TensorTol = 0.90;

TEST(Precision, Bf16AutocastTrainsOnTheCpuCloseToFp32) {
  const c10::Device cpu(c10::kCPU);
  torch::manual_seed(3);
  auto m32 = make_model("resnet18", 10);
  torch::manual_seed(3);
  auto m16 = make_model("resnet18", 10);
  torch::manual_seed(3);
  auto mbad = make_model("resnet18", 10);            // negative control: bf16 with a wrong backward
  for (auto* m : {&m32, &m16, &mbad}) (*m)->eval();  // BatchNorm with running statistics (see above)
  const auto batch = make_synthetic_batch(4, 64, 10, cpu, 11);
  Trainer t32(m32, nullptr, batch, cpu, "fp32"), t16(m16, nullptr, batch, cpu, "bf16"),
      tbad(mbad, nullptr, batch, cpu, "bf16");
  const auto names = m32->named_parameters().keys();
  const auto start = values_of(t32.parameters());
  ASSERT_EQ(deviation(values_of(t16.parameters()), start, names).worst, 0.0);  // same initial weights

  // One backward: the gradients within the tolerances of fp32's.
  const double l32 = t32.forward_backward().item<double>(), l16 = t16.forward_backward().item<double>();
  ASSERT_TRUE(std::isfinite(l16));
  EXPECT_NEAR(l16, l32, 0.05 * l32);
  const auto g32 = grads_of(t32.parameters()), g16 = grads_of(t16.parameters());
  const Deviation dg = deviation(g16, g32, names);
  EXPECT_LT(dg.global, kBf16GlobalTol);
  EXPECT_LT(dg.worst, kBf16TensorTol) << "gradient of " << dg.worst_of;
  // Negative controls: a backward that doubles, drops or negates the gradients fails both
  // assertions, in every tensor.
  std::vector<torch::Tensor> doubled, zeroed, negated;
  for (const auto& g : g16) {
    doubled.push_back(2 * g);
    zeroed.push_back(torch::zeros_like(g));
    negated.push_back(-g);
  }
  for (const auto& wrong : {doubled, zeroed, negated}) {
    const Deviation d = deviation(wrong, g32, names);
    EXPECT_GT(d.global, kBf16GlobalTol);
    EXPECT_GT(d.best, kBf16TensorTol);
  }

  // Three SGD steps (momentum, weight decay): the parameter updates within the tolerances.
  t32.optimizer_step();
  t16.optimizer_step();
  for (int step = 1; step < 3; ++step) {
    const double a = t32.step().item<double>(), b = t16.step().item<double>();
    ASSERT_TRUE(std::isfinite(b));
    EXPECT_NEAR(b, a, 0.05 * a) << "step " << step;
  }
  const auto u32 = updates_since(t32.parameters(), start);
  const Deviation du = deviation(updates_since(t16.parameters(), start), u32, names);
  EXPECT_LT(du.global, kBf16GlobalTol);
  EXPECT_LT(du.worst, kBf16TensorTol) << "update of " << du.worst_of;
  // Negative control: the same bf16 training with every gradient doubled after backward
  // moves the parameters too far.
  for (int step = 0; step < 3; ++step) {
    tbad.forward_backward();
    for (const auto& p : tbad.parameters()) p.grad().mul_(2);
    tbad.optimizer_step();
  }
  const Deviation dbad = deviation(updates_since(tbad.parameters(), start), u32, names);
  EXPECT_GT(dbad.global, kBf16GlobalTol);
  EXPECT_GT(dbad.worst, kBf16TensorTol);

  {  // Autocast is really on inside the scope: convolutions compute in bfloat16 ...
    AutocastScope scope(cpu, "bf16");
    EXPECT_EQ(m16->forward_features(batch.input).scalar_type(), at::kBFloat16);
  }
  // ... and off again after it.
  EXPECT_EQ(m16->forward_features(batch.input).scalar_type(), at::kFloat);
  EXPECT_EQ(t16.scaler(), nullptr);  // bf16 needs no loss scaling
}

/// The process-wide math settings of at::globalContext() that a precision mode may change
/// and that later tests in the same process would inherit.
struct MathState {
  at::Float32MatmulPrecision matmul;  ///< cuBLAS TF32 is on unless this is HIGHEST
  bool cudnn_tf32, cudnn_benchmark, cudnn_deterministic, cudnn_enabled, mkldnn_enabled;
  bool deterministic_algorithms, deterministic_warn_only;

  static MathState read() {
    auto& c = at::globalContext();
    return {c.float32MatmulPrecision(),  c.allowTF32CuDNN(),
            c.benchmarkCuDNN(),          c.deterministicCuDNN(),
            c.userEnabledCuDNN(),        c.userEnabledMkldnn(),
            c.deterministicAlgorithms(), c.deterministicAlgorithmsWarnOnly()};
  }
  /// Makes this the process's state.
  void write() const {
    auto& c = at::globalContext();
    c.setFloat32MatmulPrecision(matmul == at::Float32MatmulPrecision::HIGHEST ? "highest"
                                : matmul == at::Float32MatmulPrecision::HIGH  ? "high"
                                                                              : "medium");
    c.setAllowTF32CuDNN(cudnn_tf32);
    c.setBenchmarkCuDNN(cudnn_benchmark);
    c.setDeterministicCuDNN(cudnn_deterministic);
    c.setUserEnabledCuDNN(cudnn_enabled);
    c.setUserEnabledMkldnn(mkldnn_enabled);
    c.setDeterministicAlgorithms(deterministic_algorithms, deterministic_warn_only);
  }
  bool operator==(const MathState& o) const {
    return matmul == o.matmul && cudnn_tf32 == o.cudnn_tf32 && cudnn_benchmark == o.cudnn_benchmark &&
           cudnn_deterministic == o.cudnn_deterministic && cudnn_enabled == o.cudnn_enabled &&
           mkldnn_enabled == o.mkldnn_enabled && deterministic_algorithms == o.deterministic_algorithms &&
           deterministic_warn_only == o.deterministic_warn_only;
  }
};

std::ostream& operator<<(std::ostream& os, const MathState& s) {
  return os << "{matmul_precision " << static_cast<int>(s.matmul) << ", cudnn_tf32 " << s.cudnn_tf32
            << ", cudnn_benchmark " << s.cudnn_benchmark << ", cudnn_deterministic " << s.cudnn_deterministic
            << ", cudnn_enabled " << s.cudnn_enabled << ", mkldnn_enabled " << s.mkldnn_enabled
            << ", deterministic_algorithms " << s.deterministic_algorithms << " (warn only "
            << s.deterministic_warn_only << ")}";
}

/// Saves the MathState at construction and restores it at scope exit, so a test that
/// calls apply_math_modes does not leak TF32 or cuDNN settings into the tests after it
/// (all of a binary's tests share one process when it is run directly).
class MathStateGuard {
 public:
  MathStateGuard() : saved_(MathState::read()) {}
  ~MathStateGuard() { saved_.write(); }
  MathStateGuard(const MathStateGuard&) = delete;
  MathStateGuard& operator=(const MathStateGuard&) = delete;

 private:
  MathState saved_;
};

TEST(Precision, MathModesFollowThePrecision) {
  const MathState before = MathState::read();
  {
    MathStateGuard guard;
    // fp32 is PyTorch's default math: it leaves the TF32 flags as the process has them
    // (an unmodified job's: cuDNN TF32 allowed, cuBLAS not).
    auto m = apply_math_modes({"fp32", false});
    EXPECT_EQ(m.cudnn_allow_tf32, before.cudnn_tf32);
    EXPECT_EQ(m.cublas_allow_tf32, before.matmul != at::Float32MatmulPrecision::HIGHEST);
    EXPECT_TRUE(m.cudnn_allow_tf32) << "libtorch's default lets cuDNN use TF32";
    EXPECT_FALSE(m.cublas_allow_tf32) << "libtorch's default keeps cuBLAS matmuls in fp32";
    m = apply_math_modes({"fp32-strict", false});
    EXPECT_FALSE(m.cublas_allow_tf32);
    EXPECT_FALSE(m.cudnn_allow_tf32);
    EXPECT_FALSE(m.cudnn_benchmark);
    m = apply_math_modes({"tf32", true});
    EXPECT_TRUE(m.cublas_allow_tf32);
    EXPECT_TRUE(m.cudnn_allow_tf32);
    EXPECT_TRUE(m.cudnn_benchmark);
    // What it reports is what is in effect ...
    auto& ctx = at::globalContext();
    EXPECT_EQ(m.cublas_allow_tf32, ctx.allowTF32CuBLAS());
    EXPECT_EQ(m.cudnn_allow_tf32, ctx.allowTF32CuDNN());
    EXPECT_EQ(m.cudnn_benchmark, ctx.benchmarkCuDNN());
    // ... and it changes nothing else (determinism, cuDNN and oneDNN switches).
    MathState others = MathState::read();
    others.matmul = before.matmul;
    others.cudnn_tf32 = before.cudnn_tf32;
    others.cudnn_benchmark = before.cudnn_benchmark;
    EXPECT_EQ(others, before);
  }
  EXPECT_EQ(MathState::read(), before);  // the guard put everything back
}

// math_modes_for says what apply_math_modes sets, and sets nothing: find-max-bs records
// the trials' math with it in a process that never applied them.
TEST(Precision, MathModesForPredictsApplyWithoutSettingAnything) {
  const MathState before = MathState::read();
  MathStateGuard guard;
  for (const char* precision : {"fp32", "fp32-strict", "tf32", "bf16"}) {
    for (const bool benchmark : {false, true}) {
      SCOPED_TRACE(std::string(precision) + (benchmark ? " benchmark" : ""));
      before.write();
      const MathModes predicted = math_modes_for({precision, benchmark});
      EXPECT_EQ(MathState::read(), before);
      const MathModes applied = apply_math_modes({precision, benchmark});
      EXPECT_EQ(predicted.cublas_allow_tf32, applied.cublas_allow_tf32);
      EXPECT_EQ(predicted.cudnn_allow_tf32, applied.cudnn_allow_tf32);
      EXPECT_EQ(predicted.cudnn_benchmark, applied.cudnn_benchmark);
    }
  }
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
    if (dev.is_cpu())
      GTEST_SKIP() << "this torch has no CPU kernel for ATen's AMP ops (CUDA only before 2.x): "
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
  EXPECT_TRUE(
      torch::allclose(s.scale(torch::ones({1}, torch::TensorOptions().device(dev))).cpu(), torch::full({1}, 1024.0f)));
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
