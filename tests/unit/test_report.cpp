// `ddpbench report`: scaling numbers computed by hand from the fixtures (weak and strong
// scaling, cost, repeated launches, ranks sharing a GPU, the breakdown, optimization impact).
// The outputs and goldens: test_report_output.cpp; cluster files: test_report_cluster.cpp;
// strategies and memory: test_report_strategy.cpp; row rules: test_report_rules.cpp.
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

TEST(Report, WeakScalingByHand) {
  const Report r = build_report(load({"weak_cpu.json"}), {});
  ASSERT_EQ(r.weak.size(), 1u);
  const auto& t = r.weak[0];
  EXPECT_EQ(t.key.device, "CPU (Fixture CPU)");
  EXPECT_EQ(t.key.batch_per_rank, 16);
  ASSERT_EQ(t.rows.size(), 3u);
  // p50 0.21 / 0.22 / 0.25 s at 16 examples per rank; no-DDP p50 0.20 s.
  EXPECT_NEAR(t.rows[0].per_gpu_ex_s, 16 / 0.21, 1e-9);
  EXPECT_NEAR(t.rows[2].aggregate_ex_s, 4 * 16 / 0.25, 1e-9);
  EXPECT_NEAR(t.rows[1].efficiency, (16 / 0.22) / (16 / 0.21), 1e-12);
  EXPECT_NEAR(t.rows[2].efficiency, 0.84, 1e-12);
  EXPECT_NEAR(*t.rows[0].ddp_overhead, (0.21 - 0.20) / 0.21, 1e-12);
  EXPECT_NEAR(*t.rows[2].ddp_overhead, 0.2, 1e-12);
  EXPECT_EQ(t.baseline, "1-rank DDP");  // a CPU run: ranks, not GPUs
  EXPECT_EQ(t.baseline_kind, WeakTable::Baseline::one_rank);
  EXPECT_TRUE(r.strong.empty());
  EXPECT_TRUE(r.cost.empty());
}

TEST(Report, StrongScalingByHand) {
  const Report r = build_report(load({"strong_cpu.json"}), {});
  ASSERT_EQ(r.strong.size(), 1u);
  const auto& t = r.strong[0];
  EXPECT_EQ(t.global_batch, 64);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[1].batch_per_rank, 32);
  EXPECT_NEAR(t.rows[1].speedup, 0.8 / 0.45, 1e-12);
  EXPECT_NEAR(t.rows[1].efficiency, 0.8 / 0.45 / 2, 1e-12);
  EXPECT_NEAR(t.rows[2].speedup, 3.2, 1e-12);
  EXPECT_NEAR(t.rows[2].efficiency, 0.8, 1e-12);
  EXPECT_NEAR(t.rows[2].aggregate_ex_s, 64 / 0.25, 1e-9);
  // Each group size is compared with the no-DDP run at its own per-rank batch.
  EXPECT_NEAR(*t.rows[1].ddp_overhead, (0.45 - 0.40) / 0.45, 1e-12);
  EXPECT_TRUE(r.weak.empty());
}

TEST(Report, CostByHand) {
  auto files = load({"weak_cpu.json"});
  const Report r = build_report(files, cost_opts());
  ASSERT_EQ(r.cost.size(), 1u);
  const auto& c = r.cost[0];
  // Priced at each row's mean step (the statistic of epoch time), not its p50.
  const double mean1 = files[0].file.results[1].summary.mean_s, mean4 = files[0].file.results[3].summary.mean_s;
  ASSERT_EQ(files[0].file.results[3].world_size, 4);
  EXPECT_NEAR(c.rows[0].mean_step_s, mean1, 1e-15);
  EXPECT_NEAR(c.rows[0].ex_s_mean_step, 16 / mean1, 1e-9);
  EXPECT_NEAR(c.rows[0].usd_per_million, 2.0 * 1 / 3600 * 1e6 * mean1 / 16, 1e-9);
  EXPECT_NEAR(c.rows[2].usd_per_million, 2.0 * 4 / 3600 * 1e6 * mean4 / 64, 1e-9);
  // 2 epochs of ceil(100000 / 64) = 1563 steps.
  EXPECT_NEAR(c.rows[2].hours, 2 * 1563 * mean4 / 3600, 1e-12);
  EXPECT_NEAR(c.rows[2].usd, 2 * 1563 * mean4 / 3600 * 4 * 2.0, 1e-9);
  EXPECT_EQ(c.rows[c.best].world_size, 1);  // efficiency below 1: more GPUs cost more per sample
  EXPECT_NEAR(c.rows[2].relative, c.rows[0].usd_per_million / c.rows[2].usd_per_million, 1e-12);
  EXPECT_EQ(c.rows[0].relative, 1.0);
}

