// `ddpbench run` configuration: world-size sweep and validation messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include <functional>
#include <limits>

#include "common/testutil.hpp"
#include "core/config/run_config.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kModels = {"resnet18", "resnet50"};

RunConfig good() {
  RunConfig c;
  c.models = {"resnet18"};
  return c;
}

using testutil::usage_error;

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

// --mode: train or inference; inference plans one row per model and world size (no baselines, no variants).
TEST(RunConfig, ModeIsTrainOrInference) {
  RunConfig c = good();
  EXPECT_EQ(c.mode, "train");
  c.mode = "serve";
  const auto msg = usage_error([&] { validate(c, 2, kModels); });
  EXPECT_THAT(msg, HasSubstr("--mode 'serve' is unknown"));
  EXPECT_THAT(msg, HasSubstr("use train or inference"));
  c.mode = "inference";
  EXPECT_NO_THROW(validate(c, 2, kModels));
  c.strategies = {"ddp", "fsdp"};
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("drop --strategy"));
  c.strategies = {"ddp"};
  c.data = "fashion-mnist";
  c.num_classes = 10;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("drop --data"));
  c.data = "synthetic";
  c.models = {"resnet18", "resnet50"};
  c.world_sizes = {1, 2};
  c.bucket_caps_mb = {1, 25};
  EXPECT_EQ(planned_rows(c), 2 * 2);
  c.mode = "train";
  EXPECT_EQ(planned_rows(c), 2 * (1 + 2 * 2));
  EXPECT_EQ(to_json(c)["mode"], "train");
}

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
  c.bucket_caps_mb = {-1};
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
  // A DDP comm hook with no DDP row would be recorded and never run.
  c = good();
  c.strategies = {"zero2"};
  c.comm_hooks = {"fp16"};
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("add ddp to --strategy"));
  c.strategies = {"ddp", "zero2"};
  EXPECT_NO_THROW(validate(c, 2, kModels));  // the hook applies to the ddp rows
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

// The groups run --resume matches: the names the sweep gives its rows, in its order, one per
// planned row.
TEST(RunConfig, PlannedGroups) {
  auto c = good();
  c.models = {"squeezenet1_0"};
  c.world_sizes = {1, 2};
  EXPECT_EQ(planned_groups(c), (std::vector<std::string>{"squeezenet1_0/noddp-b" + std::to_string(c.batch_size),
                                                         "squeezenet1_0/ddp1", "squeezenet1_0/ddp2"}));
  c.models = {"resnet18"};
  c.batch_size = 16;
  c.world_sizes = {2};
  c.bucket_caps_mb = {1, 25};
  c.strategies = {"ddp", "zero2"};
  c.grad_accums = {1};
  EXPECT_EQ(planned_groups(c), (std::vector<std::string>{"resnet18/noddp-b16", "resnet18/ddp2/v0", "resnet18/ddp2/v1",
                                                         "resnet18/zero22"}));
  EXPECT_EQ(static_cast<int>(planned_groups(c).size()), planned_rows(c));
  c.grad_accums = {4};
  c.strategies = {"ddp"};
  c.bucket_caps_mb = {25};
  EXPECT_EQ(planned_groups(c), (std::vector<std::string>{"resnet18/noddp-b16-k4", "resnet18/ddp2"}));
  c.mode = "inference";
  c.world_sizes = {1, 2};
  EXPECT_EQ(planned_groups(c), (std::vector<std::string>{"resnet18/infer1", "resnet18/infer2"}));
  c.mode = "train";
  c.data = "fashion-mnist";
  EXPECT_TRUE(planned_groups(c).empty());
}

// The first bucket's cap: --first-bucket-cap-mb where given; else DDP's rule, 1 MiB
// (dist._DEFAULT_FIRST_BUCKET_BYTES), or on torch 2.x with an explicit bucket_cap_mb the cap itself.
TEST(RunConfig, FirstBucketCapFollowsDdpsRule) {
  auto c = good();
  c.bucket_caps_mb = {5, 50};
  auto v = ddp_variants(c);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].first_bucket_cap_mb, 1.0);
  EXPECT_EQ(v[1].first_bucket_cap_mb, 1.0);
  EXPECT_EQ(to_json(c).at("first_bucket_cap_mb"), nlohmann::json({1.0, 1.0}));
  c.bucket_cap_caps_first_bucket = true;
  v = ddp_variants(c);
  EXPECT_EQ(v[0].first_bucket_cap_mb, 5.0);
  EXPECT_EQ(v[1].first_bucket_cap_mb, 50.0);
  EXPECT_EQ(to_json(c).at("first_bucket_cap_mb"), nlohmann::json({5.0, 50.0}));
  c.first_bucket_cap_mb = 2.0;
  v = ddp_variants(c);
  EXPECT_EQ(v[0].first_bucket_cap_mb, 2.0);
  EXPECT_EQ(v[1].first_bucket_cap_mb, 2.0);
  c.bucket_caps_mb = {25};
  EXPECT_EQ(to_json(c).at("first_bucket_cap_mb"), 2.0);  // one cap: a number, as bucket_cap_mb
}

