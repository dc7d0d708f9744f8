// `ddpbench diff`: the noise rule (bootstrap and t intervals), launches, --match and its hint,
// the text output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/analysis/check.hpp"
#include "core/analysis/diff.hpp"
#include "core/result/config_key.hpp"
#include "core/util/errors.hpp"
#include "unit/diff_check_test_util.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace diff_check_tests;

// ------------------------------------------------------------------ statistics

TEST(Bootstrap, ConstantSamplesGiveAPointIntervalAtTheShift) {
  const auto ci = bootstrap_median_diff_ci({0.2, 0.2, 0.2}, {0.25, 0.25, 0.25}, 500, 1);
  EXPECT_NEAR(ci.lo, 0.05, 1e-12);
  EXPECT_NEAR(ci.hi, 0.05, 1e-12);
  const std::vector<double> a = {0.1, 0.2, 0.3, 0.4};
  const auto same = bootstrap_median_diff_ci(a, a, 500, 1);
  EXPECT_LT(same.lo, 0.0);  // the same spread on both sides: an interval around 0
  EXPECT_GT(same.hi, 0.0);
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

TEST(TInterval, WelchByHand) {
  // means 0.100 and 0.120; s 0.002 and 0.001 (n 3 each): se^2 = 4e-6/3 + 1e-6/3,
  // Welch-Satterthwaite dof = 2.94 -> 2, t(0.975, 2) = 4.303.
  const auto ci = t_diff_ci({0.100, 0.102, 0.098}, {0.120, 0.121, 0.119});
  const double h = 4.303 * std::sqrt(4e-6 / 3 + 1e-6 / 3);
  EXPECT_NEAR(ci.lo, 0.02 - h, 1e-9);
  EXPECT_NEAR(ci.hi, 0.02 + h, 1e-9);
}

TEST(TInterval, OneObservationOnASideUsesTheOthersSpread) {
  // s of {0.12, 0.13} = 0.0070711; se = s * sqrt(1/1 + 1/2); dof 1 -> t = 12.706.
  const auto ci = t_diff_ci({0.1}, {0.12, 0.13});
  const double h = 12.706 * std::sqrt(0.00005) * std::sqrt(1.5);
  EXPECT_NEAR(ci.lo, 0.025 - h, 1e-9);
  EXPECT_NEAR(ci.hi, 0.025 + h, 1e-9);
  EXPECT_THROW(t_diff_ci({0.1}, {0.2}), std::invalid_argument);
}

// ------------------------------------------------------------------ diff

TEST(Diff, TooFewIterationsGiveNoVerdict) {
  auto base = read_result_file(kFix + "diff_base.json");
  auto test = read_result_file(kFix + "diff_test.json");
  for (auto* f : {&base, &test})
    for (auto& rk : f->results[0].ranks) rk.samples_s.resize(3);
  const auto d = diff_results(base, test);
  EXPECT_EQ(d.rows[0].verdict, "too few samples");
  EXPECT_FALSE(d.rows[0].ci.has_value());
}

TEST(Diff, FixturePairOneRealChangeOneWithinNoise) {
  DiffOptions floor10;  // a floor given with --noise-floor 10
  floor10.noise_floor = 0.10;
  const auto d =
      diff_results(read_result_file(kFix + "diff_base.json"), read_result_file(kFix + "diff_test.json"), floor10);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].key, "environment.nccl");
  EXPECT_EQ(d.changes[0].base, "2.18.1");
  EXPECT_EQ(d.changes[0].test, "2.19.3");
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].base_key.world_size, 1);
  // 10 samples symmetric around 0.100 and 0.120 s: medians exact, change +20%.
  EXPECT_NEAR(d.rows[0].base_s, 0.100, 1e-9);
  EXPECT_NEAR(d.rows[0].change, 0.2, 1e-9);
  EXPECT_NEAR(d.rows[0].test_ex_s, 32 / 0.12, 1e-6);
  EXPECT_EQ(d.rows[0].verdict, "slower");  // confirmed: the floor is the user's
  EXPECT_EQ(d.rows[0].method, "bootstrap + noise floor");
  // The bootstrap interval (about [0.0195, 0.0205] s) widened by 10% of 0.100 s on both sides.
  EXPECT_GT(d.rows[0].ci->lo, 0.0085);
  EXPECT_LT(d.rows[0].ci->lo, 0.0105);
  EXPECT_EQ(d.rows[0].base_iterations, 10);
  // diff.py's numbers: -(test - base) / base at the pooled percentiles.
  ASSERT_EQ(d.rows[0].percentiles.size(), 3u);
  EXPECT_NEAR(d.rows[0].percentiles[0].diff, -0.2, 1e-9);
  EXPECT_EQ(d.rows[1].base_key.world_size, 2);
  EXPECT_NEAR(d.rows[1].change, 0.01, 0.01);
  EXPECT_EQ(d.rows[1].verdict, "within noise");
  ASSERT_EQ(gate_failures(d, 0.15).size(), 1u);
  EXPECT_THAT(gate_failures(d, 0.15)[0], HasSubstr("slower by 20.0% (limit 15.0%)"));
  EXPECT_TRUE(gate_failures(d, 0.25).empty());
  const auto text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("environment.nccl: 2.18.1 -> 2.19.3"));
  EXPECT_THAT(text, HasSubstr("within noise"));
  EXPECT_THAT(text, HasSubstr("1 GPU 1M/1G        0.120     267  -20.0%"));
  // Without a floor one launch a side resolves only the within-launch noise: unconfirmed.
  const auto plain = diff_results(read_result_file(kFix + "diff_base.json"), read_result_file(kFix + "diff_test.json"));
  EXPECT_EQ(plain.rows[0].verdict, "slower, unconfirmed");
  EXPECT_EQ(plain.rows[0].method, "bootstrap");
  EXPECT_THAT(plain.rows[0].claim.text, HasSubstr("3 launches a side would confirm it"));
  // A CI gate fails on it (and says it is unconfirmed).
  ASSERT_EQ(gate_failures(plain, 0.15).size(), 1u);
  EXPECT_THAT(gate_failures(plain, 0.15)[0], HasSubstr("unconfirmed"));
}

