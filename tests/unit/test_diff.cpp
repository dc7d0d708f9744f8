// `ddpbench diff`: the noise rule (bootstrap and t intervals), launches, --match and its hint,
// the text output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
  EXPECT_EQ(d.rows[0].verdict, "slower");
  EXPECT_EQ(d.rows[0].method, "bootstrap + noise floor");
  // The bootstrap interval (about [0.0195, 0.0205] s) widened by 10% of 0.100 s on both sides.
  EXPECT_GT(d.rows[0].ci->lo, 0.0085);
  EXPECT_LT(d.rows[0].ci->lo, 0.0105);
  EXPECT_EQ(d.rows[0].base_iterations, 10);
  EXPECT_EQ(d.rows[1].base_key.world_size, 2);
  EXPECT_NEAR(d.rows[1].change, 0.01, 0.01);
  EXPECT_EQ(d.rows[1].verdict, "within noise");
  ASSERT_EQ(gate_failures(d, 0.15).size(), 1u);
  EXPECT_THAT(gate_failures(d, 0.15)[0], HasSubstr("slower by 20.0% (limit 15.0%)"));
  EXPECT_TRUE(gate_failures(d, 0.25).empty());
  const auto text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("environment.nccl: 2.18.1 -> 2.19.3"));
  EXPECT_THAT(text, HasSubstr("within noise"));
  EXPECT_THAT(text, HasSubstr("1x10"));  // n: 1 launch x 10 iterations
}

// The same configuration launched twice on one H100 (docs/results): the DDP row's p50
// moved 9.7% between the launches. One launch per side cannot tell that from a change.
TEST(Diff, TheH100RepeatOfTheDefaultJobIsWithinNoise) {
  const auto a = h100("h100_resnet50_b32_fp32_default.json"), b = h100("h100_resnet50_b32_fp32_default_repeat.json");
  const auto d = diff_results(a, b);
  EXPECT_TRUE(d.changes.empty());
  ASSERT_EQ(d.rows.size(), 2u);
  for (const auto& r : d.rows) {
    EXPECT_TRUE(r.differs.empty());
    EXPECT_EQ(r.verdict, "within noise") << r.label;
  }
  EXPECT_NEAR(d.rows[1].change, 0.02728 / 0.03022 - 1, 0.003);
  // Without the floor the within-launch bootstrap alone would call it faster: the floor decides.
  DiffOptions no_floor;
  no_floor.noise_floor = 0;
  EXPECT_EQ(diff_results(a, b, no_floor).rows[1].verdict, "faster");
}

// Two launches of one configuration that differ only in how many iterations they measured
// (--iters 20 against --iters auto, docs/results): the DDP row moved -18.2%. The default floor,
// the spread measured on H100 (19.5%), keeps that within noise, while turning TF32 on (a
// real change: 44.4 -> 29.3 ms, -34%) still gets its verdict.
TEST(Diff, TheDefaultFloorIsTheMeasuredSpreadOfTheDevice) {
  const auto fixed = h100("h100_resnet50_b32_default_math.json");
  const auto d = diff_results(fixed, h100("h100_resnet50_b32_default_math_iters_auto.json"));
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_NEAR(d.rows[1].change, -0.182, 0.001);
  EXPECT_EQ(d.rows[1].verdict, "within noise");
  EXPECT_DOUBLE_EQ(d.rows[1].noise_floor, 0.195);
  EXPECT_EQ(d.rows[1].floor_basis, "NVIDIA H100");
  DiffOptions old_floor;
  old_floor.noise_floor = 0.10;  // the former default called it faster
  EXPECT_EQ(diff_results(fixed, h100("h100_resnet50_b32_default_math_iters_auto.json"), old_floor).rows[1].verdict,
            "faster");
  DiffOptions across_math;
  across_math.match = parse_field_list("device,model,image_size,batch_per_rank,world_size,ddp", "--match");
  const auto tf32 =
      diff_results(h100("h100_resnet50_b32_fp32_strict.json"), h100("h100_resnet50_b32_tf32_all.json"), across_math);
  ASSERT_EQ(tf32.rows.size(), 2u);
  EXPECT_EQ(tf32.rows[1].verdict, "faster");
  EXPECT_EQ(measured_launch_spread("CPU (AMD EPYC)").spread, 0.198);
  EXPECT_STREQ(measured_launch_spread("NVIDIA B200").device, "");  // unmeasured: the widest measured
  EXPECT_EQ(measured_launch_spread("NVIDIA B200").spread, 0.198);
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
}