// List-valued DDP settings: one DDP row per combination and world size; a baseline per
// distinct (batch, grad_accum).
TEST(RunConfig, VariantsAreTheProductOfTheLists) {
  auto c = good();
  c.world_sizes = {1, 2};
  c.bucket_caps_mb = {1, 25};
  c.comm_hooks = {"none", "fp16", "powersgd:2"};
  const auto v = ddp_variants(c);
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0].bucket_cap_mb, 1);
  EXPECT_EQ(v[0].comm_hook, "none");
  EXPECT_EQ(v[2].comm_hook, "powersgd:2");
  EXPECT_EQ(v[3].bucket_cap_mb, 25);
  EXPECT_EQ(planned_rows(c), 1 + 2 * 6);
  c.grad_accums = {1, 4};
  EXPECT_EQ(baseline_points(c).size(), 2u);  // (16, 1) and (16, 4)
  EXPECT_EQ(planned_rows(c), 2 + 2 * 12);
  c.bucket_caps_mb = std::vector<double>(20, 1.0);
  c.comm_hooks = std::vector<std::string>(20, "none");
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("800 combinations"));
}

TEST(RunConfig, KnobBounds) {
  auto c = good();
  c.grad_accums = {0};
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--grad-accum 0 is out of range"));
  c = good();
  c.static_graph = c.find_unused_parameters = true;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--static-graph"));
  c = good();
  c.profile_iters = 0;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--profile-iters"));
}

TEST(RunConfig, ClusterValidationBounds) {
  auto c = good();
  c.sample_ms = 0;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--sample-ms 0 is out of range"));
  c = good();
  c.min_util_pct = 101;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--min-util 101"));
  c = good();
  c.straggler_threshold = 0;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--straggler-threshold 0"));
  c = good();
  c.straggler_threshold = NAN;
  EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr("--straggler-threshold"));
}