// The same configuration launched twice on one H100 (docs/results): nothing recorded changed,
// and the DDP row moved +9.7% between the launches. One launch a side cannot tell that from a
// change (the change may be one the files do not record): unconfirmed, never plain "faster".
TEST(Diff, TheH100RepeatOfTheDefaultJobIsUnconfirmed) {
  const auto a = h100("h100_resnet50_b32_fp32_default.json"), b = h100("h100_resnet50_b32_fp32_default_repeat.json");
  const auto d = diff_results(a, b);
  EXPECT_TRUE(d.changes.empty());
  ASSERT_EQ(d.rows.size(), 2u);
  for (const auto& r : d.rows) {
    EXPECT_TRUE(r.differs.empty());
    EXPECT_FALSE(r.control);
    EXPECT_NE(r.verdict, "faster") << r.label;
  }
  EXPECT_EQ(d.rows[0].label, "1M/1G");  // DDP rows first, as diff.py
  EXPECT_EQ(d.rows[0].verdict, "faster, unconfirmed");
  EXPECT_NEAR(d.rows[0].change, 0.02728 / 0.03022 - 1, 0.003);
  EXPECT_EQ(d.rows[1].verdict, "within noise");
}

// Two launches of one configuration that differ only in how many iterations they measured
// (--iters 20 against --iters auto, docs/results): the DDP row moved -18.2%. One launch a side
// cannot tell that from launch-to-launch noise, and no other configuration's spread is
// borrowed for it: the verdict is unconfirmed. With a floor given it is decided.
TEST(Diff, OneLaunchASideWithoutAFloorIsUnconfirmed) {
  const auto fixed = h100("h100_resnet50_b32_default_math.json");
  const auto d = diff_results(fixed, h100("h100_resnet50_b32_default_math_iters_auto.json"));
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_NEAR(d.rows[0].change, -0.182, 0.001);
  EXPECT_EQ(d.rows[0].verdict, "faster, unconfirmed");
  DiffOptions floor20;
  floor20.noise_floor = 0.20;
  EXPECT_EQ(diff_results(fixed, h100("h100_resnet50_b32_default_math_iters_auto.json"), floor20).rows[0].verdict,
            "within noise");
  // fp32-strict against tf32: a precision A/B pairs without --match.
  const auto tf32 = diff_results(h100("h100_resnet50_b32_fp32_strict.json"), h100("h100_resnet50_b32_tf32_all.json"));
  ASSERT_EQ(tf32.rows.size(), 2u);
  EXPECT_EQ(tf32.rows[0].verdict, "faster, unconfirmed");
  EXPECT_EQ(diff_results(h100("h100_resnet50_b32_fp32_strict.json"), h100("h100_resnet50_b32_tf32_all.json"), floor20)
                .rows[0]
                .verdict,
            "faster");
}