// One step statistic: a row's epoch time x epochs is the training time its cost table prices,
// even where the mean step is far from the p50 (a heavy tail). Hand-built: 20 steps of 0.1 s and
// one of 1.1 s (p50 0.1 s, mean 1.1/21 + 2/21 = 0.1476 s), batch 16 on 1 rank, 1,600 examples an
// epoch: 100 steps.
TEST(Report, EpochTimeAndCostUseOneStepStatistic) {
  auto files = load({"weak_cpu.json"});
  ResultFile& f = files[0].file;
  f.results = {f.results[1]};  // the 1-rank DDP row alone
  BenchResult& one = f.results[0];
  ASSERT_TRUE(one.ddp);
  ASSERT_EQ(one.world_size, 1);
  one.ranks.resize(1);
  one.ranks[0].samples_s.assign(20, 0.1);
  one.ranks[0].samples_s.push_back(1.1);
  one.summary = summarize({one.ranks[0].samples_s}, 16, 1);
  one.communication.steps_per_epoch = 100;
  ASSERT_NEAR(one.summary.p50_s, 0.1, 1e-12);
  const double mean = 3.1 / 21;
  ASSERT_NEAR(one.summary.mean_s, mean, 1e-12);
  ReportOptions o = cost_opts();
  o.epochs = 90;
  o.dataset_size = 1600;
  const Report r = build_report(files, o);
  ASSERT_EQ(r.cost.size(), 1u);
  const WeakRow& w = r.weak[0].rows[0];
  EXPECT_NEAR(*w.facts.metric("epoch_time_s"), 100 * mean, 1e-12);  // 14.76 s
  EXPECT_NEAR(w.mean_s, mean, 1e-15);
  EXPECT_NEAR(r.cost[0].rows[0].hours, 90 * 100 * mean / 3600, 1e-12);  // 0.369 h = 90 x 14.76 s
  EXPECT_NEAR(r.cost[0].rows[0].hours * 3600, 90 * *w.facts.metric("epoch_time_s"), 1e-9);
  EXPECT_NEAR(r.cost[0].rows[0].usd_per_million, 2.0 / 3600 * 1e6 * mean / 16, 1e-9);  // 5.1257 USD
  const auto text = render_report(r, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("14.8 s"));  // the epoch time column
  EXPECT_THAT(text, HasSubstr("\n1           0.1476              108.4              5.1257                       100.0%   "
                              "0.369      0.74    F1\n"));
}

TEST(Report, WithoutTheOneGpuRowTheNoDdpRowIsTheBase) {
  auto files = load({"weak_cpu.json"});
  auto& rows = files[0].file.results;
  rows.erase(rows.begin() + 1);  // drop the 1-GPU DDP row
  const Report r = build_report(files, {});
  ASSERT_EQ(r.weak.size(), 1u);
  EXPECT_EQ(r.weak[0].baseline, "no-DDP");
  EXPECT_NEAR(r.weak[0].baseline_per_gpu_ex_s, 16 / 0.20, 1e-9);
  EXPECT_NEAR(r.weak[0].rows[0].efficiency, (16 / 0.22) / (16 / 0.20), 1e-12);
  EXPECT_EQ(r.weak[0].baseline_kind, WeakTable::Baseline::no_ddp);
  // Without the no-DDP row too, the smallest group (2 ranks) is the base: 100% by definition,
  // and the table says so by its kind, whatever the label's number reads.
  rows.erase(rows.begin());
  const Report smallest = build_report(files, {});
  ASSERT_EQ(smallest.weak.size(), 1u);
  EXPECT_EQ(smallest.weak[0].baseline, "2-rank DDP");
  EXPECT_EQ(smallest.weak[0].baseline_kind, WeakTable::Baseline::smallest_group);
  EXPECT_NEAR(smallest.weak[0].rows[0].efficiency, 1.0, 1e-12);
}

