// `ddpbench report`'s row rules on hand-built files (tests/fixtures/rules_*.json) and the
// docs/results files: repeated files and launches, ranks sharing a GPU, MFU peaks, definitions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>

#include "common/testutil.hpp"
#include "core/render/plots.hpp"
#include "core/render/report_tables.hpp"
#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"
#include "unit/report_test_util.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using namespace report_tests;

// ------------------------------------------------------------------ row rules
// tests/fixtures/make_fixtures_report_rules.py holds the hand numbers of the rules_*.json files.

const std::string kDocs = DDPBENCH_SOURCE_DIR "/docs/results/";

std::vector<NamedResult> load_docs(const std::vector<std::string>& names) {
  std::vector<NamedResult> out;
  for (const auto& n : names) out.push_back({"docs/results/" + n, read_result_file(kDocs + n)});
  return out;
}

std::string line_with(const std::string& text, const std::string& start) {
  const size_t at = text.find("\n" + start);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

// A file given twice is one launch: no spread of 0.0% from a launch compared with itself.
TEST(ReportRules, AFileGivenTwiceIsOneLaunch) {
  const Report r = build_report(load({"rules_launch_1.json", "rules_launch_1.json"}), {});
  ASSERT_EQ(r.weak.size(), 1u);
  const WeakRow& row = r.weak[0].rows[0];
  EXPECT_EQ(row.launch.launches, 1);
  EXPECT_FALSE(row.launch.spread.has_value());
  EXPECT_EQ(row.launch.file, "F1");
  ASSERT_EQ(r.repeats.size(), 1u);
  EXPECT_EQ(r.repeats[0].file, "F2");
  EXPECT_EQ(r.repeats[0].of, "F1");
  EXPECT_EQ(r.repeats[0].why, "the same content");
  EXPECT_EQ(r.repeated_files, std::vector<std::string>{"F2"});
  const std::string text = render_report(r, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("\n1 GPU: F1; F2 repeats F1 (the same content): counted once\n"));
  EXPECT_THAT(text, HasSubstr("- Scope: 1 launch (2 files) on 1 node with 1 x NVIDIA H100 80GB HBM3;"));
  EXPECT_THAT(text, HasSubstr("F2 repeats F1 (the same content), counted once."));
  EXPECT_EQ(text.find("spread 0.0%"), std::string::npos) << text;
}

// The H100 bf16 and fp16 channels_last files, each given twice: still one launch each, so no
// launch-to-launch spread is measured for either setup (a file compared with itself measures
// nothing): the claim says so instead of calling +13.0% beyond or within a noise floor.
TEST(ReportRules, RepeatedFilesDoNotLowerTheNoiseFloor) {
  const auto files = load_docs({"h100_resnet50_bf16_cl_b256.json", "h100_resnet50_bf16_cl_b256.json",
                                "h100_resnet50_fp16_cl_b256.json", "h100_resnet50_fp16_cl_b256.json"});
  const Report r = build_report(files, {});
  std::vector<std::string> setup;
  for (const auto& x : r.summary.recommendations)
    if (x.topic == "setup") setup.push_back(x.text + " [" + x.from + "]");
  EXPECT_EQ(setup, std::vector<std::string>{
                       "resnet50, channels_last, batch 256 per GPU, 224 px, NVIDIA H100 80GB HBM3 on 1 rank: the "
                       "fastest setup measured is ddp, fp16 at 4124.5 aggregate ex/s; ddp, bf16 at 3650.9 ex/s (the "
                       "fastest +13.0%) differs from it by more than the rows' own 95% confidence intervals, but the "
                       "launch-to-launch noise of ddp, fp16 and ddp, bf16 is unmeasured (one launch each): 3 launches "
                       "of each would measure it; peak memory per GPU: ddp, fp16 11.10 GiB and ddp, bf16 11.20 GiB. "
                       "[strategy comparison, F3 vs F1]"});
  EXPECT_EQ(r.repeated_files, (std::vector<std::string>{"F2", "F4"}));
}

// A second file with the first launch's job id and start time (its content differs) is that
// launch again; of the two launches left, the slower is shown and named.
TEST(ReportRules, TheSameJobAndStartIsOneLaunchAndOfTwoTheSlowerIsShown) {
  const Report r =
      build_report(load({"rules_launch_1.json", "rules_launch_2.json", "rules_launch_1_again.json"}), {});
  ASSERT_EQ(r.weak.size(), 1u);
  const WeakRow& row = r.weak[0].rows[0];
  EXPECT_EQ(row.launch.launches, 2);
  EXPECT_EQ(row.launch.all, (std::vector<std::string>{"F1", "F2"}));
  EXPECT_EQ(row.launch.file, "F2");                     // 0.032 s, not the faster 0.025 s
  EXPECT_NEAR(row.per_gpu_ex_s, 32 / 0.032, 1e-9);      // 1000.0
  EXPECT_NEAR(*row.launch.spread, 0.007 / 0.032, 1e-12);  // 21.9%
  EXPECT_NEAR(*row.ddp_overhead, 1 - (32 / 0.032) / (32 / 0.021), 1e-12);  // its own no-DDP row: 34.4%
  EXPECT_EQ(row.baseline_file, "F2");
  const std::string text = render_report(r, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("\n1         1        1000.0          1000.0      100.0%                   34.4%      "
                              "0.0320      passed    F2\n"));
  EXPECT_THAT(text, HasSubstr("1 GPU: F2: the slower middle p50 of 2 launches (F1, F2), spread 21.9%; F3 repeats F1 "
                              "(the same job id 1001 started"));
  EXPECT_THAT(text, HasSubstr("- Scope: 2 launches (3 files) on 1 node"));

  // Four launches (0.025, 0.028, 0.030, 0.032 s): the slower middle one, 0.030 s.
  auto four = load({"rules_launch_1.json", "rules_launch_2.json", "rules_launch_2.json", "rules_launch_2.json"});
  for (size_t i = 2; i < 4; ++i) {
    BenchResult& ddp = four[i].file.results[1];
    const double p50 = i == 2 ? 0.028 : 0.030;
    for (double& x : ddp.ranks[0].samples_s) x += p50 - 0.032;
    ddp.summary = summarize({ddp.ranks[0].samples_s}, 32, 1);
    for (auto& x : four[i].file.results) x.launch = {{"job_id", std::to_string(2000 + i)}, {"started_utc", "t"}};
  }
  const Report r4 = build_report(four, {});
  const WeakRow& mid = r4.weak[0].rows[0];
  EXPECT_EQ(mid.launch.launches, 4);
  EXPECT_NEAR(mid.p50_s, 0.030, 1e-12);
  EXPECT_EQ(mid.launch.file, "F4");
  EXPECT_EQ(launch_words(mid.launch), "F4: the slower middle p50 of 4 launches (F1, F2, F3, F4), spread 23.3%");
}

// Two ranks on one GPU: DDP overhead by throughput (37.5%, not the 68.8% of the step times),
// no efficiency, flagged for the plots, not priced, held to no scaling target.
TEST(ReportRules, RanksSharingAGpuShowOverheadByThroughputAndAreNeverScaling) {
  const Report r = build_report(load({"rules_shared_gpu.json"}), cost_opts());
  ASSERT_EQ(r.weak.size(), 1u);
  const auto& rows = r.weak[0].rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].shared_gpu);
  EXPECT_TRUE(rows[1].shared_gpu);
  EXPECT_EQ(rows[1].devices, 1);
  EXPECT_NEAR(rows[1].per_gpu_ex_s, 2 * 32 / 0.032, 1e-9);                // 2000.0
  EXPECT_NEAR(*rows[1].ddp_overhead, 1 - 2000.0 / (32 / 0.010), 1e-12);  // 37.5%
  EXPECT_NEAR(*rows[0].ddp_overhead, (0.0125 - 0.010) / 0.0125, 1e-12);  // one rank per GPU: the step-time form
  EXPECT_NEAR(ddp_overhead_by_throughput(2560, 3200), 0.2, 1e-15);
  ASSERT_EQ(r.cost.size(), 1u);
  ASSERT_EQ(r.cost[0].rows.size(), 1u);
  EXPECT_EQ(r.cost[0].not_priced,
            std::vector<std::string>{"fp32 (cuDNN TF32), gloo, batch 32 per GPU: 2 ranks on 1 GPU (F1)"});
  const std::string text = render_report(r, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("\n2         1      1        2000.0          2000.0         n/a                   "
                              "37.5%      0.0320      passed    F1\n"));
  EXPECT_THAT(text, HasSubstr("2 ranks ran on 1 GPU (the same GPU UUID or bus id): this row measures sharing, not "
                              "scaling"));
  EXPECT_THAT(text, HasSubstr("2 ranks on 1 GPU (F1): not priced"));
  // Its table's largest scaling row is one GPU: its scaling targets are not evaluated, and the
  // headline says why.
  for (const auto& c : r.summary.checks)
    if (c.metric == "weak-scaling efficiency") EXPECT_EQ(c.status, "not measured (1 GPU only)");
  EXPECT_THAT(line_with(text, "- Data quality"),
              HasSubstr("ranks sharing a GPU, not scaling: F1 (2 ranks on 1 GPU)"));
}

