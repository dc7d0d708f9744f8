// engine/memory and `run --mode inference`: model-state bytes counted by hand, the CPU
// peak-RSS window following a known allocation, and inference leaving the model as it was
// (parameters, BatchNorm statistics, no gradients), in-process and through run_sweep.
#include <gtest/gtest.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/optim/sgd.h>
#include <torch/torch.h>

#include <vector>

#include "common/gloo_skip.hpp"
#include "core/result/row_memory.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/memory.hpp"
#include "engine/models/registry.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {

RunConfig small_config() {
  RunConfig cfg;
  cfg.models = {"resnet18"};
  cfg.image_size = 32;
  cfg.num_classes = 10;
  cfg.batch_size = 2;
  cfg.warmup = 1;
  cfg.iters = 3;
  cfg.world_sizes = {1};
  cfg.quiet = true;
  return cfg;
}

std::vector<at::Tensor> clones(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const auto& t : ts) out.push_back(t.detach().clone());
  return out;
}

bool all_equal(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

TEST(ModelStateBytes, ParametersGradientsAndMomentumByHand) {
  auto w = torch::randn({10, 4}, torch::requires_grad());
  auto b = torch::randn({4}, torch::requires_grad());
  torch::optim::SGD sgd({w, b}, torch::optim::SGDOptions(0.1).momentum(0.9));
  const auto before = model_state_bytes({w, b}, sgd);
  EXPECT_EQ(before.parameters, (40 + 4) * 4);
  EXPECT_EQ(before.gradients, 0);  // no backward yet
  EXPECT_EQ(before.optimizer, 0);  // momentum buffers appear at the first step
  (torch::ones({3, 10}).matmul(w) + b).sum().backward();
  sgd.step();
  const auto after = model_state_bytes({w, b}, sgd);
  EXPECT_EQ(after.parameters, 176);
  EXPECT_EQ(after.gradients, 176);
  EXPECT_EQ(after.optimizer, 176);
  EXPECT_EQ(after.total(), 3 * 176);
  // Views into one flat buffer (DDP's gradient_as_bucket_view, a shard) count the buffer once.
  auto flat = torch::zeros({10});
  EXPECT_EQ(model_state_bytes({}, {flat.narrow(0, 0, 5), flat.narrow(0, 5, 5)}, {}).gradients, 40);
  const auto j = after.to_json();
  EXPECT_EQ(j["total"], 528);
}

TEST(MemoryPeaks, CpuPeakRssCoversAnAllocationAndResets) {
  const c10::Device cpu(c10::kCPU);
  if (!reset_memory_peaks(cpu)) GTEST_SKIP() << "writing 5 to /proc/self/clear_refs failed (Linux < 4.0?)";
  const auto rss0 = read_proc_status_bytes("/proc/self/status", "VmRSS:");
  ASSERT_TRUE(rss0);
  constexpr double kBytes = 64.0 * 1024 * 1024;
  {
    auto t = torch::ones({static_cast<int64_t>(kBytes / 4)});  // every page written
    EXPECT_EQ(t.sum().item<double>(), kBytes / 4);
  }
  const RankMemory m = read_memory_peaks(cpu, 3);
  EXPECT_EQ(m.rank, 3);
  EXPECT_FALSE(m.peak_allocated_bytes);  // no CUDA allocator on a CPU rank
  ASSERT_TRUE(m.peak_rss_bytes);
  EXPECT_GE(*m.peak_rss_bytes, *rss0 + 0.9 * kBytes);
  // The 64 MiB were returned (glibc mmaps blocks this large): after a reset the peak is the
  // current resident set again.
  ASSERT_TRUE(reset_memory_peaks(cpu));
  const RankMemory again = read_memory_peaks(cpu, 3);
  ASSERT_TRUE(again.peak_rss_bytes);
  EXPECT_LT(*again.peak_rss_bytes, *m.peak_rss_bytes - 0.5 * kBytes);
  EXPECT_EQ(memory_source(cpu, true), kMemorySourceRss);
  EXPECT_EQ(memory_source(cpu, false), kMemorySourceRssNoReset);
}

TEST(Inference, ForwardOnlyLeavesParametersStatisticsAndGradientsAlone) {
  const RunConfig cfg = small_config();
  const c10::Device cpu(c10::kCPU);
  auto model = build_model(cfg, "resnet18", cpu);
  const auto params = clones(model->parameters());
  const auto buffers = clones(model->buffers());
  Trainer trainer(model, nullptr, make_synthetic_batch(2, 32, 10, cpu, 7), cpu, "fp32");
  const auto out = trainer.infer();
  (void)trainer.infer();
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 10}));
  EXPECT_FALSE(out.requires_grad());
  EXPECT_FALSE(model->is_training());
  EXPECT_TRUE(all_equal(clones(model->parameters()), params));
  EXPECT_TRUE(all_equal(clones(model->buffers()), buffers));  // BatchNorm running statistics
  for (const auto& p : model->parameters()) EXPECT_FALSE(p.grad().defined());
  // The control: a training step does change them (so the checks above can fail).
  Trainer train(build_model(cfg, "resnet18", cpu), nullptr, make_synthetic_batch(2, 32, 10, cpu, 7), cpu, "fp32");
  const auto before = clones(train.model().parameters());
  train.step();
  EXPECT_FALSE(all_equal(clones(train.model().parameters()), before));
}

TEST(Inference, SweepMakesOneInferenceRowPerWorldSizeWithMemory) {
  DDPBENCH_SKIP_WITHOUT_GLOO();
  SweepEnv env;
  env.cfg = small_config();
  env.cfg.mode = "inference";
  env.store = c10::make_intrusive<c10d::HashStore>();
  env.timeout = std::chrono::milliseconds(60000);
  RankPlacement p;
  p.host = "localhost";
  p.device = "cpu";
  env.placements = {p};
  const auto rows = run_sweep(env, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  const BenchResult& r = rows[0];
  EXPECT_EQ(r.mode, "inference");
  EXPECT_FALSE(r.ddp);
  EXPECT_EQ(r.label.rfind("infer ", 0), 0u) << r.label;
  EXPECT_EQ(r.summary.iterations, 3);
  EXPECT_GT(r.summary.p50_s, 0);
  ASSERT_EQ(r.memory.per_rank.size(), 1u);
  EXPECT_GT(r.memory.per_rank[0].peak_rss_bytes.value(), 0);
  // The per-rank metric measured around every step reached the rank and the row (a count, so >= 0).
  ASSERT_EQ(r.ranks[0].metrics.count("preemptions_per_step"), 1u);
  EXPECT_GE(r.ranks[0].metrics.at("preemptions_per_step"), 0);
  EXPECT_EQ(r.metrics.at("preemptions_per_step"), r.ranks[0].metrics.at("preemptions_per_step"));  // max of one
  // Nothing but the parameters: no gradient and no optimizer state was ever made.
  ASSERT_TRUE(r.memory.model_state_bytes.has_value());
  const ModelStateBytes& s = *r.memory.model_state_bytes;
  const int64_t params =
      static_cast<int64_t>(count_parameters(*build_model(env.cfg, "resnet18", c10::Device(c10::kCPU))));
  EXPECT_EQ(s.parameters, 4 * params);
  EXPECT_EQ(s.gradients, 0);
  EXPECT_EQ(s.optimizer, 0);
}

}  // namespace
}  // namespace ddpbench
