// The executive summary's targets and recommendation rules (core/analysis/summary): hand-built
// report tables in, the exact sentence (or none) out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/analysis/check.hpp"
#include "core/analysis/report_analysis.hpp"
#include "core/analysis/summary.hpp"
#include "core/render/report_tables.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

ConfigKey key(const std::string& device = "NVIDIA H100 80GB HBM3") {
  ConfigKey k;
  k.device = device;
  k.model = "resnet50";
  k.precision = "bf16";
  k.batch_per_rank = 64;
  k.image_size = 224;
  k.scaling = "weak";
  k.ddp = true;
  k.backend = device.rfind("CPU", 0) == 0 ? "gloo" : "nccl";
  return k.with_default_knobs();  // every DDP knob at Python DDP's default
}

WeakRow weak_row(int gpus, double efficiency, const std::string& file, std::optional<double> exposed = std::nullopt) {
  WeakRow w;
  w.world_size = w.devices = gpus;
  w.efficiency = efficiency;
  w.per_gpu_ex_s = 1000 * efficiency;
  w.exposed_comm = exposed;
  w.launch.file = file;
  return w;
}

WeakTable weak(std::vector<WeakRow> rows, const ConfigKey& k = key()) {
  WeakTable t;
  t.key = k;
  t.baseline = "1-GPU DDP";
  t.rows = std::move(rows);
  return t;
}

std::vector<std::string> sentences(const ExecutiveSummary& s, const std::string& topic) {
  std::vector<std::string> out;
  for (const auto& r : s.recommendations)
    if (r.topic == topic) out.push_back(r.text + " [" + r.from + "]");
  return out;
}

const std::string kWhat = "resnet50, bf16, batch 64 per GPU, 224 px, NVIDIA H100 80GB HBM3";

// One row per case of the world-size rule: the table's efficiencies in, the sentence out.
TEST(SummaryRules, WorldSizeRuleTable) {
  struct Case {
    std::vector<WeakRow> rows;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      // Meets the target at the largest size.
      {{weak_row(1, 1.0, "F1"), weak_row(8, 0.91, "F1")},
       {kWhat + ": scaling holds to 8 GPUs, the largest size measured: weak-scaling efficiency is 91.0% there, "
                "meeting the 85.0% target. [weak scaling, F1]"}},
      // Meets it at 4, not at 8.
      {{weak_row(1, 1.0, "F1"), weak_row(4, 0.90, "F1"), weak_row(8, 0.70, "F2")},
       {kWhat + ": run jobs on at most 4 GPUs: efficiency is 90.0% at 4 but 70.0% at 8, below the 85.0% target. "
                "[weak scaling, F1 and F2]"}},
      // Nowhere above one GPU; the breakdown says how much is exposed communication.
      {{weak_row(1, 1.0, "F1"), weak_row(2, 0.60, "F1", 0.3)},
       {kWhat + ": no size above 1 GPU meets the 85.0% efficiency target (60.0% at 2 GPUs); exposed communication "
                "is 30.0% of that step (where the time goes). [weak scaling, F1]"}},
      // One GPU only: nothing to say about scaling.
      {{weak_row(1, 1.0, "F1")}, {}},
  };
  for (const auto& c : cases) {
    Report r;
    r.weak.push_back(weak(c.rows));
    EXPECT_EQ(sentences(executive_summary(r, {}, SummaryTargets{}), "world size"), c.want);
  }
  // Only a larger DDP row as baseline (no 1-GPU or no-DDP row): 100% by definition, so no
  // sentence, and the target says it was not measured.
  Report r;
  r.weak.push_back(weak({weak_row(4, 1.0, "F1"), weak_row(8, 0.9, "F1")}));
  r.weak[0].baseline = "4-GPU DDP";
  r.weak[0].baseline_kind = WeakTable::Baseline::smallest_group;
  const ExecutiveSummary s = executive_summary(r, {}, SummaryTargets{});
  EXPECT_TRUE(sentences(s, "world size").empty());
  ASSERT_FALSE(s.checks.empty());
  EXPECT_EQ(s.checks[0].status, "not measured (no 1-GPU or no-DDP baseline)");
  // A no-DDP baseline: the launch named is the no-DDP row's file.
  r.weak[0].baseline = "no-DDP";
  r.weak[0].baseline_kind = WeakTable::Baseline::no_ddp;
  r.weak[0].rows[1].baseline_file = "F7";
  EXPECT_EQ(executive_summary(r, {}, SummaryTargets{}).checks[0].from, "weak scaling, F1 vs F7");
}