TEST(Diff, LaunchesThatDisagreeMakeAChangeWithinNoise) {
  // Each launch is tight, but launches of one side differ by 10%: a 5% change is noise.
  const std::vector<NamedResult> base = {{"a1", launch(0.100)}, {"a2", launch(0.110)}};
  const std::vector<NamedResult> test = {{"b1", launch(0.108)}, {"b2", launch(0.112)}};
  EXPECT_EQ(diff_results(base, test).rows[0].verdict, "within noise");
  // One launch per side with no floor would have called it.
  DiffOptions no_floor;
  no_floor.noise_floor = 0;
  EXPECT_EQ(diff_results(launch(0.100), launch(0.108), no_floor).rows[0].verdict, "slower");
}

TEST(Diff, LaunchesWithoutSpreadFallBackToTheFloor) {
  // The same launch twice per side: zero spread is no evidence of a small one.
  const std::vector<NamedResult> base = {{"a", launch(0.100)}, {"a", launch(0.100)}};
  const std::vector<NamedResult> test = {{"b", launch(0.105)}, {"b", launch(0.105)}};
  DiffOptions floor10;
  floor10.noise_floor = 0.10;
  const auto r = diff_results(base, test, floor10).rows[0];
  EXPECT_EQ(r.method, "Welch t + noise floor");
  EXPECT_NEAR(r.ci->lo, 0.005 - 0.010, 1e-9);
  EXPECT_NEAR(r.ci->hi, 0.005 + 0.010, 1e-9);
  EXPECT_EQ(r.verdict, "within noise");
}

TEST(Diff, MatchPairsAcrossAChangedPrecision) {
  auto a = read_result_file(kFix + "diff_base.json");
  auto b = read_result_file(kFix + "diff_base.json");
  for (auto& r : b.results) r.precision = "bf16";
  try {
    diff_results(a, b);
    FAIL() << "rows of different precisions paired";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("precision: fp32 -> bf16"));
    // The rows of each side differ in world_size (and so global_batch) only: that pairs them.
    EXPECT_THAT(msg, HasSubstr("pass --match world_size (it pairs 2 row(s) of each side)"));
  }
  DiffOptions o;
  o.match = all_fields() & ~fields({ConfigField::precision, ConfigField::math});
  const auto d = diff_results(a, b, o);
  ASSERT_EQ(d.rows.size(), 2u);
  ASSERT_EQ(d.rows[0].differs.size(), 2u);
  EXPECT_EQ(d.rows[0].differs[0].field, ConfigField::precision);
  EXPECT_EQ(d.rows[0].differs[1].field, ConfigField::math);  // fp32's math; bf16 has none
  EXPECT_THAT(render_diff_text(d), HasSubstr("precision: fp32 -> bf16"));
  // Too few fields: the 1- and 2-GPU rows become indistinguishable.
  o.match = fields({ConfigField::model});
  EXPECT_THROW(diff_results(a, b, o), UsageError);
}