TEST(RunConfig, ParseDuration) {
  EXPECT_DOUBLE_EQ(parse_duration_s("90", "--duration"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_s("90s", "--duration"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_s("30m", "--duration"), 1800);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5h", "--duration"), 5400);
  for (const char* bad : {"", "m", "30x", "0", "-5m", "8d", "169h", "nan"})
    EXPECT_THAT(usage_error([&] { parse_duration_s(bad, "--duration"); }), HasSubstr("is not a duration")) << bad;
}

TEST(RunConfig, ParseMbList) {
  EXPECT_EQ(parse_mb_list("1,5,25,100", "--bucket-cap-mb"), (std::vector<double>{1, 5, 25, 100}));
  EXPECT_EQ(parse_mb_list("25, 0.5,25", "--bucket-cap-mb"), (std::vector<double>{25, 0.5}));
  EXPECT_THAT(usage_error([] { parse_mb_list("1,x", "--bucket-cap-mb"); }), HasSubstr("not a comma list"));
  EXPECT_THAT(usage_error([] { parse_mb_list("0", "--bucket-cap-mb"); }), HasSubstr("out of range"));
  EXPECT_THAT(usage_error([] { parse_mb_list("-1", "--bucket-cap-mb"); }), HasSubstr("not a comma list"));
  EXPECT_THAT(usage_error([] { parse_mb_list("1e9", "--bucket-cap-mb"); }), HasSubstr("not a comma list"));
  EXPECT_THAT(usage_error([] { parse_mb_list(",", "--bucket-cap-mb"); }), HasSubstr("empty"));
}

TEST(RunConfig, JsonRecordsEveryKnob) {
  auto j = to_json(good());
  for (const char* k : {"models", "batch_size", "image_size", "warmup", "iters", "world_sizes", "bucket_cap_mb",
                        "first_bucket_cap_mb", "broadcast_buffers", "backend", "timeout_s", "precision"})
    EXPECT_TRUE(j.contains(k)) << k;
}

// Numbers that would reach libtorch or overflow: each has a range, and NaN and the
// infinities are outside every range of a double.
TEST(RunConfig, NumbersAreBounded) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::function<void(RunConfig&)> set;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {[](RunConfig& c) { c.batch_size = 1'000'000'000; }, "--batch-size 1000000000 is out of range; use 1..16777216"},
      {[](RunConfig& c) { c.batch_size = std::numeric_limits<long long>::max(); }, "--batch-size 9223372036854775807"},
      {[](RunConfig& c) { c.image_size = 100000; }, "--image-size 100000 is out of range; use 32..16384"},
      {[](RunConfig& c) { c.num_classes = 2'000'000'000; }, "--num-classes 2000000000 is out of range; use 2..1000000"},
      {[](RunConfig& c) { c.warmup = 100'000'001; }, "--warmup 100000001 is out of range; use 0..100000000"},
      {[](RunConfig& c) { c.warmup = -1; }, "--warmup -1 is out of range"},
      {[](RunConfig& c) { c.iters = 100'000'001; }, "--iters 100000001 must be 1..100000000"},
      {[](RunConfig& c) { c.seed = -1; }, "--seed -1 must be >= 0"},
      {[](RunConfig& c) { c.timeout_s = kInf; }, "--timeout inf is out of range; use 1..86400 seconds"},
      {[](RunConfig& c) { c.timeout_s = 1e300; }, "--timeout 1e+300 is out of range"},
      {[](RunConfig& c) { c.timeout_s = kNan; }, "--timeout nan is out of range"},
      {[](RunConfig& c) { c.timeout_s = 86401; }, "--timeout 86401 is out of range"},
      {[](RunConfig& c) { c.bucket_caps_mb = {kInf}; },
       "--bucket-cap-mb inf is out of range; use a size in (0, 65536] MiB"},
      {[](RunConfig& c) { c.bucket_caps_mb = {kNan}; }, "--bucket-cap-mb nan is out of range"},
      {[](RunConfig& c) { c.bucket_caps_mb = {65537}; }, "--bucket-cap-mb 65537 is out of range"},
      {[](RunConfig& c) { c.first_bucket_cap_mb = std::numeric_limits<double>::infinity(); },
       "--first-bucket-cap-mb inf is out of range"},
      {[](RunConfig& c) { c.first_bucket_cap_mb = 0; }, "--first-bucket-cap-mb 0 is out of range"},
      {[](RunConfig& c) { c.grad_check_tol = kInf; }, "--grad-check-tol inf is out of range"},
      {[](RunConfig& c) { c.grad_check_tol = kNan; }, "--grad-check-tol nan is out of range"},
      {[](RunConfig& c) { c.grad_check_tol = 0; }, "--grad-check-tol 0 is out of range"},
      {[](RunConfig& c) { c.dataset_size = 1'000'000'000'001LL; }, "--dataset-size 1000000000001 is out of range"},
      {[](RunConfig& c) { c.dataset_size = 0; }, "--dataset-size 0 is out of range"},
      {[](RunConfig& c) {
         c.iters_auto = true;
         c.max_time_s = kInf;
       },
       "--max-time inf"},
      {[](RunConfig& c) {
         c.iters_auto = true;
         c.target_ci_pct = kNan;
       },
       "--target-ci nan"},
      {[](RunConfig& c) {
         c.scaling = "strong";
         c.world_sizes = {1, 2};
         c.global_batch_size = std::numeric_limits<long long>::max() - 1;
       },
       "--global-batch-size 9223372036854775806 is out of range; use 1..17592186044416"},
      {[](RunConfig& c) {
         c.scaling = "strong";
         c.world_sizes = {1, 2};
         c.global_batch_size = 2 * kMaxBatchSize + 2;
       },
       "--global-batch-size 33554434 gives 33554434 examples per rank at 1 rank(s), more than 16777216"},
  };
  for (const auto& k : cases) {
    RunConfig c = good();
    k.set(c);
    EXPECT_THAT(usage_error([&] { validate(c, 2, kModels); }), HasSubstr(k.expect)) << k.expect;
  }
  // The bounds themselves are accepted.
  RunConfig c = good();
  c.batch_size = kMaxBatchSize;
  c.image_size = 16384;
  c.num_classes = 1'000'000;
  c.seed = std::numeric_limits<long long>::max();
  c.timeout_s = 86400;
  c.bucket_caps_mb = {65536};
  c.first_bucket_cap_mb = 65536;
  c.grad_check_tol = 1;
  c.dataset_size = 1'000'000'000'000LL;
  EXPECT_NO_THROW(validate(c, 2, kModels));
  c = good();
  c.scaling = "strong";
  c.world_sizes = {2};
  c.global_batch_size = 2 * kMaxBatchSize;
  EXPECT_NO_THROW(validate(c, 2, kModels));
}

TEST(RunConfig, ParseIntListBoundsSizes) {
  EXPECT_THAT(usage_error([] { parse_int_list("1,99999999999999999999", "--world-sizes"); }),
              HasSubstr("--world-sizes has 99999999999999999999; sizes must be 1..1048576"));
  EXPECT_THAT(usage_error([] { parse_int_list("4294967297", "--world-sizes"); }),
              HasSubstr("sizes must be 1..1048576"));
  EXPECT_EQ(parse_int_list("1048576", "--world-sizes"), std::vector<int>{1 << 20});
}

// Hand-computed: 16 x 3 x 64 x 64 x 4 bytes = 786432 bytes = 0.75 MiB.
TEST(RunConfig, InputBatchBytes) {
  EXPECT_EQ(input_batch_bytes(16, 64), 786432.0);
  EXPECT_EQ(input_batch_bytes(1, 32), 12288.0);
  // 1e9 x 3 x 64^2 x 4 = 4.9152e13 bytes (45776.4 GiB); 2^24 x 3 x 16384^2 x 4 stays finite.
  EXPECT_EQ(input_batch_bytes(1'000'000'000, 64), 4.9152e13);
  EXPECT_EQ(input_batch_bytes(kMaxBatchSize, 16384), 54043195528445952.0);
}

TEST(RunConfig, InputBatchMustFitInMemory) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  RunConfig c = good();
  c.batch_size = 1'000'000;  // 1e6 x 3 x 64^2 x 4 = 4.9152e10 bytes = 45.78 GiB per rank
  c.image_size = 64;
  c.world_sizes = {1, 2};
  EXPECT_THAT(usage_error([&] { check_input_fits(c, 1, 16 * kGiB); }),
              HasSubstr("--batch-size 1000000 at 64 px needs 45.8 GiB per rank for the input batch alone, more than "
                        "the 16.0 GiB available; use a smaller --batch-size or --image-size"));
  EXPECT_THAT(usage_error([&] { check_input_fits(c, 2, 16 * kGiB); }),
              HasSubstr("(91.6 GiB for the 2 ranks on this machine)"));
  EXPECT_EQ(usage_error([&] { check_input_fits(c, 1, 46 * kGiB); }), "");
  EXPECT_NE(usage_error([&] { check_input_fits(c, 2, 46 * kGiB); }), "");  // 2 x 45.8 GiB do not fit
  // Strong scaling: the smallest group's batch per rank is the largest (every rank warms up with it).
  c.scaling = "strong";
  c.global_batch_size = 2'000'000;
  EXPECT_THAT(usage_error([&] { check_input_fits(c, 1, 64 * kGiB); }),
              HasSubstr("--global-batch-size 2000000 (2000000 per rank at 1 rank(s)) at 64 px needs 91.6 GiB"));
  c.world_sizes = {2};
  EXPECT_EQ(usage_error([&] { check_input_fits(c, 1, 64 * kGiB); }), "");
}

TEST(RunConfig, MemAvailableFromMeminfo) {
  EXPECT_EQ(parse_mem_available("MemTotal:       16384000 kB\nMemFree:  100 kB\nMemAvailable:    8192000 kB\n"),
            8192000.0 * 1024);
  EXPECT_EQ(parse_mem_available("MemAvailable: 1 kB"), 1024.0);
  EXPECT_EQ(parse_mem_available("MemTotal: 1 kB\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemAvailable: lots\n"), std::nullopt);
  EXPECT_EQ(parse_mem_available(""), std::nullopt);
  const auto here = mem_available_bytes();  // this machine's /proc/meminfo
  ASSERT_TRUE(here.has_value());
  EXPECT_GT(*here, 0);
}

}  // namespace
}  // namespace ddpbench