// A warning that voids efficiency (a timing warning) silences the rule and makes the target VOID,
// whichever side of the target the number fell: neither PASS nor FAIL.
TEST(SummaryRules, AVoidingWarningSilencesTheRuleAndVoidsTheTarget) {
  Report r;
  auto big = weak_row(8, 0.95, "F1", 0.05);
  big.facts.warnings.push_back({"throughput_drift", "fell 12%"});
  r.weak.push_back(weak({weak_row(1, 1.0, "F1"), big}));
  const ExecutiveSummary s = executive_summary(r, {}, SummaryTargets{});
  EXPECT_TRUE(sentences(s, "world size").empty());
  ASSERT_EQ(s.checks.size(), 2u);
  EXPECT_EQ(s.checks[0].metric, "weak-scaling efficiency");
  EXPECT_EQ(s.checks[0].status, "VOID (throughput_drift)");
  EXPECT_EQ(s.checks[0].void_warning, "throughput_drift: fell 12%");
  EXPECT_EQ(s.checks[1].metric, "exposed comm");
  EXPECT_EQ(s.checks[1].status, "VOID (throughput_drift)");
  // Below the target with the same warning: VOID too, never FAIL.
  r.weak[0].rows[1].efficiency = 0.40;
  EXPECT_EQ(executive_summary(r, {}, SummaryTargets{}).checks[0].status, "VOID (throughput_drift)");
  // A failed self-check stays a failure.
  r.weak[0].rows[1].facts.self_check_passed = false;
  EXPECT_EQ(executive_summary(r, {}, SummaryTargets{}).checks[0].status, "FAIL (self-check failed)");
  r.weak[0].rows[1].facts.self_check_passed.reset();
  // few_samples voids p95 only: efficiency is held to the target (88% passes, 40% fails).
  r.weak[0].rows[1].facts.warnings = {{"few_samples", "12 iterations"}};
  EXPECT_EQ(executive_summary(r, {}, SummaryTargets{}).checks[0].status, "FAIL");
  r.weak[0].rows[1].efficiency = 0.88;
  EXPECT_EQ(executive_summary(r, {}, SummaryTargets{}).checks[0].status, "PASS");
  EXPECT_EQ(verdict_class("VOID (oversubscribed)"), "VOID");
  EXPECT_EQ(verdict_class("FAIL (self-check failed)"), "FAIL");
  EXPECT_EQ(verdict_class("not measured (run --breakdown)"), "not evaluated");
  EXPECT_EQ(verdict_class("MISSING"), "not evaluated");
}

const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";

std::vector<NamedResult> fixture(const std::vector<std::string>& names) {
  std::vector<NamedResult> out;
  for (const auto& n : names) out.push_back({n, read_result_file(kFix + n)});
  return out;
}

// tests/fixtures/rules_oversubscribed_cpu.json: efficiency 0.110 / 0.250 = 44.0% at 4 ranks, on
// the row that carries `oversubscribed`: VOID with the warning's words, never FAIL; the headline
// counts it and gives the largest trusted size (88.0% at 2 ranks); no world-size sentence.
TEST(SummaryVoid, AnOversubscribedRowVoidsItsEfficiencyTarget) {
  const auto files = fixture({"rules_oversubscribed_cpu.json"});
  const Report r = build_report(files, {});
  const ExecutiveSummary& s = r.summary;
  ASSERT_EQ(s.checks.size(), 2u);
  EXPECT_EQ(s.checks[0].status, "VOID (oversubscribed)");
  EXPECT_EQ(s.checks[0].measured, "44.0%");
  EXPECT_EQ(s.checks[0].void_warning, "oversubscribed: 8 threads of this group's ranks on node0 share 2 CPUs");
  EXPECT_EQ(s.checks[1].status, "not measured (run --breakdown)");
  EXPECT_TRUE(sentences(s, "world size").empty());
  const Headline& h = s.headline;
  EXPECT_EQ(h.pass, 0);
  EXPECT_EQ(h.fail, 0);
  EXPECT_EQ(h.void_count, 1);
  EXPECT_EQ(h.not_evaluated, 1);
  ASSERT_EQ(h.models.size(), 1u);
  EXPECT_NEAR(*h.models[0].efficiency, 0.110 / 0.250, 1e-12);
  EXPECT_EQ(h.models[0].efficiency_void, "oversubscribed");
  EXPECT_NEAR(*h.models[0].trusted_efficiency, 0.110 / 0.125, 1e-12);
  EXPECT_EQ(h.models[0].trusted_gpus, 2);
  const auto lines = headline_lines(h);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1],
            "Targets: 0 PASS, 0 FAIL, 1 VOID (weak-scaling efficiency 44.0% (required >= 85.0%) on 4 ranks, resnet18 "
            "[weak scaling, F1]; voided by oversubscribed), 1 not evaluated (exposed comm not measured (run "
            "--breakdown)).");
  EXPECT_EQ(lines[2],
            "resnet18: best 145.5 ex/s per rank (fp32, batch 16 per rank, 1 rank, F1); efficiency VOID at 4 ranks "
            "(44.0%, oversubscribed; F1), 88.0% at 2 ranks; exposed comm not measured.");
  EXPECT_THAT(lines[3], HasSubstr("1 voided by a warning (F1 at 4 ranks: oversubscribed)"));
}