// Files with the 1-GPU row only, its 10 samples symmetric around `center`.
ResultFile launch(double center) {
  auto f = read_result_file(kFix + "diff_base.json");
  f.results.resize(1);
  auto& s = f.results[0].ranks[0].samples_s;
  for (size_t i = 0; i < s.size(); ++i) s[i] = center + 0.0002 * (static_cast<double>(i) - 4.5);
  return f;
}

TEST(Diff, SeveralLaunchesUseTheSpreadBetweenLaunches) {
  const std::vector<NamedResult> base = {{"a1", launch(0.100)}, {"a2", launch(0.102)}, {"a3", launch(0.098)}};
  const std::vector<NamedResult> test = {{"b1", launch(0.120)}, {"b2", launch(0.121)}, {"b3", launch(0.119)}};
  const auto d = diff_results(base, test);
  ASSERT_EQ(d.rows.size(), 1u);
  const auto& r = d.rows[0];
  EXPECT_EQ(r.base_launches.size(), 3u);
  EXPECT_EQ(r.base_iterations, 30);
  EXPECT_EQ(r.method, "Welch t");
  const double h = 4.303 * std::sqrt(4e-6 / 3 + 1e-6 / 3);  // as TInterval.WelchByHand
  EXPECT_NEAR(r.ci->lo, 0.02 - h, 1e-7);
  EXPECT_NEAR(r.ci->hi, 0.02 + h, 1e-7);
  EXPECT_EQ(r.verdict, "slower");
  EXPECT_THAT(render_diff_text(d), HasSubstr("3x, 30 it"));
  // The claim names every launch it rests on.
  EXPECT_EQ(r.claim.rows.size(), 6u);
  EXPECT_EQ(r.claim.rows[0].label, "B1");
  EXPECT_EQ(r.claim.rows[5].label, "T3");
}

TEST(Diff, LaunchesThatDisagreeMakeAChangeWithinNoise) {
  // Each launch is tight, but launches of one side differ by 10%: a 5% change is noise.
  const std::vector<NamedResult> base = {{"a1", launch(0.100)}, {"a2", launch(0.110)}};
  const std::vector<NamedResult> test = {{"b1", launch(0.108)}, {"b2", launch(0.112)}};
  EXPECT_EQ(diff_results(base, test).rows[0].verdict, "within noise");
  // One launch per side with a floor of 0 given would have called it.
  DiffOptions no_floor;
  no_floor.noise_floor = 0;
  EXPECT_EQ(diff_results(launch(0.100), launch(0.108), no_floor).rows[0].verdict, "slower");
}

TEST(Diff, ALaunchGivenTwiceCountsOnce) {
  // The same launch twice per side: one launch a side, not a spread of zero.
  const std::vector<NamedResult> base = {{"a", launch(0.100)}, {"a", launch(0.100)}};
  const std::vector<NamedResult> test = {{"b", launch(0.105)}, {"b", launch(0.105)}};
  DiffOptions floor10;
  floor10.noise_floor = 0.10;
  const auto r = diff_results(base, test, floor10).rows[0];
  EXPECT_EQ(r.base_launches.size(), 1u);
  EXPECT_EQ(r.method, "bootstrap + noise floor");
  EXPECT_EQ(r.verdict, "within noise");
  EXPECT_EQ(diff_results(base, test).rows[0].verdict, "slower, unconfirmed");
}

