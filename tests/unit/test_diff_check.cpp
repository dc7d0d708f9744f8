// `ddpbench diff` (noise rule) and `ddpbench check` (reference tolerances).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/check.hpp"
#include "core/diff.hpp"
#include "core/errors.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";

TEST(Bootstrap, ConstantSamplesGiveAPointIntervalAtTheShift) {
  const auto ci = bootstrap_median_diff_ci({0.2, 0.2, 0.2}, {0.25, 0.25, 0.25}, 500, 1);
  EXPECT_NEAR(ci.lo, 0.05, 1e-12);
  EXPECT_NEAR(ci.hi, 0.05, 1e-12);
  const std::vector<double> a = {0.1, 0.2, 0.3, 0.4};
  const auto same = bootstrap_median_diff_ci(a, a, 500, 1);
  EXPECT_LT(same.lo, 0.0);  // the same spread on both sides: an interval around 0
  EXPECT_GT(same.hi, 0.0);
}

TEST(Diff, TooFewIterationsGiveNoVerdict) {
  auto base = read_result_file(kFix + "diff_base.json");
  auto test = read_result_file(kFix + "diff_test.json");
  for (auto* f : {&base, &test})
    for (auto& rk : f->results[0].ranks) rk.samples_s.resize(3);
  EXPECT_EQ(diff_results(base, test).rows[0].verdict, "too few samples");
}

TEST(Bootstrap, SeparatedSamplesExcludeZeroAndBracketTheShift) {
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) {
    a.push_back(1.0 + 0.001 * i);
    b.push_back(1.5 + 0.001 * i);
  }
  const auto ci = bootstrap_median_diff_ci(a, b);
  EXPECT_GT(ci.lo, 0.45);
  EXPECT_LT(ci.hi, 0.55);
}

TEST(Bootstrap, DeterministicForASeed) {
  const std::vector<double> a = {0.3, 0.1, 0.5, 0.2, 0.9}, b = {0.4, 0.35, 0.6, 0.1, 0.8};
  const auto x = bootstrap_median_diff_ci(a, b, 300, 42), y = bootstrap_median_diff_ci(a, b, 300, 42);
  EXPECT_EQ(x.lo, y.lo);
  EXPECT_EQ(x.hi, y.hi);
  EXPECT_THROW(bootstrap_median_diff_ci({}, b), std::invalid_argument);
}

TEST(Diff, FixturePairOneRealChangeOneWithinNoise) {
  const auto d = diff_results(read_result_file(kFix + "diff_base.json"), read_result_file(kFix + "diff_test.json"));
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].key, "environment.nccl");
  EXPECT_EQ(d.changes[0].base, "2.18.1");
  EXPECT_EQ(d.changes[0].test, "2.19.3");
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].world_size, 1);
  EXPECT_NEAR(d.rows[0].p50_change, 0.2, 1e-9);
  EXPECT_NEAR(d.rows[0].ex_change, 0.1 / 0.12 - 1, 1e-9);
  EXPECT_EQ(d.rows[0].verdict, "slower");
  EXPECT_GT(d.rows[0].ci.lo, 0.0);
  EXPECT_EQ(d.rows[1].world_size, 2);
  EXPECT_NEAR(d.rows[1].p50_change, 0.01, 0.002);
  EXPECT_EQ(d.rows[1].verdict, "within noise");
  const auto text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("environment.nccl: 2.18.1 -> 2.19.3"));
  EXPECT_THAT(text, HasSubstr("within noise"));
}

TEST(Diff, UnmatchedRowsAreListed) {
  auto base = read_result_file(kFix + "diff_base.json");
  auto test = read_result_file(kFix + "diff_test.json");
  test.results.pop_back();
  const auto d = diff_results(base, test);
  EXPECT_EQ(d.rows.size(), 1u);
  ASSERT_EQ(d.only_base.size(), 1u);
  EXPECT_THAT(d.only_base[0], HasSubstr("1M/2G"));
}