// A pinned target (check's reference format) on a voided number: check says FAIL or WARN, the
// summary says VOID.
TEST(SummaryVoid, APinnedTargetOnAVoidedNumberIsVoid) {
  SummaryTargets t;
  t.pinned = parse_reference(R"({"ddpbench_reference": "2.0", "references": [
      {"device": "*", "model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 4,
       "setup": {"precision": "fp32"}, "metric": "ex_per_s_per_gpu", "value": 100, "lower": -0.1},
      {"device": "*", "model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 2,
       "setup": {"precision": "fp32"}, "metric": "ex_per_s_per_gpu", "value": 100, "lower": -0.1}]})",
                             "targets.json");
  t.pinned_source = "targets.json";
  const auto files = fixture({"rules_oversubscribed_cpu.json"});
  const ExecutiveSummary s = executive_summary(build_report(files, {}), files, t);
  std::vector<std::string> pinned;
  for (const auto& c : s.checks)
    if (c.metric == "ex_per_s_per_gpu") pinned.push_back(c.status + " " + c.measured);
  // 4 ranks: 16 / 0.250 = 64.0 ex/s, below 90 but voided; 2 ranks: 16 / 0.125 = 128.0 ex/s.
  EXPECT_EQ(pinned, (std::vector<std::string>{"VOID (oversubscribed) 64.0", "PASS 128.0"}));
}

// The headline of hand-built files: scope, targets, one line per model, data quality and the
// sections not measured, each with its command; about ten lines.
TEST(SummaryHeadline, ScopeVerdictsModelsQualityAndWhatIsMissing) {
  ReportOptions o;
  o.gpu_hour_usd = 2.0;
  const Report r = build_report(fixture({"rules_launch_1.json", "rules_launch_2.json", "rules_launch_1_again.json",
                                         "rules_shared_gpu.json"}),
                                o);
  const auto lines = headline_lines(r.summary.headline);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0],
            "Scope: 3 launches (4 files) on 1 node with 1 x NVIDIA H100 80GB HBM3 (up to 2 ranks); torch 2.11.0, "
            "CUDA 13.0, NCCL 2.28.9, backend nccl, gloo; launched 2026-11-22 to 2026-11-23.");
  EXPECT_EQ(lines[1],
            "Targets: 0 PASS, 0 FAIL, 0 VOID, 4 not evaluated (2 tables ran on 1 GPU only: efficiency and exposed "
            "comm need 2 or more).");
  // resnet18: the 1-rank row (32 / 0.0125 = 2560.0), not the shared one; cost at its mean step
  // 0.0125 s: 2 / 3600 x 10^6 x 0.0125 / 32 = 0.2170 USD per 1M samples.
  EXPECT_EQ(lines[2],
            "resnet18: best 2560.0 ex/s per GPU (fp32 (cuDNN TF32), gloo, batch 32 per GPU, 1 GPU, F4); scaling not "
            "measured (1 GPU only); cheapest 0.2170 USD per 1M samples (1 GPU, F4).");
  // resnet50: of two launches the slower (32 / 0.032 = 1000.0); 2 / 3600 x 10^6 x 0.032 / 32 = 0.5556.
  EXPECT_EQ(lines[3],
            "resnet50: best 1000.0 ex/s per GPU (fp32 (cuDNN TF32), batch 32 per GPU, 1 GPU, F2); scaling not "
            "measured (1 GPU only); cheapest 0.5556 USD per 1M samples (1 GPU, F2).");
  EXPECT_EQ(lines[4],
            "Data quality: no noisy row among 3 rows; ranks sharing a GPU, not scaling: F4 (2 ranks on 1 GPU); "
            "launches of one setup spread up to 21.9% (resnet50: F1, F2); F3 repeats F1 (the same job id 1001 "
            "started 2026-11-22T10:00:00Z), counted once.");
  EXPECT_EQ(lines[5],
            "Not measured: Scaling beyond one GPU (every table ran on 1 GPU): ddpbench run --model resnet18 --backend "
            "gloo --batch-size 32 --nproc-per-node 8 --breakdown --json weak.json");
  EXPECT_EQ(lines[6],
            "Not measured: Communication (no collective or pair-bandwidth result): ddpbench comm --nproc-per-node 8 "
            "--json comm.json");
  // The headline is the report's first table, in every format.
  const auto tables = report_tables(r);
  ASSERT_FALSE(tables.empty());
  EXPECT_EQ(tables[0].kind, "headline");
  EXPECT_EQ(tables[0].rows.size(), lines.size());
  const auto j = headline_json(r.summary.headline);
  EXPECT_EQ(j["verdicts"]["not_evaluated"], 4);
  EXPECT_EQ(j["scope"]["launches"], 3);
  EXPECT_EQ(j["models"][1]["best_per_gpu_ex_s"].get<double>(), 32 / 0.032);
  EXPECT_EQ(j["not_measured"][0]["command"],
            "ddpbench run --model resnet18 --backend gloo --batch-size 32 --nproc-per-node 8 --breakdown --json "
            "weak.json");
}