// A precision A/B: the rows pair by default (model, batch, GPU count), and differ in precision.
TEST(Diff, APrecisionAbPairsWithoutMatch) {
  auto a = read_result_file(kFix + "diff_base.json");
  auto b = read_result_file(kFix + "diff_base.json");
  for (auto& r : b.results) r.precision = "bf16";
  const auto d = diff_results(a, b);
  ASSERT_EQ(d.rows.size(), 2u);
  ASSERT_EQ(d.rows[0].differs.size(), 2u);
  EXPECT_EQ(d.rows[0].differs[0].field, ConfigField::precision);
  EXPECT_EQ(d.rows[0].differs[1].field, ConfigField::math);  // fp32's math; bf16 has none
  EXPECT_THAT(render_diff_text(d), HasSubstr("fp32 (cuDNN TF32) -> bf16"));
  // --match all: only equal configurations pair, and the hint names what pairs them.
  DiffOptions all;
  all.match = all_fields();
  try {
    diff_results(a, b, all);
    FAIL() << "rows of different precisions paired under --match all";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("precision: fp32 -> bf16"));
    EXPECT_THAT(msg, HasSubstr("pass --match world_size (it pairs 2 row(s) of each side)"));
  }
  // Too few fields: the 1- and 2-GPU rows become indistinguishable.
  DiffOptions o;
  o.match = fields({ConfigField::model});
  EXPECT_THROW(diff_results(a, b, o), UsageError);
}

// What names the launch is not a change: the spawner's pid, job ids, GPU UUIDs, the git SHA, a
// null written for an unrecorded value. A measurement variable is.
TEST(Diff, OnlyMeasuredSettingsAreTheHeader) {
  auto a = read_result_file(kFix + "diff_base.json"), b = a;
  a.environment["env"]["DDPBENCH_LOCAL_SPAWNER"] = "1234";
  b.environment["env"]["DDPBENCH_LOCAL_SPAWNER"] = "5678";
  a.environment["env"]["DDPBENCH_JOB_ID"] = "local-1";
  b.environment["env"]["DDPBENCH_JOB_ID"] = "local-2";
  a.environment["env"]["DDPBENCH_PHASE_FILE"] = "/tmp/a/rank0";
  b.environment["env"]["DDPBENCH_PHASE_FILE"] = "/tmp/b/rank0";
  a.tool["git_sha"] = "aaaa";
  b.tool["git_sha"] = "bbbb";
  a.config["cpu_offload"] = nullptr;  // a null: the same as absent
  b.environment["env"]["NCCL_ALGO"] = "Ring";
  const auto d = diff_results(a, b);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].key, "environment.env.NCCL_ALGO");
  EXPECT_EQ(d.hidden_changes, 3);  // job id, phase file, git SHA
  DiffOptions every;
  every.all_fields = true;
  EXPECT_EQ(diff_results(a, b, every).changes.size(), 4u);
}

TEST(Diff, UnmatchedRowsAreListed) {
  auto base = read_result_file(kFix + "diff_base.json");
  auto test = read_result_file(kFix + "diff_test.json");
  test.results.pop_back();
  const auto d = diff_results(base, test);
  EXPECT_EQ(d.rows.size(), 1u);
  ASSERT_EQ(d.only_base.size(), 1u);
  EXPECT_THAT(d.only_base[0], HasSubstr("1M/2G"));
  EXPECT_THAT(d.only_base[0], HasSubstr("DDP on 2 GPUs"));
  // A CI gate does not pass on a row it never saw, however large its limit.
  const auto why = gate_failures(d, 10.0);
  ASSERT_EQ(why.size(), 1u);
  EXPECT_THAT(why[0], HasSubstr("not in the test files"));
}

// A row whose warnings void its p50 gets no faster/slower, and its warnings are beside the verdict.
TEST(Diff, AVoidedRowHasNoVerdictAndShowsItsWarnings) {
  auto base = read_result_file(kFix + "diff_base.json");
  auto test = read_result_file(kFix + "diff_test.json");
  test.results[0].warnings.push_back({"oversubscribed", "8 threads on 2 CPUs"});
  test.results[1].warnings.push_back({"noisy", "cv 7%"});
  DiffOptions floor10;
  floor10.noise_floor = 0.10;
  const auto d = diff_results(base, test, floor10);
  EXPECT_EQ(d.rows[0].verdict, "void (oversubscribed)");
  EXPECT_THAT(d.rows[0].claim.text, HasSubstr("test warnings: oversubscribed"));
  EXPECT_EQ(d.rows[1].verdict, "within noise");  // noisy voids p95 only
  EXPECT_THAT(d.rows[1].claim.text, HasSubstr("test warnings: noisy"));
  EXPECT_EQ(gate_failures(d, 0.5).size(), 1u);  // no verdict fails a gate
}