std::string joined_notes(const Table& t) {
  std::string s;
  for (const auto& n : t.notes) s += n + "\n";
  return s;
}

TEST(Report, RepeatedConfigurationsUseTheMedianLaunchNamedWithItsSpread) {
  auto files = load({"weak_cpu.json", "weak_cpu.json", "weak_cpu.json"});
  // The 1-rank row in three launches: p50 0.21 s as in the file (F1); 0.42 s in a tight
  // series (F2, the narrowest CI); 0.40 s in a noisy one with the most samples (F3).
  auto& tight = files[1].file.results[1];
  tight.ranks[0].samples_s = {0.4196, 0.4204, 0.4196, 0.4204, 0.42};
  tight.summary = summarize({tight.ranks[0].samples_s}, 16, 1);
  auto& noisy = files[2].file.results[1];
  noisy.ranks[0].samples_s.clear();
  for (int i = 0; i < 50; ++i) noisy.ranks[0].samples_s.push_back(i % 2 ? 0.3 : 0.5);
  noisy.summary = summarize({noisy.ranks[0].samples_s}, 16, 1);
  ASSERT_NEAR(noisy.summary.p50_s, 0.40, 1e-12);
  files[1].name = "tight";
  files[2].name = "noisy";
  // Three launches (each its own job), so that rows measured alike are not one launch given thrice.
  for (size_t i = 0; i < files.size(); ++i)
    for (auto& row : files[i].file.results) row.launch = {{"job_id", std::to_string(i)}, {"started_utc", "t"}};
  const Report r = build_report(files, {});
  ASSERT_EQ(r.weak.size(), 1u);
  EXPECT_TRUE(r.repeats.empty());
  // Sorted by p50: 0.21 (F1), 0.40 (F3), 0.42 (F2): the median launch is F3, whatever its CI.
  const WeakRow& one = r.weak[0].rows[0];
  EXPECT_NEAR(one.p50_s, 0.40, 1e-12);
  EXPECT_EQ(one.launch.file, "F3");
  EXPECT_EQ(one.launch.launches, 3);
  EXPECT_EQ(one.launch.all, (std::vector<std::string>{"F1", "F2", "F3"}));
  ASSERT_TRUE(one.launch.spread.has_value());
  EXPECT_NEAR(*one.launch.spread, (0.42 - 0.21) / 0.40, 1e-12);
  EXPECT_EQ(one.baseline_file, "F3");  // its DDP overhead against its own launch's no-DDP row
  EXPECT_NEAR(*one.ddp_overhead, (0.40 - 0.20) / 0.40, 1e-12);
  // Rows all three measured alike: the lower middle one of the tie in file order (F2), spread 0.
  EXPECT_EQ(r.weak[0].rows[1].launch.file, "F2");
  EXPECT_NEAR(*r.weak[0].rows[1].launch.spread, 0.0, 1e-12);
  // Every row names its file; a note says which launches and how far apart; the files
  // table explains the labels.
  const auto tables = measured_tables(r);
  const Table& w = table_of_kind(tables, "weak");
  const size_t fc = w.col("file");
  EXPECT_EQ(std::get<std::string>(w.rows[0][fc]), "F3");
  EXPECT_EQ(std::get<std::string>(w.rows[2][fc]), "F2");
  EXPECT_THAT(joined_notes(w), HasSubstr("1 rank: F3: the median p50 of 3 launches (F1, F2, F3), spread 52.5%"));
  const Table& f = table_of_kind(tables, "files");
  ASSERT_EQ(f.rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(f.rows[1][f.col("label")]), "F2");
  EXPECT_EQ(std::get<std::string>(f.rows[1][f.col("name")]), "tight");
}