// Targets against a hand-made table: the statuses, the required text and the launch labels.
TEST(SummaryTargets, EachTableIsHeldToTheTargetsAtItsLargestSize) {
  Report r;
  r.weak.push_back(weak({weak_row(1, 1.0, "F1"), weak_row(4, 0.88, "F2", 0.16)}));
  SummaryTargets t;
  t.min_per_gpu_ex_s = 900;
  const ExecutiveSummary s = executive_summary(r, {}, t);
  ASSERT_EQ(s.checks.size(), 3u);
  EXPECT_EQ(s.checks[0].metric, "per-GPU ex/s");  // 880 < 900
  EXPECT_EQ(s.checks[0].status, "FAIL");
  EXPECT_EQ(s.checks[0].measured, "880.0");
  EXPECT_EQ(s.checks[1].status, "PASS");  // 88% >= 85%
  EXPECT_EQ(s.checks[1].target, ">= 85.0%");
  EXPECT_EQ(s.checks[1].from, "weak scaling, F2 vs F1");
  EXPECT_EQ(s.checks[2].status, "FAIL");  // 16% exposed >= 15%
  EXPECT_EQ(s.checks[2].measured, "16.0%");
  // A stricter efficiency target turns the pass into a failure.
  t.min_efficiency = 0.9;
  EXPECT_EQ(executive_summary(r, {}, t).checks[1].status, "FAIL");
  // One GPU only: no scaling target, and a note says so.
  Report one;
  one.weak.push_back(weak({weak_row(1, 1.0, "F1")}));
  const ExecutiveSummary o = executive_summary(one, {}, SummaryTargets{});
  // Both scaling targets are checks that were not evaluated, so every tally counts them alike.
  ASSERT_EQ(o.checks.size(), 2u);
  EXPECT_EQ(o.checks[0].status, "not measured (1 GPU only)");
  EXPECT_EQ(o.checks[1].status, "not measured (1 GPU only)");
  EXPECT_EQ(o.headline.not_evaluated, 2);
  ASSERT_EQ(o.notes.size(), 2u);
  EXPECT_EQ(o.notes[1],
            "1 of 1 weak-scaling table measured one GPU only: efficiency and communication targets need two or more, "
            "so they are not evaluated there (2 targets)");
  // No training rows at all (a comm file): no targets, no notes.
  EXPECT_TRUE(executive_summary(Report{}, {}, SummaryTargets{}).notes.empty());
}

// A row from `launches` launches with that spread (one launch: the device's measured spread is
// the floor, 19.5% on H100).
ImpactRow impact_row(const std::string& technique, double ex_s, double speedup, const std::string& file,
                     int launches = 3, double spread = 0.02) {
  ImpactRow i;
  i.technique = technique;
  i.baseline = technique == "baseline (DDP defaults)";
  i.aggregate_ex_s = ex_s;
  i.speedup = speedup;
  i.launch.file = file;
  i.launch.launches = launches;
  if (launches > 1) i.launch.spread = spread;
  return i;
}

TEST(SummaryRules, DdpSettingRuleTable) {
  ConfigKey k = key();
  k.world_size = 8;
  const std::string what = kWhat + " on 8 ranks";
  struct Case {
    std::vector<ImpactRow> rows;
    std::string want;  // "" for no sentence
  };
  const std::vector<Case> cases = {
      // Three launches each, 2% apart: +10% is beyond their spread (and above the 5% worth changing).
      {{impact_row("baseline (DDP defaults)", 1000, 1.0, "F1"), impact_row("bucket cap 50 MiB", 1100, 1.10, "F2"),
        impact_row("comm hook fp16", 1030, 1.03, "F3")},
       what + ": set bucket cap 50 MiB: 1100.0 against 1000.0 aggregate ex/s with DDP's defaults (+10.0%, beyond the "
              "2.0% launch-to-launch spread). [optimization impact, F2 vs F1]"},
      // +3% is below the 5% a setting must gain to be worth changing, whatever the noise.
      {{impact_row("baseline (DDP defaults)", 1000, 1.0, "F1"), impact_row("comm hook fp16", 1030, 1.03, "F3")},
       what + ": keep DDP's defaults: no setting measured was more than 5.0% faster (best: comm hook fp16, +3.0%). "
              "[optimization impact, F3 vs F1]"},
      // +10%, but the baseline's own launches spread 20%: within the noise.
      {{impact_row("baseline (DDP defaults)", 1000, 1.0, "F1", 3, 0.20),
        impact_row("bucket cap 50 MiB", 1100, 1.10, "F2")},
       what + ": keep DDP's defaults: the best setting measured, bucket cap 50 MiB (+10.0%), is within the 20.0% "
              "launch-to-launch spread. [optimization impact, F2 vs F1]"},
      // One launch each: no floor measured for these configurations (another configuration's
      // spread is not borrowed); the claim says so and how to measure it.
      {{impact_row("baseline (DDP defaults)", 1000, 1.0, "F1", 1),
        impact_row("bucket cap 50 MiB", 1100, 1.10, "F2", 1)},
       what + ": bucket cap 50 MiB measured +10.0% (1100.0 against 1000.0 aggregate ex/s with DDP's defaults), more "
              "than the rows' own 95% confidence intervals; before changing the setting, the launch-to-launch noise of "
              "DDP's defaults and bucket cap 50 MiB is unmeasured (one launch each): 3 launches of each would measure "
              "it. [optimization impact, F2 vs F1]"},
      // No plain run: nothing to compare with.
      {{impact_row("bucket cap 50 MiB", 1100, 1.10, "F2")}, ""},
  };
  for (const auto& c : cases) {
    Report r;
    ImpactTable t;
    t.key = k;
    t.rows = c.rows;
    t.has_baseline = c.rows.front().baseline;
    r.impact.push_back(t);
    const auto got = sentences(executive_summary(r, {}, SummaryTargets{}), "DDP setting");
    EXPECT_EQ(got, c.want.empty() ? std::vector<std::string>{} : std::vector<std::string>{c.want});
  }
}