// PyTorch's diff.py example (its README, "How to diff"): bucket_cap_mb 25 against 1 on a
// resnet50 sweep over 1 to 16 GPUs (tests/fixtures/make_fixtures_diff_bucket.py). No --match:
// rows pair by GPU count, the one setting that changed is the header, the DDP rows come first
// with diff.py's +/-, and the no-DDP row, which a bucket cap cannot move, is the control whose
// change between the launches widens the others' intervals.
TEST(DiffGolden, DiffPyBucketExample) {
  const std::vector<NamedResult> base = {{"diff_bucket25.json", read_result_file(kFix + "diff_bucket25.json")}};
  const std::vector<NamedResult> test = {{"diff_bucket1.json", read_result_file(kFix + "diff_bucket1.json")}};
  const auto d = diff_results(base, test);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].key, "config.bucket_cap_mb");
  ASSERT_EQ(d.rows.size(), 6u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(d.rows[i].base_key.ddp);
    EXPECT_EQ(d.rows[i].method, "bootstrap + control") << i;
  }
  EXPECT_FALSE(d.rows[5].base_key.ddp);
  EXPECT_EQ(d.rows[5].verdict, "control");
  EXPECT_EQ(d.rows[4].verdict, "slower");  // 16 GPUs: 0.104 -> 0.108 s
  EXPECT_NEAR(d.rows[4].percentiles[1].diff, -(0.108 - 0.104) / 0.104, 2e-3);
  const std::string text = render_diff_text(d);
  EXPECT_LE(longest_line(text), kDiffTextWidth);
  const std::string path = DDPBENCH_SOURCE_DIR "/tests/golden/diff_bucket.txt";
  if (std::getenv("DDPBENCH_UPDATE_GOLDEN")) {
    std::ofstream(path) << text;
    FAIL() << "wrote " << path << " (DDPBENCH_UPDATE_GOLDEN is set): review its diff, then run without it";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, want);
}