TEST(Check, PassFailMissingAndSkipped) {
  const auto refs = parse_reference(read_text_file(kFix + "reference_h100.json"), "ref");
  int skipped = -1;
  const auto rows = check_against(read_result_file(kFix + "gpu_h100.json"), refs, skipped);
  EXPECT_EQ(skipped, 1);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].status, "PASS");  // 640 ex/s >= 600 * 0.9
  EXPECT_NEAR(*rows[0].lo, 540, 1e-9);
  EXPECT_FALSE(rows[0].hi.has_value());
  EXPECT_EQ(rows[1].status, "PASS");  // p50 0.05 within +-5%
  EXPECT_EQ(rows[2].status, "FAIL");  // efficiency 0.8 < 0.9 * 0.95
  EXPECT_NEAR(*rows[2].measured, 0.8, 1e-12);
  EXPECT_EQ(rows[3].status, "MISSING");  // nothing measured on 8 GPUs
}

TEST(Check, NothingApplicableAndFiltersByBatch) {
  int skipped = 0;
  const auto refs = parse_reference(read_text_file(kFix + "reference_h100.json"), "ref");
  EXPECT_TRUE(check_against(read_result_file(kFix + "weak_cpu.json"), refs, skipped).empty());  // `check` exits 1
  EXPECT_EQ(skipped, 5);
  const auto filtered = parse_reference(
      R"({"references": [{"gpu": "*", "model": "resnet50", "world_size": 1, "metric": "p50_s", "value": 0.05,
          "lower": -0.1, "upper": 0.1, "batch_per_rank": 64}]})",
      "r.json");
  const auto rows = check_against(read_result_file(kFix + "gpu_h100.json"), filtered, skipped);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, "MISSING");  // measured at batch 32, not 64
}

TEST(Check, UpperBoundFails) {
  ReferenceEntry e;
  e.gpu = "*";
  e.model = "resnet50";
  e.world_size = 1;
  e.metric = "p50_s";
  e.value = 0.04;
  e.upper = 0.1;  // allowed up to 0.044 s; measured 0.05
  int skipped = 0;
  const auto rows = check_against(read_result_file(kFix + "gpu_h100.json"), {e}, skipped);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, "FAIL");
}

// The example the README points to stays true to the committed H100 measurement.
TEST(Check, ShippedExampleReferencePassesTheCommittedH100Result) {
  const std::string root = DDPBENCH_SOURCE_DIR;
  const auto refs = parse_reference(read_text_file(root + "/docs/reference/example.json"), "example.json");
  const auto result = read_result_file(root + "/docs/results/h100_resnet50_b32_fp32_tf32_off.json");
  int skipped = -1;
  const auto rows = check_against(result, refs, skipped);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(skipped, 0);
  for (const auto& r : rows) EXPECT_EQ(r.status, "PASS") << r.ref.metric;
}

TEST(Check, MalformedReferencesNameTheEntry) {
  EXPECT_THROW(parse_reference("{", "r.json"), UsageError);
  EXPECT_THROW(parse_reference(R"({"references": 3})", "r.json"), UsageError);
  const std::string base = R"({"references": [{"gpu": "*", "model": "m", "world_size": 1, "metric": )";
  EXPECT_THROW(parse_reference(base + R"("speed", "value": 1}]})", "r.json"), UsageError);          // metric
  EXPECT_THROW(parse_reference(base + R"("p50_s", "value": -1}]})", "r.json"), UsageError);         // value
  EXPECT_THROW(parse_reference(base + R"("p50_s", "value": 1, "lower": 0.1}]})", "r.json"), UsageError);  // sign
  EXPECT_THROW(parse_reference(base + R"("p50_s", "value": 1, "upper": -0.1}]})", "r.json"), UsageError);
  const std::string ws0 = R"({"references": [{"gpu": "*", "model": "m", "world_size": 0, "metric": "p50_s", "value": 1}]})";
  EXPECT_THROW(parse_reference(ws0, "r.json"), UsageError);
  // null optional filters mean "any", as absent ones do
  const auto any = parse_reference(base + R"("p50_s", "value": 1, "batch_per_rank": null, "image_size": null}]})", "r.json");
  ASSERT_EQ(any.size(), 1u);
  EXPECT_FALSE(any[0].batch_per_rank.has_value());
  EXPECT_FALSE(any[0].image_size.has_value());
  try {
    parse_reference(R"({"references": [{"gpu": "*"}]})", "r.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("references[0]"));
  }
}

}  // namespace
}  // namespace ddpbench