// A rule says nothing when the deciding row's warnings void its throughput.
TEST(SummaryRules, AVoidedVariantMakesNoDdpSettingSentence) {
  ConfigKey k = key();
  k.world_size = 8;
  ImpactTable t;
  t.key = k;
  t.has_baseline = true;
  t.rows = {impact_row("baseline (DDP defaults)", 1000, 1.0, "F1"), impact_row("bucket cap 50 MiB", 1300, 1.30, "F2")};
  t.rows[1].facts.warnings.push_back({"throughput_drift", "fell 12%"});
  Report r;
  r.impact.push_back(t);
  EXPECT_TRUE(sentences(executive_summary(r, {}, SummaryTargets{}), "DDP setting").empty());
}

// A pinned target whose row lacks the metric (exposed comm without --breakdown) is MISSING with
// nothing measured, never a crash.
TEST(SummaryTargets, APinnedEntryOnARowWithoutTheMetricIsMissing) {
  SummaryTargets t;
  t.pinned = parse_reference(R"({"ddpbench_reference": "2.0", "references": [
      {"device": "*", "model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 2,
       "setup": {"precision": "fp32"}, "metric": "exposed_comm", "value": 0.1, "upper": 0.5}]})",
                             "targets.json");
  t.pinned_source = "targets.json";
  const std::vector<NamedResult> files = {
      {"weak_cpu.json", read_result_file(DDPBENCH_SOURCE_DIR "/tests/fixtures/weak_cpu.json")}};
  const ExecutiveSummary s = executive_summary(build_report(files, {}), files, t);
  const auto pinned =
      std::find_if(s.checks.begin(), s.checks.end(), [](const SummaryCheck& c) { return c.metric == "exposed_comm"; });
  ASSERT_NE(pinned, s.checks.end());
  EXPECT_EQ(pinned->status, "MISSING");
  EXPECT_EQ(pinned->measured, "");
}

TEST(SummaryRules, MemoryAndCostRules) {
  Report r;
  MemoryTable m;
  m.key = key();
  m.key.precision = "fp32";
  m.peak_kind = "peak allocated";
  MemoryRow ck;
  ck.world_size = 2;
  ck.technique = "activation checkpointing";
  ck.baseline_peak_bytes = 8.0 * (1 << 30);
  ck.peak_bytes = 5.0 * (1 << 30);
  ck.saved = 3.0 / 8;
  ck.time_paid = 0.25;
  ck.launch.file = "F2";
  ck.baseline_file = "F1";
  MemoryRow bf = ck;
  bf.technique = "mixed precision (bf16)";
  bf.peak_bytes = 6.0 * (1 << 30);
  bf.saved = 2.0 / 8;
  bf.time_paid = -0.3;
  m.rows = {bf, ck};
  r.memory.push_back(m);
  CostTable c;
  c.key = key();
  c.model = "resnet50";
  c.gpu_hour_usd = 2;
  c.epochs = 2;
  c.dataset_size = 100000;
  const auto cost_row = [&](int n, const std::string& file, double usd_per_million, double hours, double usd) {
    CostRow x;
    x.setup = "fp32, batch 64 per GPU";
    x.key = key();
    x.world_size = x.ranks = n;
    x.file = file;
    x.usd_per_million = usd_per_million;
    x.hours = hours;
    x.usd = usd;
    return x;
  };
  c.rows = {cost_row(1, "F1", 0.5556, 0.0556, 0.11), cost_row(8, "F2", 0.6173, 0.00772, 0.12)};
  c.best = 0;
  r.cost.push_back(c);
  const ExecutiveSummary s = executive_summary(r, {}, SummaryTargets{});
  EXPECT_EQ(sentences(s, "memory"),
            std::vector<std::string>{"resnet50, fp32, batch 64 per GPU, 224 px, NVIDIA H100 80GB HBM3 on 2 ranks: to "
                                     "fit a larger batch or model, use activation checkpointing: it cuts the peak "
                                     "allocated per rank by 37.5% (8.00 GiB to 5.00 GiB) for +25.0% step time. "
                                     "[memory optimization, F2 vs F1]"});
  EXPECT_EQ(sentences(s, "cost"),
            std::vector<std::string>{"resnet50, 224 px, NVIDIA H100 80GB HBM3: the most cost-efficient setup and size "
                                     "measured is fp32, batch 64 per GPU on 1 GPU: 0.5556 USD per 1M samples; 2 epochs "
                                     "of 100,000 samples take 3.3 min and cost 0.11 USD at 2.00 USD per GPU-hour. "
                                     "[cost, F1]"});
  // A priced table of one row: nothing to choose between.
  r.cost[0].rows.pop_back();
  EXPECT_TRUE(sentences(executive_summary(r, {}, SummaryTargets{}), "cost").empty());
}