TEST(Report, ANoDdpBaselineFromAnotherLaunchIsNamed) {
  auto files = load({"weak_cpu.json", "weak_cpu.json"});
  files[1].file.results.erase(files[1].file.results.begin());  // F2 has no no-DDP row
  for (auto& row : files[1].file.results) {                    // and is slower: F2 is the median of two
    for (auto& rk : row.ranks)
      for (double& x : rk.samples_s) x *= 2;
    std::vector<std::vector<double>> per_rank;
    for (const auto& rk : row.ranks) per_rank.push_back(rk.samples_s);
    row.summary = summarize(per_rank, row.batch_per_rank, row.world_size);
  }
  const Report r = build_report(files, {});
  ASSERT_EQ(r.weak.size(), 1u);
  // Two launches: the slower middle one by p50 is F2 for every row, its baseline F1's no-DDP row.
  EXPECT_EQ(r.weak[0].rows[0].launch.file, "F2");
  EXPECT_EQ(r.weak[0].rows[0].baseline_file, "F1");
  EXPECT_NEAR(r.weak[0].rows[0].p50_s, 0.42, 1e-12);
  // F1 with its no-DDP row only: the DDP rows are F2's, their baseline F1's, and the note says so.
  auto only_f2 = files;
  only_f2[0].file.results.erase(only_f2[0].file.results.begin() + 1, only_f2[0].file.results.end());
  const Report r2 = build_report(only_f2, {});
  ASSERT_EQ(r2.weak.size(), 1u);
  EXPECT_EQ(r2.weak[0].rows[0].launch.file, "F2");
  EXPECT_EQ(r2.weak[0].rows[0].baseline_file, "F1");
  EXPECT_THAT(joined_notes(table_of_kind(measured_tables(r2), "weak")),
              HasSubstr("1 rank: DDP overhead against the no-DDP row of F1 (this row: F2)"));
}

TEST(Report, RanksSharingAGpuCountTheGpuOnceAndSaySo) {
  auto files = load({"gpu_h100.json"});
  ResultFile& f = files[0].file;
  // 16 ranks on 8 GPUs: ranks 2k and 2k+1 report the same GPU UUID.
  nlohmann::json ranks = nlohmann::json::array();
  for (int k = 0; k < 16; ++k)
    ranks.push_back({{"rank", k}, {"host", k < 8 ? "node0" : "node1"}, {"gpu_uuid", "GPU-" + std::to_string(k / 2)}});
  f.environment["ranks"] = ranks;
  for (auto& row : f.results)
    for (auto& rk : row.ranks) rk.device = "cuda:0";
  const Report r = build_report(files, cost_opts());
  ASSERT_EQ(r.weak.size(), 1u);
  const WeakTable& t = r.weak[0];
  const WeakRow& big = t.rows.back();
  ASSERT_EQ(big.world_size, 16);
  EXPECT_EQ(big.devices, 8);
  EXPECT_EQ(t.rows.front().devices, 1);
  const double b = static_cast<double>(t.key.batch_per_rank);
  EXPECT_NEAR(big.aggregate_ex_s, 16 * b / 0.0625, 1e-9);
  EXPECT_NEAR(big.per_gpu_ex_s, 16 * b / 0.0625 / 8, 1e-9);
  // The row measures sharing, not scaling: flagged for the plots, no efficiency in the table,
  // and not priced (the cost table names it instead).
  EXPECT_TRUE(big.shared_gpu);
  EXPECT_FALSE(t.rows.front().shared_gpu);
  ASSERT_EQ(r.cost.size(), 1u);
  ASSERT_EQ(r.cost[0].rows.size(), 1u);
  EXPECT_EQ(r.cost[0].rows[0].world_size, 1);
  EXPECT_EQ(r.cost[0].not_priced, std::vector<std::string>{"fp32 (cuDNN TF32), batch 32 per GPU: 16 ranks on 8 GPUs (F1)"});
  // The table counts ranks and GPUs, and says why.
  const auto tables = measured_tables(r);
  const Table& w = table_of_kind(tables, "weak");
  EXPECT_EQ(w.columns[0].header, "ranks");
  EXPECT_EQ(w.columns[1].header, "GPUs");
  EXPECT_EQ(w.rows[1][w.col("efficiency")], Value());
  EXPECT_THAT(joined_notes(w), HasSubstr("16 ranks ran on 8 GPUs"));
  EXPECT_THAT(joined_notes(table_of_kind(tables, "cost")),
              HasSubstr("16 ranks on 8 GPUs (F1): not priced: its ranks shared a GPU"));
  // Without UUIDs or bus ids "cuda:0" on every rank says nothing (CUDA_VISIBLE_DEVICES): one GPU per rank.
  files[0].file.environment.erase("ranks");
  EXPECT_EQ(build_report(files, {}).weak[0].rows.back().devices, 16);
}

