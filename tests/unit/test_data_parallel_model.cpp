// core/analysis/data_parallel_model: Banerjee and Shah's bytes-per-epoch formula and the per-primitive
// traffic of DataParallel against numbers computed by hand, the phase split, --gpus.
#include <gtest/gtest.h>

#include "common/testutil.hpp"
#include "core/analysis/data_parallel_model.hpp"
#include "core/result/result.hpp"

namespace ddpbench {
namespace {

using testutil::usage_error;

// Banerjee and Shah's own configuration (their section 4): MNIST's 60000 training images, batch 1024,
// 4 GPUs, VGG16 with 119586826 trainable parameters. By hand: 60000 / (1024 x 4) =
// 14.6484375 steps; x 119586826 = 112112649375 / 64 = 1751760146.484375 parameters,
// x 4 bytes = 7007040585.9375 bytes.
TEST(DataParallelModel, BanerjeeShahFormulaOnTheirVgg16Configuration) {
  EXPECT_DOUBLE_EQ(banerjee_shah_parameters_per_epoch(60000, 1024, 4, 119586826), 1751760146.484375);
  DpTrafficInput in;
  in.dataset_size = 60000;
  in.batch_per_device = 1024;
  in.devices = 4;
  in.parameters = in.trainable_parameters = 119586826;
  const DpTraffic t = data_parallel_traffic(in);
  EXPECT_DOUBLE_EQ(t.banerjee_shah_bytes_per_epoch, 7007040585.9375);
  EXPECT_EQ(t.steps_per_epoch, 15);  // ceil(14.65)
  // The formula does not grow with k: one copy per step. Doubling B x k halves it.
  EXPECT_DOUBLE_EQ(banerjee_shah_parameters_per_epoch(60000, 1024, 8, 119586826), 1751760146.484375 / 2);
}

// N = 10, B = 2, k = 3, 100 parameters of which 40 trainable, 24 bytes of buffers, 12 input
// and 5 output elements per example, fp32 parameters and inputs, 2-byte logits.
// By hand: global batch 6, ceil(10 / 6) = 2 steps; Banerjee and Shah: 10 / 6 x 40 = 66.67 parameters;
// replicate 2 x (400 + 24) = 848; scatter 2 x 2 x 12 x 4 = 192; gather 2 x 2 x 5 x 2 = 40,
// twice in training = 80; reduce 2 x 40 x 4 = 320; training 1440 per step, 2880 per epoch;
// inference 848 + 192 + 40 = 1080 per step, 2160 per epoch.
TEST(DataParallelModel, TrafficPerPrimitiveByHand) {
  DpTrafficInput in;
  in.dataset_size = 10;
  in.batch_per_device = 2;
  in.devices = 3;
  in.parameters = 100;
  in.trainable_parameters = 40;
  in.buffer_bytes = 24;
  in.input_elements_per_example = 12;
  in.output_elements_per_example = 5;
  in.output_bytes = 2;
  DpTraffic t = data_parallel_traffic(in);
  EXPECT_EQ(t.steps_per_epoch, 2);
  EXPECT_DOUBLE_EQ(t.banerjee_shah_parameters_per_epoch, 400.0 / 6.0);
  EXPECT_DOUBLE_EQ(t.replicate_bytes, 848);
  EXPECT_DOUBLE_EQ(t.scatter_bytes, 192);
  EXPECT_DOUBLE_EQ(t.gather_bytes, 80);
  EXPECT_DOUBLE_EQ(t.reduce_bytes, 320);
  EXPECT_DOUBLE_EQ(t.bytes_per_step, 1440);
  EXPECT_DOUBLE_EQ(t.bytes_per_epoch, 2880);
  in.training = false;
  t = data_parallel_traffic(in);
  EXPECT_DOUBLE_EQ(t.gather_bytes, 40);
  EXPECT_DOUBLE_EQ(t.reduce_bytes, 0);
  EXPECT_DOUBLE_EQ(t.bytes_per_step, 1080);
  EXPECT_DOUBLE_EQ(t.bytes_per_epoch, 2160);
  // One device: nothing crosses a device boundary, while Banerjee and Shah's formula still counts
  // 10 / 2 x 40 = 200 parameters per epoch.
  in.devices = 1;
  in.training = true;
  t = data_parallel_traffic(in);
  EXPECT_EQ(t.steps_per_epoch, 5);
  EXPECT_DOUBLE_EQ(t.bytes_per_step, 0);
  EXPECT_DOUBLE_EQ(t.banerjee_shah_parameters_per_epoch, 200);
  const auto j = to_json(in, t);
  EXPECT_EQ(j.at("steps_per_epoch").get<long long>(), 5);
  EXPECT_DOUBLE_EQ(j.at("banerjee_shah_bytes_per_epoch").get<double>(), 800);
}

TEST(DataParallelModel, BadCountsAreUsageErrors) {
  EXPECT_NE(usage_error([] { banerjee_shah_parameters_per_epoch(0, 1, 1, 1); }), "");
  EXPECT_NE(usage_error([] { banerjee_shah_parameters_per_epoch(1, 0, 1, 1); }), "");
  EXPECT_NE(usage_error([] { banerjee_shah_parameters_per_epoch(1, 1, 0, 1); }), "");
  EXPECT_NE(usage_error([] { banerjee_shah_parameters_per_epoch(1, 1, 1, -1); }), "");
  DpTrafficInput in;
  in.dataset_size = in.batch_per_device = 1;
  in.parameters = 1;
  in.trainable_parameters = 2;
  EXPECT_NE(usage_error([&] { data_parallel_traffic(in); }), "");
}

// The split: communication = replicate + scatter + gather + reduce; computation = forward +
// loss + backward; other = zero_grad + optimizer; they add up to the step. Means per phase.
TEST(DataParallelModel, PhaseSplitAndMeans) {
  DpPhaseTimes a;
  a.zero_grad_s = 1;
  a.replicate_s = 2;
  a.scatter_s = 3;
  a.forward_s = 4;
  a.gather_s = 5;
  a.loss_s = 6;
  a.backward_s = 7;
  a.reduce_s = 8;
  a.optimizer_s = 9;
  EXPECT_DOUBLE_EQ(a.communication_s(), 18);
  EXPECT_DOUBLE_EQ(a.computation_s(), 17);
  EXPECT_DOUBLE_EQ(a.other_s(), 10);
  EXPECT_DOUBLE_EQ(a.step_s(), 45);
  DpPhaseTimes b;
  b.replicate_s = 4;
  b.forward_s = 2;
  const DpPhaseTimes m = mean_phases({a, b});
  EXPECT_DOUBLE_EQ(m.replicate_s, 3);
  EXPECT_DOUBLE_EQ(m.forward_s, 3);
  EXPECT_DOUBLE_EQ(m.optimizer_s, 4.5);
  EXPECT_DOUBLE_EQ(to_json(m).at("step_s").get<double>(), (45.0 + 6.0) / 2);
  EXPECT_DOUBLE_EQ(mean_phases({}).step_s(), 0);
}

TEST(DataParallelModel, GpuSelection) {
  EXPECT_EQ(parse_gpu_selection("", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_gpu_selection("2", 3), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_gpu_selection("2,0", 3), (std::vector<int>{2, 0}));
  EXPECT_EQ(parse_gpu_selection("1,", 3), (std::vector<int>{1}));
  EXPECT_NE(usage_error([] { parse_gpu_selection("", 0); }).find("no GPU"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_gpu_selection("4", 3); }).find("out of range"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_gpu_selection("0", 3); }).find("out of range"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_gpu_selection("0,3", 3); }).find("out of range"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_gpu_selection("0,0", 3); }).find("twice"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_gpu_selection("a", 3); }).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_gpu_selection("-1,0", 3); }).find("--gpus"), std::string::npos);
  EXPECT_NE(usage_error([] { parse_gpu_selection(",", 3); }).find("names no GPU"), std::string::npos);
}

// A row's strategy and mode survive the JSON round trip; a row without them (schema < 1.7)
// reads as "ddp" / "train".
TEST(DataParallelModel, RowStrategyAndModeRoundTrip) {
  BenchResult r;
  r.model = "resnet50";
  r.batch_per_rank = 32;
  r.world_size = 2;
  r.strategy = "dp-manual";
  r.mode = "inference";
  r.ranks.push_back({});
  r.ranks.back().samples_s = {0.5};
  nlohmann::json j = r;
  EXPECT_EQ(j.at("strategy"), "dp-manual");
  const auto back = j.get<BenchResult>();
  EXPECT_EQ(back.strategy, "dp-manual");
  EXPECT_EQ(back.mode, "inference");
  j.erase("strategy");
  j.erase("mode");
  EXPECT_EQ(j.get<BenchResult>().strategy, "ddp");
  EXPECT_EQ(j.get<BenchResult>().mode, "train");
}

}  // namespace
}  // namespace ddpbench