// The message diff_results throws, or "(no error)".
std::string diff_error(const ResultFile& base, const ResultFile& test, const DiffOptions& o = {}) {
  try {
    diff_results(base, test, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

// Hand-built pair (tests/fixtures/make_fixtures_diff_match.py): one H100 sweep, no DDP and
// DDP on 1 and 2 GPUs, with TF32 off and then on; nothing else differs.
ResultFile match_base() { return read_result_file(kFix + "diff_match_base.json"); }
ResultFile match_test() { return read_result_file(kFix + "diff_match_test.json"); }

DiffOptions match_all() {
  DiffOptions o;
  o.match = all_fields();
  return o;
}

// With --match all nothing pairs: the hint is the shortest list that pairs these files' rows,
// computed from them (ddp tells the no-DDP row from the 1-GPU row, world_size the 1- from
// the 2-GPU row; math and precision differ between the sides only, so they are not in it),
// and that list does pair every row. The default pairs them too.
TEST(DiffMatch, TheHintIsTheShortestListThatPairsTheFixtureRows) {
  const auto msg = diff_error(match_base(), match_test(), match_all());
  EXPECT_THAT(msg, HasSubstr("(the closest differ in math: no-tf32 -> tf32)"));
  EXPECT_THAT(msg, HasSubstr("pass --match world_size,ddp (it pairs 3 row(s) of each side)"));
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  const auto s = suggest_match({{"a", match_base()}}, {{"b", match_test()}});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(match_list(s->fields), "world_size,ddp");
  EXPECT_EQ(s->pairs, 3u);
  DiffOptions o;
  o.match = s->fields;
  const auto d = diff_results(match_base(), match_test(), o);
  ASSERT_EQ(d.rows.size(), 3u);
  EXPECT_TRUE(d.only_base.empty());
  EXPECT_TRUE(d.only_test.empty());
  EXPECT_FALSE(d.better_match.has_value());
  EXPECT_EQ(diff_results(match_base(), match_test()).rows.size(), 3u);  // the default
  // One field less is not enough: each leaves two rows of a side alike.
  o.match = fields({ConfigField::ddp});
  EXPECT_THAT(diff_error(match_base(), match_test(), o), HasSubstr("alike"));
  o.match = fields({ConfigField::world_size});
  EXPECT_THAT(diff_error(match_base(), match_test(), o), HasSubstr("alike"));
}

// What differs between the sides never enters the hint, even where it also tells rows apart
// on one side: with the batch doubled on the test side, global_batch (32, 32, 64 against 64,
// 64, 128) would pair the base's 2-GPU row with the test's 1-GPU rows; world_size does not.
TEST(DiffMatch, AFieldThatChangedBetweenTheSidesIsNotSuggested) {
  auto test = match_test();
  for (auto& r : test.results) {
    r.batch_per_rank = 64;
    r.global_batch = 64LL * r.world_size;
  }
  const auto msg = diff_error(match_base(), test);  // the default pairs on the batch: nothing pairs
  EXPECT_THAT(msg, HasSubstr("pass --match world_size,ddp (it pairs 3 row(s) of each side)"));
  DiffOptions o;
  o.match = parse_field_list("world_size,ddp");
  const auto d = diff_results(match_base(), test, o);
  ASSERT_EQ(d.rows.size(), 3u);
  EXPECT_EQ(describe_differences(d.rows[1].differs),
            "math: no-tf32 -> tf32; batch_per_rank: 32 -> 64; global_batch: 64 -> 128");
  EXPECT_THAT(render_diff_text(d), HasSubstr("with batch size 32 -> 64"));
}

// The H100 files of docs/results under --match all: fp32-strict against tf32, a no-DDP and a
// 1-GPU row each. The hint is ddp alone (not backend or the bucket caps, which split the rows alike).
TEST(DiffMatch, TheH100Fp32StrictAgainstTf32HintIsDdp) {
  const auto strict = h100("h100_resnet50_b32_fp32_strict.json"), tf32 = h100("h100_resnet50_b32_tf32_all.json");
  const auto msg = diff_error(strict, tf32, match_all());
  EXPECT_THAT(msg, HasSubstr("(the closest differ in math: no-tf32 -> tf32)"));
  EXPECT_THAT(msg, HasSubstr("pass --match ddp (it pairs 2 row(s) of each side)"));
  DiffOptions o;
  o.match = parse_field_list("ddp");
  const auto d = diff_results(strict, tf32, o);
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].label, "1M/1G");  // DDP rows first
  EXPECT_EQ(d.rows[1].label, "no ddp");
}

// One row a side under --match all: nothing tells rows apart, so the hint is the plainest field
// the two agree on.
TEST(DiffMatch, OneRowASidePairsOnTheModel) {
  auto a = read_result_file(kFix + "diff_base.json"), b = a;
  a.results.resize(1);
  b.results.resize(1);
  b.results[0].precision = "bf16";
  EXPECT_THAT(diff_error(a, b, match_all()), HasSubstr("pass --match model (it pairs 1 row(s) of each side)"));
  b.results[0].model = "vit_b_16";
  EXPECT_THAT(diff_error(a, b), HasSubstr("pass --match ddp (it pairs 1 row(s) of each side)"));
}

// When some rows pair and others are left on both sides (--match all), a note names the --match
// that pairs more: here the DDP rows of the test side ran with a comm hook. The default pairs them.
TEST(DiffMatch, RowsLeftOnBothSidesGetTheMatchThatPairsThem) {
  auto test = match_base();
  for (auto& r : test.results)
    if (r.ddp) r.ddp_options.comm_hook = "fp16";
  const auto d = diff_results(match_base(), test, match_all());
  ASSERT_EQ(d.rows.size(), 1u);  // the no-DDP rows: the same configuration
  ASSERT_TRUE(d.better_match.has_value());
  // The no-DDP rows pair first, exactly; world_size then tells the DDP rows apart.
  EXPECT_EQ(match_list(d.better_match->fields), "world_size");
  EXPECT_EQ(d.better_match->pairs, 3u);
  const auto text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("2 base and 2 test row(s) did not pair; --match world_size pairs 3 row(s) of each side"));
  EXPECT_EQ(diff_json(d)["better_match"]["match"], "world_size");
  const auto paired = diff_results(match_base(), test);
  EXPECT_EQ(paired.rows.size(), 3u);
  EXPECT_THAT(render_diff_text(paired), HasSubstr("comm_hook: none -> fp16"));
}