TEST(Report, DifferentSetupsAreDifferentConfigurations) {
  auto files = load({"weak_cpu.json", "weak_cpu.json"});
  files[1].name = "channels-last";
  files[1].file.config["channels_last"] = true;
  const Report r = build_report(files, {});
  ASSERT_EQ(r.weak.size(), 2u);
  EXPECT_EQ(r.weak[0].key.setup_label(), "fp32");
  EXPECT_EQ(r.weak[1].key.setup_label(), "fp32, channels_last");
  EXPECT_EQ(r.weak[1].key.precision, "fp32");
  // Each table's DDP overhead uses its own setup's no-DDP row.
  EXPECT_NEAR(*r.weak[1].rows[0].ddp_overhead, (0.21 - 0.20) / 0.21, 1e-12);
}

TEST(Report, Tf32MathSeparatesGpuRunsOnly) {
  auto gpu = load({"gpu_h100.json", "gpu_h100.json"});
  // gpu[0] keeps the fixture's math: cuDNN TF32 on, cuBLAS off (PyTorch's default).
  gpu[1].name = "true-fp32";
  gpu[1].file.environment["math"] = {{"cudnn_allow_tf32", false}, {"cublas_allow_tf32", false}};
  const Report g = build_report(gpu, {});
  ASSERT_EQ(g.weak.size(), 2u);
  EXPECT_EQ(g.weak[0].key.setup_label(), "fp32 (cuDNN TF32)");  // tables are ordered by ConfigKey: math
  EXPECT_EQ(g.weak[1].key.setup_label(), "fp32-strict");
  // "tf32" and "fp32" with both flags on are one configuration.
  auto tf = load({"gpu_h100.json", "gpu_h100.json"});
  for (auto& f : tf) f.file.environment["math"] = {{"cudnn_allow_tf32", true}, {"cublas_allow_tf32", true}};
  for (auto& row : tf[1].file.results) row.precision = "tf32";
  tf[1].name = "tf32";
  const Report t = build_report(tf, {});
  ASSERT_EQ(t.weak.size(), 1u);
  EXPECT_EQ(t.weak[0].key.setup_label(), "tf32");

  // On a CPU the cuDNN/cuBLAS flags change nothing: one configuration, no TF32 label.
  auto cpu = load({"weak_cpu.json", "weak_cpu.json"});
  cpu[0].file.environment["math"] = {{"cudnn_allow_tf32", true}, {"cublas_allow_tf32", true}};
  cpu[1].name = "second";
  const Report c = build_report(cpu, {});
  ASSERT_EQ(c.weak.size(), 1u);
  EXPECT_EQ(c.weak[0].key.setup_label(), "fp32");
}

TEST(Report, ComparesDeviceTypes) {
  const Report r = build_report(all_fixtures(), {});
  EXPECT_EQ(r.comparison.by, "device type");
  EXPECT_EQ(r.comparison.groups,
            (std::vector<std::string>{"NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"}));  // CPU has no common row
  ASSERT_EQ(r.comparison.rows.size(), 2u);
  EXPECT_NEAR(*r.comparison.rows[0].per_gpu_ex_s[0], 320, 1e-9);
  EXPECT_NEAR(*r.comparison.rows[0].ratio[1], 2.0, 1e-12);
  EXPECT_EQ(r.comparison.rows[1].key.world_size, 16);
  EXPECT_EQ(r.comparison.rows[1].key.device, "");  // compared across devices: every other field equal
}

TEST(Report, ComparesFilesOfOneDeviceType) {
  const Report r = build_report(load({"diff_base.json", "diff_test.json"}), {});
  EXPECT_EQ(r.comparison.by, "file");
  ASSERT_EQ(r.comparison.groups.size(), 2u);
  ASSERT_FALSE(r.comparison.rows.empty());
  EXPECT_NEAR(*r.comparison.rows[0].ratio[1], 0.100 / 0.120, 1e-9);  // the 1-GPU row got 20% slower
}