// The strategy table's fastest setup against its slowest: beyond the floor, a sentence naming
// both; within it (or within the launches' spread), "within F of each other".
TEST(SummaryRules, SetupRuleTable) {
  const auto row = [](const std::string& precision, double ex_s, const std::string& file, int launches = 3,
                      double spread = 0.02) {
    StrategyRow x;
    x.world_size = 1;
    x.precision = precision;
    x.aggregate_ex_s = ex_s;
    x.launch.file = file;
    x.launch.launches = launches;
    if (launches > 1) x.launch.spread = spread;
    return x;
  };
  const std::string what = "resnet50, batch 64 per GPU, 224 px, NVIDIA H100 80GB HBM3 on 1 rank";
  struct Case {
    std::vector<StrategyRow> rows;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{row("bf16", 3650.9, "F13"), row("fp16", 4124.5, "F14")},
       what + ": the fastest setup measured is ddp, fp16 at 4124.5 aggregate ex/s; beyond the 2.0% launch-to-launch "
              "spread: ddp, bf16 at 3650.9 ex/s (the fastest +13.0%); peak memory not measured for every setup. "
              "[strategy comparison, F14 vs F13]"},
      {{row("bf16", 1000, "F1"), row("fp16", 1030, "F2")},
       what + ": the fastest setup measured is ddp, fp16 at 1030.0 aggregate ex/s; beyond the 2.0% launch-to-launch "
              "spread: ddp, bf16 at 1000.0 ex/s (the fastest +3.0%); peak memory not measured for every setup. "
              "[strategy comparison, F2 vs F1]"},
      {{row("bf16", 1000, "F1", 3, 0.2), row("fp16", 1130, "F2")},
       what + ": the fastest setup measured is ddp, fp16 at 1130.0 aggregate ex/s; within noise of it (the 20.0% "
              "launch-to-launch spread): ddp, bf16 at 1000.0 ex/s (the fastest +13.0%); peak memory not measured for "
              "every setup. [strategy comparison, F2 vs F1]"},
      // One launch each: the launch-to-launch noise of these setups is unmeasured (the spread
      // of another configuration on the device is not borrowed).
      {{row("bf16", 3650.9, "F13", 1), row("fp16", 4124.5, "F14", 1)},
       what + ": the fastest setup measured is ddp, fp16 at 4124.5 aggregate ex/s; ddp, bf16 at 3650.9 ex/s (the "
              "fastest +13.0%) differs from it by more than the rows' own 95% confidence intervals, but the "
              "launch-to-launch noise of ddp, fp16 and ddp, bf16 is unmeasured (one launch each): 3 launches of each "
              "would measure it; peak memory not measured for every setup. [strategy comparison, F14 vs F13]"},
      // Within the rows' own 95% CIs, with memory measured: choose by memory.
      {{[&] {
          auto x = row("bf16", 1000, "F1", 1);
          x.facts.ci = 0.02;
          x.peak_memory_bytes = 8.0 * (1 << 30);
          return x;
        }(),
        [&] {
          auto x = row("fp16", 1010, "F2", 1);
          x.facts.ci = 0.02;
          x.peak_memory_bytes = 6.0 * (1 << 30);
          return x;
        }()},
       what + ": the fastest setup measured is ddp, fp16 at 1010.0 aggregate ex/s; within noise of it (the rows' own "
              "95% confidence intervals overlap): ddp, bf16 at 1000.0 ex/s (the fastest +1.0%); peak memory per GPU: "
              "ddp, fp16 6.00 GiB and ddp, bf16 8.00 GiB (within noise: choose by memory). [strategy comparison, F2 "
              "vs F1]"},
      {{row("bf16", 1000, "F1")}, ""},
  };
  for (const auto& c : cases) {
    Report r;
    StrategyTable t;
    t.key = key();
    t.rows = c.rows;
    r.strategy.push_back(t);
    const auto got = sentences(executive_summary(r, {}, SummaryTargets{}), "setup");
    EXPECT_EQ(got, c.want.empty() ? std::vector<std::string>{} : std::vector<std::string>{c.want});
  }
}

