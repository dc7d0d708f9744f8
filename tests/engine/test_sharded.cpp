// Sharded data parallel (engine/dist/sharded) with real ranks over Gloo on 127.0.0.1, and
// activation checkpointing (engine/train/checkpoint) in-process.
#include <gtest/gtest.h>

#include <torch/nn/functional/loss.h>

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include <fstream>
#include <string>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"
#include "engine/models/registry.hpp"
#include "engine/train/checkpoint.hpp"

namespace ddpbench {
namespace {

using testutil::TempDir;

// ---- Activation checkpointing: the same gradients and BatchNorm statistics as without it.

struct Outcome {
  std::vector<torch::Tensor> grads, buffers;
  double loss = 0;
};

Outcome train_once(const std::string& name, int64_t image, bool ckpt) {
  torch::manual_seed(3);
  auto m = make_model(name, 10, image);
  m->train();
  if (ckpt) enable_activation_checkpointing(*m);
  torch::manual_seed(4);
  auto x = at::randn({2, 3, image, image});
  auto y = at::randint(0, 10, {2});
  auto loss = torch::nn::functional::cross_entropy(m->forward(x), y);
  loss.backward();
  Outcome o;
  o.loss = loss.item<double>();
  for (auto& p : m->parameters()) o.grads.push_back(p.grad().clone());
  for (auto& b : m->buffers()) o.buffers.push_back(b.clone());
  return o;
}

class Checkpointing : public ::testing::TestWithParam<std::string> {};

// Tolerance: the recompute runs the same kernels on the same inputs, so the gradients agree
// to 1e-6 of the largest gradient (fp32 rounding of a reordered accumulation at most).
TEST_P(Checkpointing, GradientsAndBatchNormStatisticsEqualThoseWithout) {
  const int64_t image = 32;
  const Outcome plain = train_once(GetParam(), image, false), ck = train_once(GetParam(), image, true);
  EXPECT_DOUBLE_EQ(plain.loss, ck.loss);
  ASSERT_EQ(plain.grads.size(), ck.grads.size());
  double diff = 0, mag = 0;
  size_t zero = 0;
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    ASSERT_TRUE(ck.grads[i].defined()) << "parameter " << i << " got no gradient under checkpointing";
    diff = std::max(diff, (plain.grads[i] - ck.grads[i]).abs().max().item<double>());
    mag = std::max(mag, plain.grads[i].abs().max().item<double>());
    zero += plain.grads[i].abs().max().item<double>() == 0;
  }
  EXPECT_GT(mag, 0.0);
  EXPECT_LE(diff, 1e-6 * mag);
  // Running statistics updated once per forward, not again in the recompute (torch.utils.checkpoint
  // would update them twice: num_batches_tracked 2 instead of 1).
  ASSERT_EQ(plain.buffers.size(), ck.buffers.size());
  for (size_t i = 0; i < plain.buffers.size(); ++i)
    EXPECT_TRUE(plain.buffers[i].equal(ck.buffers[i])) << "buffer " << i << " differs";
}

// (vit_b_16 passes too, in 35 s under load: left out for the suite's time budget.)
INSTANTIATE_TEST_SUITE_P(Models, Checkpointing, ::testing::Values("resnet18", "densenet121"));

TEST(Units, EveryFamilyExposesItsBlocks) {
  EXPECT_EQ(make_model("resnet18", 10, 32)->units().size(), 8u);     // 2+2+2+2 BasicBlocks
  EXPECT_EQ(make_model("densenet121", 10, 32)->units().size(), 7u);  // 4 dense blocks + 3 transitions
  EXPECT_EQ(make_model("alexnet", 10, 64)->units().size(), 1u);      // features
}

// ---- Sharded strategies on real ranks.

nlohmann::json run_workers(int n, const std::string& model, int image, int steps, const std::string& variants) {
  TempDir d;
  const std::string prefix = (d.path / "out").string();
  SpawnOptions o;
  o.nproc = n;
  o.argv = {DDPBENCH_SHARDED_WORKER_PATH, prefix, model, std::to_string(image), std::to_string(steps), variants};
  o.extra_env = {{"OMP_NUM_THREADS", "1"}};
  EXPECT_EQ(spawn_local_ranks(o), 0);
  nlohmann::json r0;
  for (int r = 0; r < n; ++r) {
    std::ifstream in(prefix + ".rank" + std::to_string(r) + ".json");
    EXPECT_TRUE(in.good()) << "rank " << r << " wrote no result";
    if (r == 0 && in.good()) in >> r0;
  }
  return r0;
}

int64_t pad_to(int64_t numel, int n) { return (numel + n - 1) / n * n; }

int64_t trainable_numel(torch::nn::Module& m) {
  int64_t s = 0;
  for (auto& p : m.parameters())
    if (p.requires_grad()) s += p.numel();
  return s;
}

class Sharded : public ::testing::TestWithParam<int> {};

// After 2 steps from the same model and the same per-rank batches, zero2, fsdp and (on 2 ranks;
// 3 ranks skip it to keep the suite short, checkpointing is checked alone in Checkpointing.*)
// fsdp with checkpointing hold DDP's parameters within 1e-4 of the largest |p| and within 1%
// of how far DDP moved them. Measured: 0 on 2 ranks (a two-term sum does not depend on its
// order); on 3 ranks 6e-8 after one step (fp32 rounding: the sharded reduce-scatter sums the
// three ranks in rank order, Gloo's ring allreduce in another), 2.3e-5 after three, because
// BatchNorm over 4 values of layer4's 1x1 map (32x32 input, batch 4) amplifies it. Model
// state per rank, by hand from the parameter counts (fp32, 4 bytes; flat buffers padded to a
// multiple of N): DDP 3 x 4P; zero2 4 pad(P) + 2 x 4 pad(P)/N; fsdp 3 x sum over the units and
// the root of 4 pad(P_u)/N.
TEST_P(Sharded, ParametersEqualDdpsAndModelStateShrinksAsOneOverN) {
  const int n = GetParam();
  const std::string model = "resnet18";
  const std::vector<std::string> variants =
      n == 2 ? std::vector<std::string>{"zero2", "fsdp", "fsdp+ckpt"} : std::vector<std::string>{"zero2", "fsdp"};
  const auto r = run_workers(n, model, 32, 2, n == 2 ? "zero2,fsdp,fsdp+ckpt" : "zero2,fsdp");
  ASSERT_FALSE(r.is_null());
  const double movement = r["ddp_param_movement_rel"].get<double>();
  EXPECT_GT(movement, 1e-4);
  for (const auto& vs : variants) {
    const char* v = vs.c_str();
    const double d = r[std::string(v) + "_param_rel_diff"].get<double>();
    EXPECT_LE(d, 1e-4) << v;
    EXPECT_LE(d, 1e-2 * movement) << v;
    EXPECT_EQ(r[std::string(v) + "_param_spread"].get<double>(), 0.0) << v;
  }
  // The oracle: parameter counts from the model's modules.
  auto m = make_model(model, 10, 32);
  const int64_t P = trainable_numel(*m);
  std::unordered_set<const void*> in_unit;
  int64_t fsdp_shards = 0, unit_numel = 0;
  for (auto& u : m->units()) {
    const int64_t pu = trainable_numel(*u);
    unit_numel += pu;
    fsdp_shards += pad_to(pu, n) / n;
  }
  fsdp_shards += pad_to(P - unit_numel, n) / n;  // the root group
  const auto& ddp = r["ddp_model_state_bytes"];
  EXPECT_EQ(ddp["parameters"].get<int64_t>(), 4 * P);
  EXPECT_EQ(ddp["gradients"].get<int64_t>(), 4 * P);
  EXPECT_EQ(ddp["optimizer"].get<int64_t>(), 4 * P);
  const auto& z = r["zero2_model_state_bytes"];
  EXPECT_EQ(z["parameters"].get<int64_t>(), 4 * pad_to(P, n));
  EXPECT_EQ(z["gradients"].get<int64_t>(), 4 * pad_to(P, n) / n);
  EXPECT_EQ(z["optimizer"].get<int64_t>(), 4 * pad_to(P, n) / n);
  for (const auto& vs : variants) {
    if (vs == "zero2") continue;
    const char* v = vs.c_str();
    const auto& f = r[std::string(v) + "_model_state_bytes"];
    EXPECT_EQ(f["parameters"].get<int64_t>(), 4 * fsdp_shards) << v;
    EXPECT_EQ(f["gradients"].get<int64_t>(), 4 * fsdp_shards) << v;
    EXPECT_EQ(f["optimizer"].get<int64_t>(), 4 * fsdp_shards) << v;
  }
  // Bytes by formula: zero2 2 (N-1)/N 4 pad(P), the allreduce's volume.
  EXPECT_EQ(r["zero2_communication"]["wire_bytes_per_step_formula"].get<int64_t>(), 2 * (n - 1) * 4 * pad_to(P, n) / n);
  EXPECT_TRUE(r["zero2_communication"]["reduce_scatter_emulated"].get<bool>());  // Gloo in torch 1.13
}

INSTANTIATE_TEST_SUITE_P(Ranks, Sharded, ::testing::Values(2, 3),
                         [](const ::testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "Ranks"; });

}  // namespace
}  // namespace ddpbench