TEST(Report, BadOptionsAndEmptyInputAreUsageErrors) {
  auto o = cost_opts();
  o.gpu_hour_usd = -1;
  EXPECT_THROW(build_report(load({"weak_cpu.json"}), o), UsageError);
  o = cost_opts();
  o.epochs = 0;
  EXPECT_THROW(build_report(load({"weak_cpu.json"}), o), UsageError);
  EXPECT_THROW(build_report({}, {}), UsageError);
}

// ------------------------------------------------------------------ breakdown, knobs, collectives
// tests/fixtures/breakdown_cpu.json (make_fixtures_15.py): no DDP 60 ms; DDP plain 64 ms on 1
// rank and 100 ms on 2 (exposed comm 1 and 30 ms); on 2 ranks bucket cap 1 MiB 80 ms (exposed
// 10 ms) and comm hook fp16 90 ms (exposed 20 ms). Batch 16 per rank.

const WeakTable& weak_with_knobs(const Report& r, const std::string& knobs) {
  for (const auto& w : r.weak)
    if (w.key.knob_label() == knobs) return w;
  throw std::logic_error("no weak table with knobs '" + knobs + "'");
}

TEST(ReportBreakdown, OverheadSplitsIntoExposedCommAndTheRestByHand) {
  const Report r = build_report(load({"breakdown_cpu.json"}), {});
  ASSERT_EQ(r.weak.size(), 3u);  // the knobs are part of the configuration: one table per setting
  const auto& plain = weak_with_knobs(r, "");
  ASSERT_EQ(plain.rows.size(), 2u);
  EXPECT_NEAR(*plain.rows[0].ddp_overhead, (0.064 - 0.060) / 0.064, 1e-12);
  EXPECT_NEAR(*plain.rows[0].exposed_comm, 0.001 / 0.064, 1e-12);
  EXPECT_NEAR(*plain.rows[0].other_overhead, (0.064 - 0.060) / 0.064 - 0.001 / 0.064, 1e-12);
  EXPECT_NEAR(*plain.rows[1].ddp_overhead, 0.40, 1e-12);
  EXPECT_NEAR(*plain.rows[1].exposed_comm, 0.30, 1e-12);
  EXPECT_NEAR(*plain.rows[1].other_overhead, 0.10, 1e-12);
  const auto& cap1 = weak_with_knobs(r, "bucket cap 1 MiB");  // read from the rows' ddp_options
  ASSERT_EQ(cap1.rows.size(), 1u);
  EXPECT_EQ(cap1.baseline, "no-DDP");
  EXPECT_NEAR(cap1.rows[0].efficiency, (16 / 0.080) / (16 / 0.060), 1e-12);
  EXPECT_NEAR(*cap1.rows[0].ddp_overhead, 0.25, 1e-12);
  EXPECT_NEAR(*cap1.rows[0].exposed_comm, 0.125, 1e-12);
  EXPECT_NEAR(*cap1.rows[0].other_overhead, 0.125, 1e-12);
  EXPECT_NEAR(*weak_with_knobs(r, "comm hook fp16").rows[0].exposed_comm, 0.020 / 0.090, 1e-12);

  // Older files: no breakdown, so the split is n/a and no breakdown table is made.
  const Report old = build_report(load({"weak_cpu.json"}), {});
  EXPECT_FALSE(old.weak[0].rows[0].exposed_comm.has_value());
  EXPECT_FALSE(old.weak[0].rows[0].other_overhead.has_value());
  EXPECT_TRUE(old.weak[0].breakdown.empty());
  const auto tables = measured_tables(old);
  EXPECT_EQ(tables[0].rows[0][tables[0].col("exposed_comm")], Value());
  EXPECT_TRUE(std::none_of(tables.begin(), tables.end(), [](const Table& t) { return t.kind == "breakdown"; }));
}