// Each side's setup: in the benchmark's title, and in JSON.
TEST(DiffMatch, EachSidesSetupIsShown) {
  const auto d = diff_results(match_base(), match_test());
  ASSERT_EQ(d.rows.size(), 3u);
  const auto text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("Benchmark: resnet50 with batch size 32 (224 px, fp32-strict -> tf32, NVIDIA H100"));
  EXPECT_THAT(text, HasSubstr("2 GPUs 1M/2G       0.036     889  +28.0%"));  // 0.050 -> 0.036 s
  const auto j = diff_json(d);
  EXPECT_EQ(j["rows"][1]["setup"], "fp32-strict");
  EXPECT_EQ(j["rows"][1]["test_setup"], "tf32");
  EXPECT_EQ(j["claims"].size(), 3u);
  EXPECT_EQ(j["claims"][1]["kind"], "diff_row");
  const auto md = render_diff_markdown(d);
  EXPECT_THAT(md, HasSubstr("| 2 GPUs 1M/2G | 0.036 | 889 | +28.0% |"));
}

// A pair built to be wide: long setups on both sides (channels_last, a frozen backbone, every
// DDP knob), file names of 120 characters, three launches a side, the H100 rows' metrics.
std::vector<NamedResult> wide_side(bool test) {
  auto f = test ? match_test() : match_base();
  f.config["channels_last"] = true;
  f.config["freeze_backbone"] = true;
  f.config["head"] = "mlp4096";
  for (auto& r : f.results) {
    if (!r.ddp) continue;
    r.ddp_options =
        nlohmann::json{
            {"bucket_cap_mb", test ? 100.0 : 50.0},     {"first_bucket_cap_mb", 2.0}, {"broadcast_buffers", false},
            {"gradient_as_bucket_view", true},          {"static_graph", !test},      {"find_unused_parameters", test},
            {"comm_hook", test ? "powersgd:2" : "fp16"}}
            .get<RowDdpOptions>();
    r.telemetry.peak_memory_bytes_max_over_ranks = 3308238848LL;
  }
  std::vector<NamedResult> side;
  for (int i = 0; i < 3; ++i) {
    auto g = f;  // three launches that differ a little
    for (auto& r : g.results)
      for (auto& rk : r.ranks)
        for (auto& x : rk.samples_s) x *= 1 + 0.01 * i;
    side.push_back({fmt::format("/{}/launch{}-{}.json", std::string(100, test ? 't' : 'b'), i, test), g});
  }
  return side;
}

// The default text fits 100 columns whatever the rows hold; --wide (width 0) keeps one line per
// row with the verdict and warnings beside the numbers.
TEST(DiffText, DefaultOutputFitsOneHundredColumns) {
  const auto h = diff_results(h100("h100_resnet50_b32_fp32_strict.json"), h100("h100_resnet50_b32_tf32_all.json"));
  const auto wide = diff_results(wide_side(false), wide_side(true));
  const std::vector<std::pair<std::string, DiffReport>> cases = {
      {"fixture", diff_results(match_base(), match_test())},
      {"h100", h},
      {"wide", wide},
      {"repeat",
       diff_results(h100("h100_resnet50_b32_fp32_default.json"), h100("h100_resnet50_b32_fp32_default_repeat.json"))}};
  for (const auto& [name, d] : cases) {
    const auto text = render_diff_text(d);
    EXPECT_LE(longest_line(text), 100u) << name << "\n" << text;
    // --wide: one line per row, its verdict on it.
    const auto one = render_diff_text(d, 0);
    const std::string last = diff_row_name(d.rows.back());
    EXPECT_EQ(lines_starting(one, last), 1u) << name << "\n" << one;
    EXPECT_THAT(one, HasSubstr(d.rows.back().verdict)) << name;
  }
  EXPECT_GT(longest_line(render_diff_text(h, 0)), 100u);
  const auto text = render_diff_text(wide);
  EXPECT_THAT(text, HasSubstr("3x, 30 it"));
  std::string flat;  // the text with its wrapping undone
  for (const auto& l : lines_of(text)) flat += " " + l.substr(std::min(l.find_first_not_of(' '), l.size()));
  EXPECT_THAT(flat, HasSubstr("comm_hook: fp16 -> powersgd:2"));
  EXPECT_THAT(flat, HasSubstr("Base: /" + std::string(100, 'b').substr(0, 80)));
}
}  // namespace
}  // namespace ddpbench