TEST(SummaryRules, ANamedStragglerAndASlowNodeAreNodesToInspect) {
  Report r;
  ClusterFile c;
  c.label = "F3";
  c.stragglers = nlohmann::json::parse(R"([{"model": "resnet18", "batch_per_rank": 16, "threshold": 0.95,
      "ranks": [{"rank": 0, "host": "node0", "local_rank": 0, "score": 1.0, "straggler": false},
                {"rank": 1, "host": "node1", "local_rank": 0, "score": 0.52, "straggler": true}]}])");
  c.comm_pairs =
      nlohmann::json::parse(R"({"slow_nodes": [{"name": "node2", "message": "node2: every pair is slow"}]})");
  r.cluster.push_back(c);
  const auto got = sentences(executive_summary(r, {}, SummaryTargets{}), "node");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0],
            "Inspect rank 1 (host node1, local rank 0, CPU) before opening the cluster to users: it scored 0.52, below "
            "the 0.95 straggler threshold (resnet18, batch 16 per rank, 2 ranks). [findings (stragglers), F3]");
  EXPECT_EQ(got[1],
            "Inspect the node's links before opening the cluster to users: node2: every pair is slow. [pair bandwidth, "
            "F3]");
  // No straggler named: no sentence.
  r.cluster[0].stragglers[0]["ranks"][1]["straggler"] = false;
  r.cluster[0].comm_pairs = nlohmann::json::object();
  EXPECT_TRUE(sentences(executive_summary(r, {}, SummaryTargets{}), "node").empty());
}

// ------------------------------------------------------------------ per-model targets (--target-for)

// tests/fixtures/weak_cpu.json: resnet18 on CPU ranks, at 4 ranks 16 / 0.25 s = 64.0 ex/s per
// rank, efficiency 84.0%; tests/fixtures/gpu_h100.json: resnet50 on H100s, at 16 GPUs 512.0 ex/s
// per GPU, efficiency 80.0%. Neither has a breakdown (exposed comm not measured).
std::vector<NamedResult> two_models() {
  const std::string dir = DDPBENCH_SOURCE_DIR "/tests/fixtures/";
  return {{"weak_cpu.json", read_result_file(dir + "weak_cpu.json")},
          {"gpu_h100.json", read_result_file(dir + "gpu_h100.json")}};
}

// The check of `model`'s `metric` (throws when there is none).
const SummaryCheck& check_of(const ExecutiveSummary& s, const std::string& model, const std::string& metric) {
  for (const auto& c : s.checks)
    if (c.what.rfind(model + ",", 0) == 0 && c.metric == metric) return c;
  throw std::logic_error("no check of " + model + " " + metric);
}

// A per-model ex/s target turns resnet50's PASS into a FAIL and prints the value it applied;
// resnet18, in the same files, keeps the global target. A per-model efficiency target turns
// resnet18's FAIL into a PASS (and its world-size sentence), while resnet50 keeps 85%.
TEST(SummaryTargets, AModelsOwnTargetReplacesTheGlobalOneForThatModelOnly) {
  const auto files = two_models();
  ReportOptions o;
  o.targets.min_per_gpu_ex_s = 50;
  {
    const Report r = build_report(files, o);
    const ExecutiveSummary& s = r.summary;
    EXPECT_EQ(check_of(s, "resnet50", "per-GPU ex/s").measured, "512.0");
    EXPECT_EQ(check_of(s, "resnet50", "per-GPU ex/s").status, "PASS");             // 512.0 >= 50
    EXPECT_EQ(check_of(s, "resnet18", "per-rank ex/s").status, "PASS");            // 64.0 >= 50
    EXPECT_EQ(check_of(s, "resnet18", "weak-scaling efficiency").status, "FAIL");  // 84.0% < 85%
    EXPECT_EQ(s.headline.pass, 2);
    EXPECT_EQ(s.headline.fail, 2);
  }
  add_model_target(o.targets, "resnet50:ex-s=600");
  add_model_target(o.targets, "resnet18:efficiency=0.8");
  const Report r = build_report(files, o);
  const ExecutiveSummary& s = r.summary;
  const SummaryCheck& ex50 = check_of(s, "resnet50", "per-GPU ex/s");
  EXPECT_EQ(ex50.status, "FAIL");  // 512.0 < 600
  EXPECT_EQ(ex50.target, ">= 600.0");
  const SummaryCheck& ex18 = check_of(s, "resnet18", "per-rank ex/s");
  EXPECT_EQ(ex18.status, "PASS");  // the global 50
  EXPECT_EQ(ex18.target, ">= 50.0");
  const SummaryCheck& eff18 = check_of(s, "resnet18", "weak-scaling efficiency");
  EXPECT_EQ(eff18.status, "PASS");  // 84.0% >= 80%
  EXPECT_EQ(eff18.target, ">= 80.0%");
  const SummaryCheck& eff50 = check_of(s, "resnet50", "weak-scaling efficiency");
  EXPECT_EQ(eff50.status, "FAIL");  // 80.0% < the global 85%
  EXPECT_EQ(eff50.target, ">= 85.0%");
  EXPECT_EQ(check_of(s, "resnet50", "exposed comm").target, "< 15.0%");  // not overridden
  EXPECT_EQ(s.headline.pass, 2);
  EXPECT_EQ(s.headline.fail, 2);
  // The world-size rule reads the same target; a note names the values each model got.
  EXPECT_THAT(sentences(s, "world size"),
              ::testing::Contains(HasSubstr("resnet18, fp32, batch 16 per rank, 64 px, CPU (Fixture CPU): scaling "
                                            "holds to 4 ranks, the largest size measured: weak-scaling efficiency "
                                            "is 84.0% there, meeting the 80.0% target.")));
  EXPECT_THAT(s.notes, ::testing::Contains("Targets of resnet18 (--target-for): weak-scaling efficiency >= 80.0%, "
                                           "exposed communication < 15.0% (global), per-rank ex/s >= 50.0 (global)"));
  EXPECT_THAT(s.notes, ::testing::Contains("Targets of resnet50 (--target-for): weak-scaling efficiency >= 85.0% "
                                           "(global), exposed communication < 15.0% (global), per-GPU ex/s >= 600.0"));
}

