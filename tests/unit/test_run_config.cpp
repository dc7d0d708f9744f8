// `ddpbench run` configuration: world-size sweep and validation messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/run_config.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kModels = {"resnet18", "resnet50"};

RunConfig good() {
  RunConfig c;
  c.models = {"resnet18"};
  return c;
}

// The one-line message of the UsageError `fn` throws, or "" when it does not throw.
template <typename F>
std::string usage_error(F fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(RunConfig, DefaultWorldSizes) {
  EXPECT_EQ(default_world_sizes(1), (std::vector<int>{1}));
  EXPECT_EQ(default_world_sizes(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(default_world_sizes(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(default_world_sizes(8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(default_world_sizes(12), (std::vector<int>{1, 2, 4, 8, 12}));
}

TEST(RunConfig, ParseIntList) {
  EXPECT_EQ(parse_int_list("4,1, 2,2", "--world-sizes"), (std::vector<int>{1, 2, 4}));
  EXPECT_THAT(usage_error([] { parse_int_list("1,x", "--world-sizes"); }), HasSubstr("--world-sizes"));
  EXPECT_NE(usage_error([] { parse_int_list("0", "--world-sizes"); }), "");
  EXPECT_NE(usage_error([] { parse_int_list("", "--world-sizes"); }), "");
}

TEST(RunConfig, SplitList) {
  EXPECT_EQ(split_list("resnet18, resnet50,,"), (std::vector<std::string>{"resnet18", "resnet50"}));
  EXPECT_TRUE(split_list("").empty());
}

TEST(RunConfig, ValidAccepted) { EXPECT_NO_THROW(validate(good(), 2, kModels)); }

TEST(RunConfig, BadInputNamesProblemAndFix) {
  auto c = good();
  c.models = {"resnet9000"};
  auto msg = usage_error([&] { validate(c, 2, kModels); });
  EXPECT_THAT(msg, HasSubstr("unknown model 'resnet9000'"));
  EXPECT_THAT(msg, HasSubstr("resnet50"));  // lists the choices

  c = good();
  c.batch_size = 0;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--batch-size 0"));
  c.batch_size = -4;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--batch-size -4"));

  c = good();
  c.world_sizes = {1, 4};
  msg = usage_error([&] { validate(c, 2, kModels); });
  EXPECT_THAT(msg, HasSubstr("--world-sizes has 4"));
  EXPECT_THAT(msg, HasSubstr("2 rank(s)"));

  c = good();
  c.image_size = 16;
  EXPECT_NE(usage_error([&] { validate(c, 2, kModels); }), "");
  c = good();
  c.iters = 0;
  EXPECT_NE(usage_error([&] { validate(c, 2, kModels); }), "");
  c = good();
  c.backend = "mpi";
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--backend"));
  c = good();
  c.timeout_s = 0;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--timeout"));
  c = good();
  c.bucket_cap_mb = -1;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--bucket-cap-mb"));
  c = good();
  c.models.clear();
  EXPECT_NE(usage_error([&] { validate(c, 2, kModels); }), "");
  c = good();
  c.models = {"resnet18", "resnet50", "resnet18"};
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("'resnet18' twice"));
  c = good();
  c.timeout_s = 0.0005;  // would become a 0 ms timeout, which c10d reads as "none"
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--timeout"));
}

TEST(RunConfig, AdaptiveStoppingLimitsAreChecked) {
  auto c = good();
  c.iters_auto = true;
  EXPECT_NO_THROW(validate(c, 2, kModels));
  c.target_ci_pct = 0;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--target-ci 0"));
  c = good();
  c.iters_auto = true;
  c.min_iters = 1;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--min-iters 1"));
  c = good();
  c.iters_auto = true;
  c.max_iters = 5;  // below the default --min-iters 20
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--max-iters 5 must be >= --min-iters 20"));
  c = good();
  c.iters_auto = true;
  c.max_time_s = -1;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--max-time"));
  // Recorded: "auto" with its limits, or the fixed count with null limits.
  c = good();
  c.iters_auto = true;
  EXPECT_EQ(to_json(c)["iters"], "auto");
  EXPECT_EQ(to_json(c)["target_ci_pct"], 1.0);
  EXPECT_TRUE(to_json(good())["target_ci_pct"].is_null());
  EXPECT_EQ(to_json(good())["iters"], good().iters);
}

TEST(RunConfig, PrecisionNames) {
  auto c = good();
  for (const char* p : {"fp32", "fp32-strict", "tf32", "fp16", "bf16"}) {
    c.precision = p;
    EXPECT_NO_THROW(validate(c, 2, kModels)) << p;
  }
  c.precision = "fp64";
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("fp32-strict"));
}

TEST(RunConfig, StrongScaling) {
  auto c = good();
  c.scaling = "strong";
  c.world_sizes = {1, 2, 4};
  EXPECT_THAT(usage_error([&] { validate(c, 4, kModels); }), HasSubstr("--global-batch-size"));
  c.global_batch_size = 64;
  EXPECT_NO_THROW(validate(c, 4, kModels));
  EXPECT_EQ(batch_per_rank(c, 1), 64);
  EXPECT_EQ(batch_per_rank(c, 4), 16);
  c.world_sizes = {1, 2, 3};
  const auto msg = usage_error([&] { validate(c, 4, kModels); });
  EXPECT_THAT(msg, HasSubstr("does not divide among 3 ranks"));
  EXPECT_THAT(msg, HasSubstr("multiple of 6"));
  // Group sizes whose LCM (the primes up to 53, about 3.3e19) overflows long long.
  c.world_sizes = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
  const auto big = usage_error([&] { validate(c, 64, kModels); });
  EXPECT_THAT(big, HasSubstr("does not divide among 3 ranks; use a multiple of every group size")) << big;
  auto w = good();
  w.global_batch_size = 64;  // weak scaling takes --batch-size
  EXPECT_NE(usage_error([&] { validate(w, 2, kModels); }), "");
  w.global_batch_size = 0;
  w.scaling = "diagonal";
  EXPECT_THAT(usage_error([&] { validate(w, 2, kModels); }), HasSubstr("--scaling"));
  EXPECT_EQ(batch_per_rank(w, 4), w.batch_size);
}

// As the sweep emits them: per model, a no-DDP row per distinct batch per rank, then a DDP
// row per world size.
TEST(RunConfig, PlannedRows) {
  auto c = good();
  c.world_sizes = {1, 2};
  EXPECT_EQ(planned_rows(c), 3);  // no ddp, 1, 2: the tiny e2e sweep
  c.models = {"resnet18", "resnet50"};
  c.world_sizes = {1, 2, 4, 8};
  EXPECT_EQ(planned_rows(c), 10);  // 2 x (1 + 4)
  c.models = {"resnet18"};
  c.scaling = "strong";
  c.global_batch_size = 64;
  EXPECT_EQ(planned_rows(c), 8);  // baselines at 64, 32, 16 and 8 per rank, then 4 DDP rows
}

TEST(RunConfig, JsonRecordsEveryKnob) {
  auto j = to_json(good());
  for (const char* k : {"models", "batch_size", "image_size", "warmup", "iters", "world_sizes", "bucket_cap_mb",
                        "first_bucket_cap_mb", "broadcast_buffers", "backend", "timeout_s", "precision"})
    EXPECT_TRUE(j.contains(k)) << k;
}

}  // namespace
}  // namespace ddpbench