TEST(Diff, TheSpawnerPidIsNotAChange) {
  auto a = read_result_file(kFix + "diff_base.json"), b = a;
  a.environment["env"]["DDPBENCH_LOCAL_SPAWNER"] = "1234";
  b.environment["env"]["DDPBENCH_LOCAL_SPAWNER"] = "5678";
  b.environment["env"]["NCCL_ALGO"] = "Ring";
  const auto d = diff_results(a, b);
  ASSERT_EQ(d.changes.size(), 1u);
  EXPECT_EQ(d.changes[0].key, "environment.env.NCCL_ALGO");
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

// The message diff_results throws, or "(no error)".
std::string diff_error(const ResultFile& base, const ResultFile& test, const DiffOptions& o = {}) {
  try {
    diff_results(base, test, o);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

// The cell of the row named `row` under `header` in diff's text: the part whose header line
// holds `header` (columns after the first are right-aligned: a cell ends where its header
// ends, and cells are separated by at least two spaces). "(none)" when there is no such cell.
std::string column_cell(const std::string& text, const std::string& row, const std::string& header) {
  size_t end = std::string::npos;
  for (const auto& line : lines_of(text)) {
    if (line.rfind("row ", 0) == 0) {
      const size_t at = line.find("  " + header);
      const size_t e = at == std::string::npos ? std::string::npos : at + 2 + header.size();
      end = e != std::string::npos && (e == line.size() || line[e] == ' ') ? e : std::string::npos;
      continue;
    }
    if (end == std::string::npos || line.rfind(row + "  ", 0) != 0 || line.size() < end) continue;
    const std::string head = line.substr(0, end);
    const size_t gap = head.rfind("  ");
    return head.substr(head.find_first_not_of(' ', gap));
  }
  return "(none)";
}

// Hand-built pair (tests/fixtures/make_fixtures_diff_match.py): one H100 sweep, no DDP and
// DDP on 1 and 2 GPUs, with TF32 off and then on; nothing else differs.
ResultFile match_base() { return read_result_file(kFix + "diff_match_base.json"); }
ResultFile match_test() { return read_result_file(kFix + "diff_match_test.json"); }

// Without --match nothing pairs: the hint is the shortest list that pairs these files' rows,
// computed from them (ddp tells the no-DDP row from the 1-GPU row, world_size the 1- from
// the 2-GPU row; math and precision differ between the sides only, so they are not in it),
// and that list does pair every row.
TEST(DiffMatch, TheHintIsTheShortestListThatPairsTheFixtureRows) {
  const auto msg = diff_error(match_base(), match_test());
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
  const auto msg = diff_error(match_base(), test);
  EXPECT_THAT(msg, HasSubstr("pass --match world_size,ddp (it pairs 3 row(s) of each side)"));
  DiffOptions o;
  o.match = parse_field_list("world_size,ddp");
  const auto d = diff_results(match_base(), test, o);
  ASSERT_EQ(d.rows.size(), 3u);
  EXPECT_EQ(describe_differences(d.rows[2].differs),
            "math: no-tf32 -> tf32; batch_per_rank: 32 -> 64; global_batch: 64 -> 128");
  EXPECT_EQ(column_cell(render_diff_text(d), "resnet50 1M/2G", "batch"), "32 -> 64");
}

// The H100 files of docs/results: fp32-strict against tf32, a no-DDP and a 1-GPU row each.
// The hint is ddp alone (not backend or the bucket caps, which split the rows alike).
TEST(DiffMatch, TheH100Fp32StrictAgainstTf32HintIsDdp) {
  const auto strict = h100("h100_resnet50_b32_fp32_strict.json"), tf32 = h100("h100_resnet50_b32_tf32_all.json");
  const auto msg = diff_error(strict, tf32);
  EXPECT_THAT(msg, HasSubstr("(the closest differ in math: no-tf32 -> tf32)"));
  EXPECT_THAT(msg, HasSubstr("pass --match ddp (it pairs 2 row(s) of each side)"));
  DiffOptions o;
  o.match = parse_field_list("ddp");
  const auto d = diff_results(strict, tf32, o);
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[0].label, "no ddp");
  EXPECT_EQ(d.rows[1].label, "1M/1G");
  EXPECT_EQ(d.rows[1].test_label, "1M/1G");
}

// One row a side: nothing tells rows apart, so the hint is the plainest field the two agree on.
TEST(DiffMatch, OneRowASidePairsOnTheModel) {
  auto a = read_result_file(kFix + "diff_base.json"), b = a;
  a.results.resize(1);
  b.results.resize(1);
  b.results[0].precision = "bf16";
  EXPECT_THAT(diff_error(a, b), HasSubstr("pass --match model (it pairs 1 row(s) of each side)"));
  b.results[0].model = "vit_b_16";
  EXPECT_THAT(diff_error(a, b), HasSubstr("pass --match ddp (it pairs 1 row(s) of each side)"));
}

// When some rows pair and others are left on both sides, a note names the --match that
// pairs more: here the DDP rows of the test side ran with a comm hook.
TEST(DiffMatch, RowsLeftOnBothSidesGetTheMatchThatPairsThem) {
  auto test = match_base();
  for (auto& r : test.results)
    if (r.ddp) r.ddp_options.comm_hook = "fp16";
  const auto d = diff_results(match_base(), test);
  ASSERT_EQ(d.rows.size(), 1u);  // the no-DDP rows: the same configuration
  ASSERT_TRUE(d.better_match.has_value());
  // The no-DDP rows pair first, exactly; world_size then tells the DDP rows apart.
  EXPECT_EQ(match_list(d.better_match->fields), "world_size");
  EXPECT_EQ(d.better_match->pairs, 3u);
  const auto text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("2 base and 2 test row(s) did not pair; --match world_size pairs 3 row(s) of each side"));
  EXPECT_EQ(diff_json(d)["better_match"]["match"], "world_size");
  DiffOptions o;
  o.match = d.better_match->fields;
  const auto paired = diff_results(match_base(), test, o);
  EXPECT_EQ(paired.rows.size(), 3u);
  EXPECT_EQ(column_cell(render_diff_text(paired), "resnet50 1M/2G", "setup"),
            "fp32-strict -> fp32-strict, comm hook fp16");
}

// With --match the setup column shows each side's own setup, in text, Markdown and JSON.
TEST(DiffMatch, TheSetupColumnShowsEachSide) {
  DiffOptions o;
  o.match = parse_field_list("world_size,ddp");
  const auto d = diff_results(match_base(), match_test(), o);
  ASSERT_EQ(d.rows.size(), 3u);
  const auto text = render_diff_text(d);
  for (const std::string row : {"resnet50 no ddp", "resnet50 1M/1G", "resnet50 1M/2G"}) {
    EXPECT_EQ(column_cell(text, row, "setup"), "fp32-strict -> tf32") << row;
    EXPECT_EQ(column_cell(text, row, "batch"), "32") << row;
  }
  EXPECT_EQ(column_cell(text, "resnet50 1M/2G", "verdict"), "faster");
  EXPECT_EQ(column_cell(text, "resnet50 1M/2G", "change"), "-28.0%");  // 0.050 -> 0.036 s
  EXPECT_THAT(text, HasSubstr("Rows paired on --match world_size,ddp; the other fields may differ."));
  EXPECT_THAT(text, HasSubstr("Outside --match, every pair differs in math: no-tf32 -> tf32\n"));
  const auto j = diff_json(d);
  EXPECT_EQ(j["rows"][2]["setup"], "fp32-strict");
  EXPECT_EQ(j["rows"][2]["test_setup"], "tf32");
  EXPECT_EQ(j["match"], "world_size,ddp");
  const auto md = render_diff_markdown(d);
  EXPECT_THAT(md, HasSubstr("| resnet50 1M/2G | 0.0500 | 0.0360 | -28.0% |"));
  EXPECT_THAT(md, HasSubstr("| faster | fp32-strict -> tf32 | 32 |"));
  // Rows of the same setup show it once.
  const auto same = diff_results(match_base(), match_base());
  EXPECT_EQ(column_cell(render_diff_text(same), "resnet50 1M/1G", "setup"), "fp32-strict");
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
  for (int i = 0; i < 3; ++i)
    side.push_back({fmt::format("/{}/launch{}-{}.json", std::string(100, test ? 't' : 'b'), i, test), f});
  return side;
}

// The default text fits 100 columns whatever the rows hold: the table in parts, each led by
// the row's name; long cells wrapped in their column; long sentences and names wrapped.
// --wide (width 0) keeps one line per row with every column.
TEST(DiffText, DefaultOutputFitsOneHundredColumns) {
  DiffOptions o;
  o.match = parse_field_list("world_size,ddp");
  const auto h = diff_results(h100("h100_resnet50_b32_fp32_strict.json"), h100("h100_resnet50_b32_tf32_all.json"), [] {
    DiffOptions x;
    x.match = parse_field_list("ddp");
    return x;
  }());
  const auto wide = diff_results(wide_side(false), wide_side(true), o);
  const std::vector<std::pair<std::string, DiffReport>> cases = {
      {"fixture", diff_results(match_base(), match_test(), o)},
      {"h100", h},
      {"wide", wide},
      {"repeat",
       diff_results(h100("h100_resnet50_b32_fp32_default.json"), h100("h100_resnet50_b32_fp32_default_repeat.json"))}};
  for (const auto& [name, d] : cases) {
    const auto text = render_diff_text(d);
    EXPECT_LE(longest_line(text), 100u) << name << "\n" << text;
    EXPECT_EQ(longest_line(text), longest_line(render_diff_text(d, kDiffTextWidth))) << name;
    // Every part of the table is led by the row: as many lines start with the last row's name
    // as there are parts (header lines), at least.
    const std::string last = "resnet50 " + d.rows.back().label;
    EXPECT_GE(lines_starting(text, last), lines_starting(text, "row  ")) << name << "\n" << text;
    EXPECT_GE(lines_starting(text, "row  "), 1u) << name;
    // --wide: one line per row and part, the differing fields as a column.
    const auto one = render_diff_text(d, 0);
    EXPECT_EQ(lines_starting(one, "row  "), 1u) << name;
    EXPECT_EQ(lines_starting(one, last), 1u) << name;
  }
  // The real pair was 326 columns on one line per row; it is still that with --wide.
  EXPECT_GT(longest_line(render_diff_text(h, 0)), 100u);
  EXPECT_THAT(render_diff_text(h, 0), HasSubstr("differs (outside --match)"));
  // The long setups are wrapped inside their column, and still say both sides.
  const auto text = render_diff_text(wide);
  EXPECT_THAT(text, HasSubstr("3x, 30 it"));
  EXPECT_THAT(text, HasSubstr("base peak mem"));
  EXPECT_GT(lines_starting(text, "resnet50 1M/2G"), lines_starting(text, "row  "));  // a row over several lines
  std::string flat;  // the text with its wrapping undone
  for (const auto& l : lines_of(text)) flat += " " + l.substr(std::min(l.find_first_not_of(' '), l.size()));
  EXPECT_THAT(flat, HasSubstr("comm hook fp16 ->"));
  EXPECT_THAT(flat, HasSubstr("comm hook powersgd:2"));
  EXPECT_THAT(flat, HasSubstr("Base: /" + std::string(100, 'b').substr(0, 80)));
}
}  // namespace
}  // namespace ddpbench