// targets_for: the global values, each replaced by what the model's entry gives; a model
// without an entry gets the globals; a later text replaces an earlier one.
TEST(SummaryTargets, TargetsForMergesTheModelsEntryOverTheGlobals) {
  SummaryTargets t;
  t.min_efficiency = 0.7;
  add_model_target(t, "vit_b_32:comm=0.25");
  add_model_target(t, "vit_b_32:ex-s=1e3");
  add_model_target(t, "vit_b_32:ex-s=700");
  const AppliedTargets v = targets_for(t, "vit_b_32");
  EXPECT_TRUE(v.per_model);
  EXPECT_DOUBLE_EQ(v.min_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(v.max_exposed_comm, 0.25);
  ASSERT_TRUE(v.min_per_gpu_ex_s);
  EXPECT_DOUBLE_EQ(*v.min_per_gpu_ex_s, 700);
  const AppliedTargets other = targets_for(t, "resnet50");
  EXPECT_FALSE(other.per_model);
  EXPECT_DOUBLE_EQ(other.min_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(other.max_exposed_comm, 0.15);
  EXPECT_FALSE(other.min_per_gpu_ex_s);
  // A value set in code outside its range is refused by build_report, named as the option.
  ReportOptions o;
  o.targets.per_model["resnet18"].min_efficiency = 1.5;
  try {
    build_report(two_models(), o);
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "--target-for 'resnet18:efficiency=1.5': efficiency 1.5 must be a fraction in (0, 1] (0.9 for 90%)");
  }
  // absent_target_models: the names no row of the files measured.
  o.targets.per_model.clear();
  add_model_target(o.targets, "resnet50:comm=0.1");
  add_model_target(o.targets, "resnet99:comm=0.1");
  EXPECT_EQ(absent_target_models(o.targets, two_models()), std::vector<std::string>{"resnet99"});
}

// One tally of every check, the headline's and validate's alike: each FAIL and VOID named with its
// target, value, threshold, size, model, launch and warnings; validate's own checks by step.
TEST(SummaryTally, NamesEachFailAndVoid) {
  Report r;
  r.weak.push_back(weak({weak_row(1, 1.0, "F1"), weak_row(2, 0.80, "F1")}));
  r.weak[0].rows[1].exposed_comm = 0.151;
  r.weak[0].rows[1].facts.warnings.push_back({"noisy", "cv 20.2%"});
  SummaryTargets t;
  struct {
    std::string step, what, status, detail;
  } vc{"03-pairs", "no slow node or link", "not evaluated", "2 participants"};
  SummaryCheck pairs;
  pairs.what = vc.step + " " + vc.what;
  pairs.metric = vc.what;
  pairs.measured = vc.detail;
  pairs.status = vc.status;
  pairs.from = vc.step;
  Claim k;
  k.kind = "validate_check";
  k.subject = vc.step;
  k.verdict = vc.status;
  k.word("what", vc.what).word("detail", vc.detail);
  pairs.claim = finish_claim(k);
  t.external.push_back(pairs);
  const ExecutiveSummary s = executive_summary(r, {}, t);
  const Claim tally = tally_claim(s.checks, "validate", "GPU");
  EXPECT_EQ(tally.kind, "validate_tally");
  EXPECT_EQ(tally.text,
            "validate: 0 PASS, 2 FAIL (weak-scaling efficiency 80.0% (required >= 85.0%) on 2 GPUs, resnet50 [weak "
            "scaling, F1]; noisy; exposed comm 15.1% (required < 15.0%) on 2 GPUs, resnet50 [weak scaling, F1]; "
            "noisy), 0 VOID, 1 not evaluated (03-pairs no slow node or link: 2 participants)");
  // The headline counts the same checks.
  EXPECT_EQ(s.headline.fail, 2);
  EXPECT_EQ(s.headline.not_evaluated, 1);
  EXPECT_EQ(headline_lines(s.headline)[1].rfind("Targets: 0 PASS, 2 FAIL (weak-scaling efficiency 80.0%", 0), 0u);
}

}  // namespace
}  // namespace ddpbench