// Exposed communication above the whole DDP overhead (a no-DDP baseline slower than the
// DDP row's compute) makes "other" negative: the table says so instead of leaving a
// negative share unexplained. Hand-made: the 2-rank plain row's exposed comm 30 -> 50 ms
// against a 40 ms overhead (100 ms DDP vs 60 ms no-DDP).
TEST(ReportBreakdown, NegativeOtherOverheadIsNamedInANote) {
  const auto has_note = [](const std::vector<NamedResult>& files) {
    for (const auto& t : measured_tables(build_report(files, {})))
      for (const auto& n : t.notes)
        if (n.rfind("2 ranks: other DDP overhead is negative", 0) == 0) return true;
    return false;
  };
  auto files = load({"breakdown_cpu.json"});
  EXPECT_FALSE(has_note(files));
  bool changed = false;
  for (auto& row : files[0].file.results)
    if (row.ddp && row.world_size == 2 && ConfigKey::of(files[0].file, row).knob_label().empty()) {
      // 20 ms more exposed comm, 20 ms less forward: the parts still sum to the step (a row
      // whose parts do not is refused where it is read: row_problem).
      (*row.breakdown.mean_over_ranks)[Phase::exposed_comm] = 0.050;
      (*row.breakdown.mean_over_ranks)[Phase::forward] = 0.002;
      changed = true;
    }
  ASSERT_TRUE(changed);
  EXPECT_NEAR(*weak_with_knobs(build_report(files, {}), "").rows[1].other_overhead, 0.40 - 0.50, 1e-12);
  EXPECT_TRUE(has_note(files));
}

