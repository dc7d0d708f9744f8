// DataParallel (engine/bench/data_parallel): what can run honestly on CPU devices. The
// replica copy that torch::nn::parallel::replicate calls (clone), and the hand-made step
// with ATen stand-ins for the CUDA-only scatter/gather/replicate (reference_primitives)
// against the model trained alone on the whole batch; the self-check catching a wrong
// primitive; the binary's one-line exit 2 without a GPU. libtorch's own data_parallel,
// replicate (gradient edges), scatter and gather need CUDA and are not exercised here.
#include <gtest/gtest.h>

#include <torch/nn/functional/loss.h>

#include <ATen/ops/flip.h>

#include "common/testutil.hpp"
#include "core/analysis/data_parallel_model.hpp"
#include "core/config/run_config.hpp"
#include "core/util/errors.hpp"
#include "engine/bench/data_parallel.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/timing.hpp"

namespace ddpbench {
namespace {

const c10::Device kCpu(c10::kCPU);

// squeezenet1_0 (1.2 M parameters; resnet18 where BatchNorm buffers matter) on 32 px
// images, 10 classes.
RunConfig small_config(const std::string& model = "squeezenet1_0") {
  RunConfig cfg;
  cfg.models = {model};
  cfg.image_size = 32;
  cfg.num_classes = 10;
  cfg.seed = 7;
  return cfg;
}

std::shared_ptr<ReplicableModel> replicable(const RunConfig& cfg, ModelPtr master) {
  return std::make_shared<ReplicableModel>(
      std::move(master), [cfg](const c10::Device& d) { return build_model(cfg, cfg.models.front(), d); });
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.detach().to(torch::kDouble) - b.detach().to(torch::kDouble)).abs().max().item<double>();
}

// What replicate() gets from clone(): equal values in fresh storage, the same names,
// requires_grad flags and mode; later copies follow the master's current values (a cached
// replica model is reused per device and slot, never its stale values).
TEST(DataParallel, ReplicaIsADeepCopyThatFollowsTheMaster) {
  RunConfig cfg = small_config("resnet18");
  cfg.freeze_backbone = true;  // requires_grad differs between backbone and head
  auto module = replicable(cfg, build_model(cfg, cfg.models.front(), kCpu));
  module->model().eval();
  const auto check_equal = [&](ReplicableModel& r) {
    const auto mp = module->model().named_parameters(), rp = r.model().named_parameters();
    ASSERT_EQ(mp.size(), rp.size());
    for (size_t i = 0; i < mp.size(); ++i) {
      EXPECT_EQ(mp[i].key(), rp[i].key());
      EXPECT_TRUE(torch::equal(mp[i].value(), rp[i].value())) << mp[i].key();
      EXPECT_NE(mp[i].value().data_ptr(), rp[i].value().data_ptr()) << mp[i].key() << " shares storage";
      EXPECT_EQ(mp[i].value().requires_grad(), rp[i].value().requires_grad()) << mp[i].key();
    }
    const auto mb = module->model().named_buffers(), rb = r.model().named_buffers();
    ASSERT_EQ(mb.size(), rb.size());
    ASSERT_GT(mb.size(), 0u);
    for (size_t i = 0; i < mb.size(); ++i) {
      EXPECT_TRUE(torch::equal(mb[i].value(), rb[i].value())) << mb[i].key();
      EXPECT_NE(mb[i].value().data_ptr(), rb[i].value().data_ptr()) << mb[i].key();
    }
    EXPECT_FALSE(r.model().is_training());
  };
  // As replicate calls it: through torch::nn::Module::clone(device).
  const std::shared_ptr<torch::nn::Module> base = module->clone(kCpu);
  auto first = std::dynamic_pointer_cast<ReplicableModel>(base);
  ASSERT_TRUE(first);
  check_equal(*first);
  const auto x = torch::randn({3, 3, 32, 32});
  {
    torch::NoGradGuard ng;
    EXPECT_TRUE(torch::equal(first->forward(x), module->forward(x)));
  }
  // The master changes (an optimizer step, a BatchNorm update): the next copy has the new values.
  {
    torch::NoGradGuard ng;
    for (auto& p : module->model().parameters()) p.add_(0.5);
    for (auto& b : module->model().buffers())
      if (b.is_floating_point()) b.mul_(2.0);
  }
  auto second = module->replica(kCpu, 0);
  EXPECT_EQ(&second->model(), &first->model()) << "slot 0 of the CPU should reuse its replica model";
  check_equal(*second);
  auto other = module->replica(kCpu, 1);
  EXPECT_NE(&other->model(), &second->model());
  check_equal(*other);
}

// The hand-made training step on two CPU "devices" (reference primitives: chunk, a loop,
// cat) equals the model trained alone on the whole batch: the loss, every gradient the
// reduce summed into the master, and the parameters after the SGD step. Eval mode (dropout
// off; BatchNorm on its running statistics), so splitting the batch changes no example's output.
TEST(DataParallel, ManualStepOnCpuEqualsTheModelAloneOnTheWholeBatch) {
  const RunConfig cfg = small_config();
  const auto batch = make_synthetic_batch(4, 32, 10, kCpu, 11);
  // The oracle: run's Trainer on the whole batch.
  ModelPtr alone = build_model(cfg, cfg.models.front(), kCpu);
  alone->eval();
  Trainer oracle(alone, nullptr, batch, kCpu, "fp32", 1);
  const double oracle_loss = oracle.step().item<double>();

  auto module = replicable(cfg, build_model(cfg, cfg.models.front(), kCpu));
  module->model().eval();
  DpStepper stepper(module, batch, {kCpu, kCpu}, DpPath::kManual, /*training=*/true, reference_primitives());
  DpPhaseTimes phases;
  const double loss = stepper.step(&phases).item<double>();
  EXPECT_NEAR(loss, oracle_loss, 1e-5 * std::abs(oracle_loss));
  const auto mp = module->model().parameters(), op = alone->parameters();
  ASSERT_EQ(mp.size(), op.size());
  double grad_scale = 0, grad_diff = 0, param_diff = 0;
  for (size_t i = 0; i < mp.size(); ++i) {
    ASSERT_TRUE(mp[i].grad().defined()) << "parameter " << i << " got no gradient from the reduce";
    grad_scale = std::max(grad_scale, op[i].grad().abs().max().item<double>());
    grad_diff = std::max(grad_diff, max_abs_diff(mp[i].grad(), op[i].grad()));
    param_diff = std::max(param_diff, max_abs_diff(mp[i], op[i]));
  }
  EXPECT_GT(grad_scale, 0);
  EXPECT_LE(grad_diff, 1e-5 * grad_scale);
  EXPECT_LE(param_diff, 1e-6);
  // Every phase of the manual path was timed, and they add up to the instrumented step.
  for (double v : {phases.zero_grad_s, phases.replicate_s, phases.scatter_s, phases.forward_s, phases.gather_s,
                   phases.loss_s, phases.backward_s, phases.reduce_s, phases.optimizer_s})
    EXPECT_GT(v, 0);
  EXPECT_DOUBLE_EQ(phases.step_s(), phases.communication_s() + phases.computation_s() + phases.other_s());
  // A second step reuses the replica models with the updated values: still the oracle's.
  const double loss2 = stepper.step().item<double>();
  const double oracle_loss2 = oracle.step().item<double>();
  EXPECT_NEAR(loss2, oracle_loss2, 1e-5 * std::abs(oracle_loss2));
}

// Inference: the gathered logits of three replicas equal the model's on the whole batch.
TEST(DataParallel, ManualInferenceOnCpuEqualsTheModelAlone) {
  const RunConfig cfg = small_config();
  const auto batch = make_synthetic_batch(6, 32, 10, kCpu, 12);
  auto module = replicable(cfg, build_model(cfg, cfg.models.front(), kCpu));
  module->model().eval();
  module->set_grad(false);
  DpStepper stepper(module, batch, {kCpu, kCpu, kCpu}, DpPath::kManual, /*training=*/false, reference_primitives());
  const auto out = stepper.step();
  torch::NoGradGuard ng;
  const auto expected = module->model().forward(batch.input);
  ASSERT_EQ(out.sizes(), expected.sizes());
  EXPECT_LE(max_abs_diff(out, expected), 1e-5 * expected.abs().max().item<double>());
}

// The self-check passes the right primitives and fails a gather that puts the replicas'
// outputs in the wrong order (the rows would otherwise time a wrong computation).
TEST(DataParallel, SelfCheckPassesCorrectAndFailsWrongPrimitives) {
  const RunConfig cfg = small_config();
  const auto batch = make_synthetic_batch(4, 32, 10, kCpu, 13);
  auto module = replicable(cfg, build_model(cfg, cfg.models.front(), kCpu));
  DpStepper good(module, batch, {kCpu, kCpu}, DpPath::kManual, true, reference_primitives());
  const DpCheck ok = check_data_parallel(good, *module, true, 2, 32, 10, 5, true);
  EXPECT_TRUE(ok.passed()) << "output " << ok.output_rel_diff << ", gradients " << ok.grad_rel_diff;
  EXPECT_TRUE(module->model().is_training()) << "the check must restore train mode";

  DpPrimitives wrong = reference_primitives();
  const auto gather = wrong.gather;
  wrong.gather = [gather](const std::vector<torch::Tensor>& outs, const c10::Device& d) {
    return gather(std::vector<torch::Tensor>(outs.rbegin(), outs.rend()), d);
  };
  DpStepper bad(module, batch, {kCpu, kCpu}, DpPath::kManual, true, wrong);
  const DpCheck fail = check_data_parallel(bad, *module, true, 2, 32, 10, 5, true);
  EXPECT_FALSE(fail.passed());
  EXPECT_GT(fail.output_rel_diff, DpCheck::kLimit);
}

TEST(DataParallel, NativePathNeedsLibtorchsDataParallel) {
  const RunConfig cfg = small_config();
  auto module = replicable(cfg, build_model(cfg, cfg.models.front(), kCpu));
  const auto batch = make_synthetic_batch(2, 32, 10, kCpu, 1);
  EXPECT_NE(testutil::usage_error(
                [&] { DpStepper stepper(module, batch, {kCpu}, DpPath::kNative, true, reference_primitives()); }),
            "");
  // A CPU libtorch lacks DataParallel's scatter and gather; a CUDA one has them, GPU or not.
#ifdef DDPBENCH_WITH_CUDA
  EXPECT_EQ(testutil::usage_error([] { libtorch_primitives(); }), "");
#else
  EXPECT_NE(testutil::usage_error([] { libtorch_primitives(); }), "");
#endif
}

// GPU only: without a GPU the subcommand says so in one line and exits 2 (before any flag
// is looked at, so even a bad --gpus gets that line).
TEST(DataParallel, BinaryWithoutGpuSaysSoAndExits2) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  const auto o = testutil::run(std::string(DDPBENCH_BINARY) + " dataparallel --model resnet18 --gpus 0,0");
  EXPECT_EQ(testutil::bad_input_problem(o, "shows none"), "");
  EXPECT_EQ(o.out, "");
}

}  // namespace
}  // namespace ddpbench