// Each row names the peak its MFU divides by; MFUs of different peaks are said not to compare.
TEST(ReportRules, MfuNamesItsPeakAndDifferentPeaksAreNotRanked) {
  const Report r = build_report(load({"rules_mfu_fp32_strict.json", "rules_mfu_tf32.json"}), {});
  ASSERT_EQ(r.weak.size(), 2u);
  const WeakRow& strict = r.weak[0].key.setup_label() == "fp32-strict" ? r.weak[0].rows[0] : r.weak[1].rows[0];
  const WeakRow& tf32 = r.weak[0].key.setup_label() == "fp32-strict" ? r.weak[1].rows[0] : r.weak[0].rows[0];
  const double flops = 6 * 4089184256.0;
  EXPECT_NEAR(*strict.mfu, flops * 32 / 0.044 / 1e12 / 67, 1e-12);     // 26.6%
  EXPECT_NEAR(*tf32.mfu, flops * 32 / 0.028 / 1e12 / 494.5, 1e-12);    // 5.7%
  EXPECT_EQ(strict.mfu_peak.short_label(), "FP32 67 TFLOP/s");
  EXPECT_EQ(strict.mfu_peak.basis, "FP32 peak (TF32 off)");  // not recorded: from the math that ran
  EXPECT_EQ(tf32.mfu_peak.short_label(), "TF32 494.5 TFLOP/s");
  EXPECT_FALSE(strict.mfu_peak.same_as(tf32.mfu_peak));
  const std::string text = render_report(r, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("17.84  26.6%  FP32 67 TFLOP/s"));
  EXPECT_THAT(text, HasSubstr("28.04  5.7%  TF32 494.5 TFLOP/s"));
  const auto tables = report_tables(r);
  const Table& d = table_of_kind(tables, "definitions");
  const auto mfu = std::find_if(d.rows.begin(), d.rows.end(), [](const std::vector<Value>& x) {
    return std::get<std::string>(x[0]).find("MFU") != std::string::npos;
  });
  ASSERT_NE(mfu, d.rows.end());
  EXPECT_THAT(std::get<std::string>((*mfu)[1]),
              HasSubstr("Peaks here: FP32 67 TFLOP/s (FP32 peak (TF32 off): F1); TF32 494.5 TFLOP/s (TF32 dense "
                        "tensor-core peak: F2). MFUs of different peaks are not comparable and are never ranked"));
  // One peak: nothing to warn about.
  const Report one = build_report(load({"rules_mfu_tf32.json"}), {});
  EXPECT_EQ(render_report(one, TableFormat::text).find("not comparable"), std::string::npos);
}

// Definitions are stated once, not under every table.
TEST(ReportRules, DefinitionsAreStatedOnce) {
  const std::string text = render_report(build_report(all_fixtures(), cost_opts()), TableFormat::text);
  EXPECT_EQ(count_of(text, "need the per-step breakdown"), 1u) << text;
  EXPECT_EQ(count_of(text, "DDP overhead vs no-DDP: 1 - per-"), 1u) << text;
  EXPECT_EQ(count_of(text, "the largest peak over the row's ranks"), 1u) << text;
  EXPECT_EQ(count_of(text, "== Definitions =="), 1u);
}
}  // namespace
}  // namespace ddpbench