TEST(ReportBreakdown, TableHasTheNoDdpRowFirstThenEachWorldSize) {
  const Report r = build_report(load({"breakdown_cpu.json"}), {});
  const auto& b = weak_with_knobs(r, "").breakdown;
  ASSERT_EQ(b.size(), 3u);
  EXPECT_FALSE(b[0].ddp);
  EXPECT_EQ(b[1].world_size, 1);
  EXPECT_EQ(b[2].world_size, 2);
  ASSERT_TRUE(b[2].mean_s.has_value());
  const std::array<double, 8> want = {0.022, 0.032, 0.050, 0.020, 0.030, 0.006, 0.010, 0.100};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR((*b[2].mean_s)[i], want[i], 1e-12) << kBreakdownComponents[i];
  EXPECT_EQ(*b[2].buckets, 3);
  EXPECT_EQ(*b[2].allreduce_bytes_per_step, 46137344.0);
  EXPECT_NEAR(*b[2].effective_busbw_gbps, 46137344 / 0.050 / 1e9 * 2 * 1 / 2, 1e-9);
  EXPECT_FALSE(b[0].buckets.has_value());  // no DDP: no buckets

  const auto tables = measured_tables(r);
  EXPECT_EQ(tables[0].kind, "weak");
  EXPECT_EQ(table_of_kind(tables, "breakdown").section, "Where the time goes");
  const auto text = render_tables({table_of_kind(tables, "breakdown")}, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("Step breakdown: resnet18, fp32, CPU (Fixture CPU), weak scaling, batch 16 per rank"));
  EXPECT_THAT(text,
              HasSubstr("no DDP      1       20.00           30.00         0.00        0.00             0.00"
                        "          6.00      4.00    60.00      n/a                 n/a              n/a    F1\n"));
  EXPECT_THAT(text,
              HasSubstr("DDP         2       22.00           32.00        50.00       20.00            30.00"
                        "          6.00     10.00   100.00        3                44.0            0.923    F1\n"));
  const auto j = table_json(table_of_kind(tables, "breakdown"));
  EXPECT_DOUBLE_EQ(j["rows"][2]["exposed_comm_ms"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(j["rows"][2]["allreduce_mib_per_step"].get<double>(), 44.0);
}

TEST(ReportImpact, SpeedupAndExposedCommChangeAgainstThePlainRunByHand) {
  const Report r = build_report(load({"breakdown_cpu.json"}), {});
  ASSERT_EQ(r.impact.size(), 1u);
  const auto& m = r.impact[0];
  EXPECT_TRUE(m.has_baseline);
  EXPECT_EQ(m.key.world_size, 2);
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.rows[0].technique, "baseline (DDP defaults)");
  EXPECT_NEAR(*m.rows[0].speedup, 1.0, 1e-12);
  EXPECT_EQ(m.rows[1].technique, "bucket cap 1 MiB");
  EXPECT_NEAR(m.rows[1].step_s, 0.080, 1e-12);
  EXPECT_NEAR(*m.rows[1].speedup, 0.100 / 0.080, 1e-12);  // 1.25
  EXPECT_NEAR(*m.rows[1].exposed_comm_s, 0.010, 1e-12);
  EXPECT_NEAR(*m.rows[1].exposed_change_s, 0.010 - 0.030, 1e-12);
  EXPECT_NEAR(*m.rows[1].exposed_change, -2.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.rows[1].aggregate_ex_s, 2 * 16 / 0.080, 1e-9);
  EXPECT_EQ(m.rows[2].technique, "comm hook fp16");
  EXPECT_NEAR(*m.rows[2].speedup, 0.100 / 0.090, 1e-12);
  EXPECT_NEAR(*m.rows[2].exposed_change_s, -0.010, 1e-12);
  EXPECT_NEAR(*m.rows[2].exposed_change, -1.0 / 3.0, 1e-12);
  const auto text = render_tables({table_of_kind(measured_tables(r), "impact")}, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("Optimization impact: resnet18, fp32, CPU (Fixture CPU), batch 16 per rank, 64x64 "
                              "images, DDP on 2 ranks\n"));
  EXPECT_THAT(text, HasSubstr("bucket cap 1 MiB               80.00    1.25x            10.00                  -20.00"
                              "               -66.7%           400.0    F1\n"));
  EXPECT_THAT(text, HasSubstr("comm hook fp16                 90.00    1.11x            20.00                  -10.00"
                              "               -33.3%           355.6    F1\n"));
  // Only where a variant was measured: a run with every knob at its default has no table.
  EXPECT_TRUE(build_report(load({"weak_cpu.json"}), {}).impact.empty());
}

TEST(ReportImpact, WithoutAPlainRunNoBaselineIsInvented) {
  auto files = load({"breakdown_cpu.json"});
  auto& rows = files[0].file.results;
  rows.erase(rows.begin() + 2);  // the plain 2-rank row
  const Report r = build_report(files, {});
  ASSERT_EQ(r.impact.size(), 1u);
  EXPECT_FALSE(r.impact[0].has_baseline);
  ASSERT_EQ(r.impact[0].rows.size(), 2u);
  for (const auto& x : r.impact[0].rows) {
    EXPECT_FALSE(x.speedup.has_value()) << x.technique;
    EXPECT_FALSE(x.exposed_change_s.has_value()) << x.technique;
  }
  const auto text = render_tables({table_of_kind(measured_tables(r), "impact")}, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("no plain run (every DDP knob at its default) on 2 ranks of this configuration"));
}

// --grad-accum K: a step holds K micro-batches, so throughput (and the speedup, a throughput
// ratio) counts K x batch examples per step.
TEST(ReportImpact, GradAccumCountsEveryMicroBatch) {
  auto files = load({"breakdown_cpu.json"});
  BenchResult acc = files[0].file.results[2];  // the plain 2-rank row ...
  acc.grad_accum = 2;                          // ... accumulating 2 micro-steps in 150 ms
  for (auto& rk : acc.ranks)
    for (auto& x : rk.samples_s) x += 0.050;
  acc.summary = summarize({acc.ranks[0].samples_s, acc.ranks[1].samples_s}, 16 * 2, 2);  // as the engine: K x batch
  ASSERT_NEAR(acc.summary.p50_s, 0.150, 1e-12);
  files[0].file.results.push_back(acc);
  const Report r = build_report(files, {});
  ASSERT_EQ(r.impact.size(), 1u);
  const auto it = std::find_if(r.impact[0].rows.begin(), r.impact[0].rows.end(),
                               [](const ImpactRow& x) { return x.technique == "grad accum 2"; });
  ASSERT_NE(it, r.impact[0].rows.end());
  EXPECT_NEAR(it->aggregate_ex_s, 2 * 16 * 2 / 0.150, 1e-9);
  EXPECT_NEAR(*it->speedup, (2 * 16 * 2 / 0.150) / (2 * 16 / 0.100), 1e-12);  // 1.33x, not 0.100 / 0.150
  EXPECT_NEAR(weak_with_knobs(r, "grad accum 2").rows[0].per_gpu_ex_s, 32 / 0.150, 1e-9);
}
}  // namespace
}  // namespace ddpbench
