// `ddpbench report`: scaling numbers computed by hand from the fixtures, the typed
// tables and their printers, and golden table, Markdown and CSV output (regenerate with
// DDPBENCH_UPDATE_GOLDEN=1 after a deliberate change: the tests then write the files and
// fail, so review the diff and run them again without it).
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

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

const std::string kDir = DDPBENCH_SOURCE_DIR "/tests/";

std::vector<NamedResult> load(const std::vector<std::string>& names) {
  std::vector<NamedResult> out;
  for (const auto& n : names) out.push_back({"fixtures/" + n, read_result_file(kDir + "fixtures/" + n)});
  return out;
}

std::vector<NamedResult> all_fixtures() {
  return load({"weak_cpu.json", "strong_cpu.json", "gpu_a100.json", "gpu_h100.json"});
}

ReportOptions cost_opts() {
  ReportOptions o;
  o.gpu_hour_usd = 2.0;
  o.epochs = 2;
  o.dataset_size = 100000;
  return o;
}

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
  EXPECT_EQ(c.best_world_size, 1);  // efficiency below 1: more GPUs cost more per sample
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
  EXPECT_THAT(text, HasSubstr("\n1           0.1476              108.4              5.1257   0.369      0.74    F1\n"));
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

// report_tables without the executive summary, the definitions and the appendix's commands: the
// measured tables and the files table, in print order.
std::vector<Table> measured_tables(const Report& r) {
  std::vector<Table> out;
  for (auto& t : report_tables(r))
    if (t.kind != "headline" && t.kind != "summary" && t.kind != "findings" && t.kind != "recommendations" &&
        t.kind != "commands" && t.kind != "definitions")
      out.push_back(std::move(t));
  return out;
}

const Table& table_of_kind(const std::vector<Table>& ts, const std::string& kind, size_t nth = 0) {
  for (const auto& t : ts)
    if (t.kind == kind && nth-- == 0) return t;
  throw std::logic_error("no table of kind " + kind);
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
  EXPECT_EQ(r.cost[0].not_priced, std::vector<std::string>{"16 ranks on 8 GPUs (F1)"});
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
      (*row.breakdown.mean_over_ranks)[Phase::exposed_comm] = 0.050;
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

TEST(ReportComm, NcclTestsColumnsFromACommOnlyFile) {
  const Report r = build_report(load({"comm_cpu.json"}), {});  // no run rows: no longer an error
  EXPECT_TRUE(r.weak.empty());
  ASSERT_EQ(r.comm.size(), 4u);  // allreduce on 2 and on 3 ranks, all_gather, barrier
  EXPECT_EQ(r.comm[0].collective, "allreduce");
  EXPECT_EQ(r.comm[1].world_size, 3);
  EXPECT_EQ(r.comm[2].collective, "all_gather");
  const auto tables = measured_tables(r);
  ASSERT_EQ(tables.size(), 5u);  // and the result files last
  EXPECT_EQ(tables.back().kind, "files");
  const auto& t = tables[1];
  EXPECT_EQ(t.kind, "comm");
  ASSERT_EQ(t.rows.size(), 4u);
  // 4 MiB on 3 ranks in 7000 us: algbw = 4194304 / 7000e-6 / 1e9 = 0.599186 GB/s; busbw = algbw x 2(3-1)/3.
  EXPECT_NEAR(std::get<double>(t.rows[3][t.col("algbw_gbps")]), 4194304 / 7000e-6 / 1e9, 1e-9);
  EXPECT_NEAR(std::get<double>(t.rows[3][t.col("busbw_gbps")]), 4194304 / 7000e-6 / 1e9 * 4 / 3, 1e-9);
  const auto text = render_tables({t}, TableFormat::text);
  EXPECT_THAT(
      text,
      HasSubstr("Collective allreduce: 3 ranks (1M/3C), CPU (Fixture CPU), fixtures/comm_cpu.json\n"
                "size (B)  count (elements)     type  redop  root  time (us)  algbw (GB/s)  busbw (GB/s)  #wrong\n"));
  EXPECT_THAT(
      text,
      HasSubstr("4194304            1048576  float32    sum    -1    7000.00         0.599         0.799       0\n"));
  // A barrier moves no payload: no bandwidth.
  const auto& barrier = tables[3];
  EXPECT_EQ(barrier.rows[0][barrier.col("busbw_gbps")], Value());

  // A corrupted result is said in words under its table.
  auto bad = load({"comm_cpu.json"});
  bad[0].file.comm_results[2].wrong = 3;
  EXPECT_THAT(render_tables({comm_table(build_report(bad, {}).comm[0])}, TableFormat::text),
              HasSubstr("WRONG RESULTS: 3 elements differed"));

  // Neither DDP rows nor collective results: an error naming both kinds of file.
  auto empty = load({"comm_cpu.json"});
  empty[0].file.comm_results.clear();
  try {
    build_report(empty, {});
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("ddpbench comm --json"));
  }
}

TEST(ReportComm, RunAndCommFilesTogether) {
  const Report r = build_report(load({"breakdown_cpu.json", "comm_cpu.json"}), {});
  EXPECT_EQ(r.weak.size(), 3u);
  EXPECT_EQ(r.impact.size(), 1u);
  EXPECT_EQ(r.comm.size(), 4u);
  std::vector<std::string> kinds;
  for (const auto& t : measured_tables(r)) kinds.push_back(t.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"weak", "weak", "weak", "breakdown", "breakdown", "breakdown", "impact",
                                             "comm", "comm", "comm", "comm", "files"}));
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.files[1]["kind"], "comm");
  EXPECT_EQ(r.files[1]["comm_rows"], 13);
}

// Update mode writes the file and fails, so it can never pass silently.
void golden(const std::string& name, const std::string& actual) {
  const std::string path = kDir + "golden/" + name;
  if (std::getenv("DDPBENCH_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual;
    FAIL() << "wrote " << path << " (DDPBENCH_UPDATE_GOLDEN is set): review its diff, then run without it";
  }
  EXPECT_EQ(actual, testutil::slurp(path)) << "golden file " << path << " differs";
}

std::string rendered(TableFormat f) { return render_report(build_report(all_fixtures(), cost_opts()), f); }

TEST(ReportGolden, Table) { golden("report.txt", rendered(TableFormat::text)); }
TEST(ReportGolden, Markdown) { golden("report.md", rendered(TableFormat::markdown)); }
TEST(ReportGolden, Csv) { golden("report.csv", rendered(TableFormat::csv)); }

TEST(Report, JsonHasEveryTable) {
  const auto j = nlohmann::json::parse(rendered(TableFormat::json));
  std::map<std::string, int> kinds;
  for (const auto& t : j["tables"]) ++kinds[t["kind"].get<std::string>()];
  EXPECT_EQ(kinds["weak"], 3);
  EXPECT_EQ(kinds["strong"], 1);
  EXPECT_EQ(kinds["cost"], 4);
  EXPECT_EQ(kinds["comparison"], 1);
  EXPECT_EQ(j["files"].size(), 4u);
  ASSERT_EQ(j["tables"][0]["kind"], "headline");  // the executive summary first, opening with the headline
  ASSERT_EQ(j["tables"][1]["kind"], "summary");
  EXPECT_TRUE(j["headline"]["lines"].is_array());
  const auto weak_at =
      std::find_if(j["tables"].begin(), j["tables"].end(), [](const nlohmann::json& t) { return t["kind"] == "weak"; });
  ASSERT_NE(weak_at, j["tables"].end());
  const auto& cpu = *weak_at;
  EXPECT_EQ(cpu["device"], "CPU (Fixture CPU)");
  EXPECT_DOUBLE_EQ(cpu["rows"][2]["efficiency"].get<double>(), 0.84);
  EXPECT_DOUBLE_EQ(cpu["rows"][2]["ddp_overhead"].get<double>(), 0.2);
  const auto cmp_at = std::find_if(j["tables"].begin(), j["tables"].end(),
                                   [](const nlohmann::json& t) { return t["kind"] == "comparison"; });
  ASSERT_NE(cmp_at, j["tables"].end());
  const auto& cmp = *cmp_at;
  EXPECT_EQ(cmp["rows"].size(), 4u);  // 2 configurations x 2 device types, long form
  EXPECT_DOUBLE_EQ(cmp["rows"][1]["ratio"].get<double>(), 2.0);
}

// ------------------------------------------------------------------ typed tables

Table tiny() {
  Table t;
  t.kind = "k";
  t.title = "T";
  t.context = {{"device", std::string("CPU, x")}};
  t.columns = {{"n", "N", "", fmtcol::plain()},
               {"frac", "share", "fraction", fmtcol::percent()},
               {"hidden", "h", "s", fmtcol::fixed(2), false}};
  t.rows = {{Value(3LL), Value(0.25), Value(1.5)}, {Value(4LL), Value(), Value(2.0)}};
  t.notes = {"a note"};
  return t;
}

TEST(Table, PrintersRenderOneDefinition) {
  const auto t = tiny();
  EXPECT_EQ(render_tables({t}, TableFormat::text), "T\nN  share\n--------\n3  25.0%\n4    n/a\na note\n");
  EXPECT_EQ(render_tables({t}, TableFormat::markdown),
            "### T\n\n| N | share |\n|---|---:|\n| 3 | 25.0% |\n| 4 | n/a |\n\na note\n");
  // CSV: raw values, every column (also those hidden from people), context quoted.
  EXPECT_EQ(render_tables({t}, TableFormat::csv),
            "table,device,frac,hidden,n\nk,\"CPU, x\",0.25,1.5,3\nk,\"CPU, x\",,2,4\n");  // keys sorted
  const auto j = table_json(t);
  EXPECT_EQ(j["device"], "CPU, x");
  EXPECT_TRUE(j["rows"][1]["frac"].is_null());
  EXPECT_EQ(j["columns"][1]["unit"], "fraction");
  EXPECT_THROW(t.col("fracc"), std::logic_error);  // a misspelt key is an error, not an empty cell
  EXPECT_EQ(t.col("hidden"), 2u);
  EXPECT_EQ(fmtcol::bytes()(Value(3308238848.0)), "3.08 GiB");
  EXPECT_EQ(fmtcol::bytes()(Value(536870912.0)), "512.0 MiB");
  EXPECT_THROW(parse_table_format("xml"), UsageError);
}

TEST(Report, CpuTablesSayRanks) {
  const auto text =
      render_report(build_report(load({"weak_cpu.json", "strong_cpu.json"}), cost_opts()), TableFormat::text);
  EXPECT_EQ(text.find("GPU"), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("batch 16 per rank"));
  EXPECT_THAT(text, HasSubstr("per-rank ex/s"));
  EXPECT_THAT(text, HasSubstr("USD per rank-hour"));
  EXPECT_THAT(text, HasSubstr("DDP overhead vs no-DDP"));
}

TEST(Report, RowsShowSelfCheckMemoryWarningsStoppingAndTheMfuPeak) {
  const Report r = build_report(load({"gpu_h100.json"}), {});
  ASSERT_EQ(r.weak.size(), 1u);
  const auto& rows = r.weak[0].rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].facts.self_check_passed, std::optional<bool>(true));
  EXPECT_EQ(*rows[0].facts.metric("peak_memory_bytes"), 3308238848.0);
  EXPECT_NEAR(*rows[0].mfu, 6 * 4089184256.0 * 640 / 1e12 / 67, 1e-9);
  ASSERT_EQ(rows[1].facts.warnings.size(), 1u);
  EXPECT_EQ(rows[1].facts.stopping.reason, "max_iters");
  const auto tables = measured_tables(r);
  const Table& t = tables[0];
  EXPECT_EQ(t.rows[0][t.col("self_check")], Value(std::string("passed")));
  EXPECT_EQ(t.rows[0][t.col("peak_memory_bytes")], Value(3308238848.0));
  EXPECT_EQ(t.rows[1][t.col("notes")], Value(std::string("noisy, auto: max_iters")));
  const auto text = render_tables({t}, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("3.08 GiB"));
  // Each row names the peak its MFU divides by (the recorded basis names the unit).
  EXPECT_EQ(t.rows[0][t.col("mfu_peak")], Value(std::string("FP32 67 TFLOP/s")));
  EXPECT_EQ(rows[0].mfu_peak.basis, "FP32 dense peak (no tensor cores)");
  EXPECT_THAT(text, HasSubstr("16 GPUs: noisy: cv 7.2%"));
  EXPECT_THAT(text, HasSubstr("16 GPUs: auto stopping ended on max_iters"));
}

// ------------------------------------------------------------------ cluster validation (schema 1.6)
// tests/fixtures/make_fixtures_16.py holds the hand numbers.

const Table* find_table(const std::vector<Table>& ts, const std::string& kind, size_t nth = 0) {
  for (const auto& t : ts)
    if (t.kind == kind && nth-- == 0) return &t;
  return nullptr;
}

size_t count_of(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

TEST(ReportCluster, TelemetryOfACpuRunShowsHostMetricsAndTheReasonOnce) {
  const auto files = load({"cluster_cpu.json"});
  const auto t = summarize_telemetry(files[0].file.results[1]);
  EXPECT_EQ(t.ranks, 2);
  EXPECT_EQ(t.gpu_ranks, 0);
  EXPECT_NEAR(*t.mean_cpu_util_pct, (98.0 + 60.0) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(*t.max_peak_rss_bytes, 520.0 * 1024 * 1024);
  EXPECT_NEAR(*t.mean_net_rx_bytes_per_s, 2e6, 1e-6);
  EXPECT_NEAR(*t.mean_net_tx_bytes_per_s, 3e6, 1e-6);
  EXPECT_FALSE(t.min_sm_util_pct.has_value());
  const Report r = build_report(files, {});
  const std::string text = render_report(r, TableFormat::text);
  EXPECT_THAT(text,
              HasSubstr("resnet18   1M/2C          16      2        79.0  520.0 MiB         2.00         3.00\n"));
  EXPECT_EQ(count_of(text, "GPU metrics unavailable"), 1u) << text;
  EXPECT_THAT(text,
              HasSubstr("GPU metrics unavailable (every rank; host metrics only): no GPU: the rank runs on the CPU"));
  EXPECT_EQ(text.find("SM util"), std::string::npos);  // no GPU columns on a CPU run
}

TEST(ReportCluster, TelemetryOfAGpuRunTakesTheWorstRank) {
  const Report r = build_report(load({"cluster_gpu.json"}), {});
  ASSERT_EQ(r.cluster.size(), 1u);
  const auto t = summarize_telemetry(r.cluster[0].rows[0]);
  EXPECT_DOUBLE_EQ(*t.min_sm_util_pct, 41);
  EXPECT_DOUBLE_EQ(*t.max_temperature_c, 85);
  EXPECT_DOUBLE_EQ(*t.min_sm_clock_mhz, 1410);
  EXPECT_DOUBLE_EQ(*t.max_power_w, 700);
  // 30,000,000,001 bytes used of 85,899,345,920 (80 GiB): 34.92% of the card.
  ASSERT_TRUE(t.max_mem_used_pct.has_value());
  EXPECT_NEAR(*t.max_mem_used_pct, 34.9246, 1e-4);
  EXPECT_EQ(t.throttled_ranks, 1);
  const auto tables = measured_tables(r);
  const Table* tel = find_table(tables, "telemetry");
  ASSERT_NE(tel, nullptr);
  EXPECT_EQ(tel->rows[0][tel->col("throttled")],
            Value(std::string("1 of 4 (hw_thermal_slowdown, sw_thermal_slowdown)")));
  const std::string text = render_report(r, TableFormat::text);
  EXPECT_EQ(text.find("unavailable"), std::string::npos);
  // The rows' warnings, in the scaling table's notes column and in words under the telemetry table.
  EXPECT_THAT(text, HasSubstr("low_gpu_util, gpu_throttled"));
  EXPECT_THAT(
      text, HasSubstr("resnet50 1M/4G: low_gpu_util: rank 2 (node0, GPU 2): mean SM utilization 41% < --min-util 80%"));
}

TEST(ReportCluster, TheStragglerIsNamedWithoutPerRankAndTheTablesComeWithIt) {
  auto files = load({"cluster_cpu.json", "cluster_gpu.json"});
  Report r = build_report(files, {});
  ASSERT_GE(r.findings.size(), 2u);
  // 0.0208 / 0.040 = 0.52
  EXPECT_EQ(
      r.findings[0],
      "Straggler (resnet18, batch 16 per rank, 2 ranks): rank 1 (host node0, local rank 1, CPU) has score 0.52 < 0.95");
  EXPECT_EQ(r.findings[1],
            "No straggler (resnet50, batch 64 per rank, 4 ranks): every rank scored >= 0.95 (lowest: "
            "rank 2, 0.97)");
  // In the executive summary's findings, before any measured table.
  const std::string text = render_report(r, TableFormat::text);
  ASSERT_NE(text.find("- " + r.findings[0] + "\n"), std::string::npos);
  EXPECT_LT(text.find("- " + r.findings[0] + "\n"), text.find("Weak scaling"));
  const auto plain = measured_tables(r);
  EXPECT_EQ(find_table(plain, "stragglers"), nullptr);
  EXPECT_EQ(find_table(plain, "rank_telemetry"), nullptr);
  ReportOptions o;
  o.per_rank = true;
  r = build_report(files, o);
  const auto tables = measured_tables(r);
  EXPECT_EQ(tables.size(), plain.size() + 4);  // per file: a straggler table and one model's rank telemetry
  const Table* s = find_table(tables, "stragglers");
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(std::get<double>(s->rows[1][s->col("score")]), 0.0208 / 0.040);
  EXPECT_EQ(s->rows[1][s->col("straggler")], Value(std::string("STRAGGLER")));
  EXPECT_EQ(s->rows[0][s->col("straggler")], Value(std::string("")));
  EXPECT_DOUBLE_EQ(std::get<double>(s->rows[1][s->col("compute_step_ms")]), 40.0);
  const Table* g = find_table(tables, "stragglers", 1);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->rows[2][g->col("gpu_uuid")], Value(std::string("GPU-2")));
  EXPECT_EQ(g->rows[2][g->col("bus_id")], Value(std::string("00000000:1A:00.0")));
  const Table* rt = find_table(tables, "rank_telemetry", 1);  // the GPU file's
  ASSERT_NE(rt, nullptr);
  EXPECT_DOUBLE_EQ(std::get<double>(rt->rows[2][rt->col("mean_sm_util_pct")]), 41);
  EXPECT_EQ(rt->rows[2][rt->col("throttled")], Value(std::string("25% (hw_thermal_slowdown, sw_thermal_slowdown)")));
  const Table* rc = find_table(tables, "rank_telemetry", 0);  // the CPU file's: host columns only
  ASSERT_NE(rc, nullptr);
  EXPECT_THROW(rc->col("mean_sm_util_pct"), std::logic_error);
  EXPECT_DOUBLE_EQ(std::get<double>(rc->rows[1][rc->col("net_tx_mb_s")]), 4.0);
}

TEST(ReportCluster, BurnInPerRankAndOverManyRanks) {
  const Report r = build_report(load({"cluster_cpu.json", "many_ranks_cpu.json"}), {});
  const auto tables = measured_tables(r);
  const Table* b = find_table(tables, "burn_in");
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->rows.size(), 4u);
  EXPECT_DOUBLE_EQ(std::get<double>(b->rows[3][b->col("start_s")]), 90);
  EXPECT_DOUBLE_EQ(std::get<double>(b->rows[3][b->col("rank1_ex_s")]), 88);
  const std::string text = render_tables({*b}, TableFormat::text);
  // (88 - 100) / 100
  EXPECT_THAT(text, HasSubstr("drift: rank 0 -2.0% (100.0 -> 98.0 ex/s); rank 1 -12.0% (100.0 -> 88.0 ex/s) DRIFT"));
  const Table* m = find_table(tables, "burn_in", 1);
  ASSERT_NE(m, nullptr);
  // 100 ranks at 50 + rank % 7 in the first window: 50 .. 56, median 53 (50 and 51 15 times, the rest 14).
  EXPECT_DOUBLE_EQ(std::get<double>(m->rows[0][m->col("min_ex_s")]), 50);
  EXPECT_DOUBLE_EQ(std::get<double>(m->rows[0][m->col("median_ex_s")]), 53);
  EXPECT_DOUBLE_EQ(std::get<double>(m->rows[0][m->col("max_ex_s")]), 56);
  EXPECT_THROW(m->col("rank0_ex_s"), std::logic_error);
  const std::string mt = render_tables({*m}, TableFormat::text);
  EXPECT_THAT(mt, HasSubstr("rank 20 -14.3% (56.0 -> 48.0 ex/s);"));
  EXPECT_THAT(mt, HasSubstr("and 55 more"));
}

TEST(ReportCluster, PairRowsGetTheirTableAndTheSlowNodeIsNamed) {
  const Report r = build_report(load({"pairs_cpu.json"}), {});
  EXPECT_TRUE(r.comm.empty());  // pair rows are not a size sweep
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_THAT(r.findings[0], HasSubstr("Slow node (F1): node2: every pair with it is slow"));
  const auto tables = measured_tables(r);
  ASSERT_EQ(tables.size(), 2u);  // and the result files
  const Table& t = tables[0];
  EXPECT_EQ(t.kind, "pairs");
  // One line per pair (core/analysis/pairs.hpp pairs_table), in round order.
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[1][t.col("pair")], Value(std::string("node0 - node2")));
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[1][t.col("p2p_ba_gbps")]), 0.025);
  EXPECT_EQ(t.rows[1][t.col("flag")], Value(std::string("slow: p2p node2->node0, allreduce")));
  EXPECT_THAT(render_tables(tables, TableFormat::text), HasSubstr("SLOW NODE node2: every pair"));
}

TEST(ReportCluster, AFindMaxBsFileIsReported) {
  const Report r = build_report(load({"maxbs_cpu.json"}), {});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0],
            "find-max-bs (resnet18, fp32, cpu, 64x64): the largest batch per rank that trained is 48; "
            "recommended 43 (10% margin).");
  const auto tables = measured_tables(r);
  ASSERT_EQ(tables.size(), 2u);  // and the result files
  ASSERT_EQ(tables[0].rows.size(), 5u);
  EXPECT_EQ(tables[0].rows[2][tables[0].col("fits")], Value(std::string("no")));
  EXPECT_EQ(tables[0].rows[3][tables[0].col("batch")], Value(48LL));
  const auto j = nlohmann::json::parse(render_report(r, TableFormat::json));
  EXPECT_EQ(j["findings"][0], r.findings[0]);
  const std::string csv = render_report(r, TableFormat::csv);  // one CSV: one header line, then rows
  EXPECT_EQ(csv.rfind("table,", 0), 0u);
  EXPECT_EQ(csv.find("\ntable,"), std::string::npos);
}

TEST(Report, DeviceType) {
  ResultFile f;
  EXPECT_EQ(device_type(f), "CPU");
  f.environment = {{"gpus", {{{"name", "A"}}, {{"name", "A"}}}}};
  EXPECT_EQ(device_type(f), "A");
  f.environment = {{"gpus", {{{"name", "A"}}, {{"name", "B"}}}}};
  EXPECT_EQ(device_type(f), "mixed: A + B");
}

// ---- strategy, memory and inference tables (schema 1.7): tests/fixtures/strategies_cpu.json,
// numbers by hand in tests/fixtures/make_fixtures_memory.py.
constexpr double kMiB = 1024.0 * 1024.0;

TEST(ReportStrategy, StrategyTableByHand) {
  const Report r = build_report(load({"strategies_cpu.json"}), {});
  ASSERT_EQ(r.strategy.size(), 1u);
  const auto& t = r.strategy[0];
  EXPECT_EQ(t.key.model, "resnet50");
  ASSERT_EQ(t.rows.size(), 6u);  // ws 1 ddp; ws 2 ddp fp32, ddp bf16, ddp + checkpointing, zero2, fsdp
  EXPECT_EQ(t.rows[0].world_size, 1);
  const StrategyRow& ddp = t.rows[1];
  EXPECT_EQ(ddp.strategy, "ddp");
  EXPECT_EQ(ddp.precision, "fp32");
  EXPECT_FALSE(ddp.activation_checkpointing);
  EXPECT_NEAR(ddp.aggregate_ex_s, 2 * 8 / 0.60, 1e-9);
  ASSERT_TRUE(ddp.efficiency);
  EXPECT_NEAR(*ddp.efficiency, (2 * 8 / 0.60) / (2 * (8 / 0.52)), 1e-12);  // 86.67%
  ASSERT_TRUE(ddp.exposed_comm);
  EXPECT_NEAR(*ddp.exposed_comm, 0.06 / 0.60, 1e-12);
  EXPECT_NEAR(ddp.step_s, 0.60, 1e-12);
  EXPECT_EQ(ddp.peak_rss_bytes, 1200 * kMiB);
  EXPECT_FALSE(ddp.peak_allocated_bytes);
  EXPECT_EQ(ddp.model_state_bytes, 300 * kMiB);
  EXPECT_EQ(t.rows[2].precision, "bf16");
  EXPECT_FALSE(t.rows[2].efficiency);  // neither a 1-rank bf16 line nor a bf16 no-DDP row
  EXPECT_TRUE(t.rows[3].activation_checkpointing);
  EXPECT_FALSE(t.rows[3].efficiency);
  const StrategyRow& zero2 = t.rows[4];
  EXPECT_EQ(zero2.strategy, "zero2");
  ASSERT_TRUE(zero2.efficiency);  // no 1-rank zero2 line: against the no-DDP row, 16 ex/s
  EXPECT_NEAR(*zero2.efficiency, (2 * 8 / 0.66) / (2 * 16.0), 1e-12);  // 75.76%
  EXPECT_FALSE(zero2.exposed_comm);
  EXPECT_EQ(zero2.model_state_bytes, 200 * kMiB);
  EXPECT_EQ(t.rows[5].strategy, "fsdp");
  EXPECT_EQ(t.rows[5].peak_rss_bytes, 900 * kMiB);

  const std::string text = render_tables({table_of_kind(measured_tables(r), "strategy")}, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("Strategy comparison: resnet50, CPU (Fixture CPU), weak scaling, batch 8 per rank"));
  EXPECT_THAT(text, HasSubstr("86.7%"));
  EXPECT_THAT(text, HasSubstr("75.8%"));
  EXPECT_THAT(text, HasSubstr("1.17 GiB"));  // 1200 MiB
}

TEST(ReportStrategy, MemoryTableByHand) {
  const Report r = build_report(load({"strategies_cpu.json"}), {});
  ASSERT_EQ(r.memory.size(), 1u);
  const auto& m = r.memory[0];
  EXPECT_EQ(m.peak_kind, "peak RSS");
  ASSERT_EQ(m.rows.size(), 4u);
  const std::vector<std::string> techniques{"mixed precision (bf16)", "activation checkpointing", "zero2", "fsdp"};
  const std::vector<double> saved_mib{120, 240, 200, 300}, saved{0.10, 0.20, 200.0 / 1200, 0.25},
      paid{-0.20, 0.20, 0.10, 0.25};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(techniques[i]);
    EXPECT_EQ(m.rows[i].world_size, 2);
    EXPECT_EQ(m.rows[i].technique, techniques[i]);
    EXPECT_EQ(m.rows[i].baseline_peak_bytes, 1200 * kMiB);
    EXPECT_NEAR(m.rows[i].saved_bytes, saved_mib[i] * kMiB, 1e-3);
    EXPECT_NEAR(m.rows[i].saved, saved[i], 1e-12);
    EXPECT_NEAR(m.rows[i].time_paid, paid[i], 1e-12);
  }
  EXPECT_EQ(m.rows[3].model_state_bytes, 100 * kMiB);
  EXPECT_EQ(m.rows[3].baseline_model_state_bytes, 300 * kMiB);

  const auto tables = measured_tables(r);
  const std::string md = render_tables({table_of_kind(tables, "memory")}, TableFormat::markdown);
  EXPECT_THAT(md, HasSubstr("Memory optimization (measured): resnet50"));
  EXPECT_THAT(md, HasSubstr("| 2 | fsdp | 900.0 MiB | 1.17 GiB | 300.0 MiB | 25.0% |"));
  const nlohmann::json j = nlohmann::json::parse(render_tables({table_of_kind(tables, "memory")}, TableFormat::json));
  const auto& row0 = j["tables"][0]["rows"][0];
  EXPECT_EQ(row0["technique"], "mixed precision (bf16)");
  EXPECT_NEAR(row0["saved_bytes"].get<double>(), 120 * kMiB, 1e-3);
  EXPECT_NEAR(row0["time_paid"].get<double>(), -0.2, 1e-12);
}

TEST(ReportStrategy, OnlyPlainTrainingRowsInTheScalingTablesAndInferenceApart) {
  const Report r = build_report(load({"strategies_cpu.json"}), {});
  // fp32: ddp on 1 and 2 ranks only (zero2, fsdp, checkpointing and inference stay out); bf16: its own table.
  ASSERT_EQ(r.weak.size(), 2u);
  const auto bf16 =
      std::find_if(r.weak.begin(), r.weak.end(), [](const WeakTable& w) { return w.key.precision == "bf16"; });
  ASSERT_NE(bf16, r.weak.end());
  ASSERT_EQ(bf16->rows.size(), 1u);
  EXPECT_EQ(bf16->rows[0].world_size, 2);
  const auto fp32 =
      std::find_if(r.weak.begin(), r.weak.end(), [](const WeakTable& w) { return w.key.precision == "fp32"; });
  ASSERT_NE(fp32, r.weak.end());
  ASSERT_EQ(fp32->rows.size(), 2u);
  EXPECT_NEAR(fp32->rows[1].p50_s, 0.60, 1e-12);
  ASSERT_TRUE(fp32->no_ddp_p50_s);
  EXPECT_NEAR(*fp32->no_ddp_p50_s, 0.50, 1e-12);  // not the inference row's 0.10
  ASSERT_EQ(r.inference.size(), 1u);
  ASSERT_EQ(r.inference[0].rows.size(), 1u);
  EXPECT_EQ(r.inference[0].rows[0].world_size, 2);
  EXPECT_NEAR(r.inference[0].rows[0].aggregate_ex_s, 160.0, 1e-9);
  EXPECT_NEAR(r.inference[0].rows[0].p95_s, 0.12, 1e-12);
  EXPECT_EQ(r.inference[0].rows[0].peak_memory_bytes, 400 * kMiB);
  const std::string text = render_tables({table_of_kind(measured_tables(r), "inference")}, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("Inference (forward only, no DDP): resnet50"));
}

TEST(ReportStrategy, NoStrategyOrMemoryTableWithoutTwoLinesAtOneWorldSize) {
  const Report r = build_report(load({"weak_cpu.json"}), {});
  EXPECT_TRUE(r.strategy.empty());
  EXPECT_TRUE(r.memory.empty());
  EXPECT_TRUE(r.inference.empty());
}

TEST(ReportStrategy, MemoryBarsPerStrategyAtTheLargestWorldSize) {
  if (!testutil::have("gnuplot")) GTEST_SKIP() << "gnuplot not installed (apt-get install gnuplot-nox)";
  testutil::TempDir d;
  const Report r = build_report(load({"strategies_cpu.json"}), {});
  const auto plots = write_plots(r, (d.path / "plots").string());
  const std::string stem = "memory-resnet50-cpu-fixture-cpu-i64-b8-2r";
  const auto it = std::find_if(plots.begin(), plots.end(), [&](const Plot& p) { return p.name == stem; });
  ASSERT_NE(it, plots.end());
  EXPECT_EQ(testutil::slurp(d.path / "plots" / (stem + ".dat")),
            "# line peak_rss_MiB model_state_MiB (2 ranks)\n\"ddp fp32\" 1200 300\n\"ddp bf16\" 1080 300\n"
            "\"ddp fp32 ckpt\" 960 300\n\"zero2 fp32\" 1000 200\n\"fsdp fp32\" 900 100\n");
  EXPECT_GT(std::filesystem::file_size(it->png), 1000u);
}

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

// The H100 bf16 and fp16 channels_last files, each given twice: still one launch each, so the
// setup rule keeps the H100's measured launch-to-launch spread (19.5%) as its noise floor and
// the +13.0% of fp16 stays within it.
TEST(ReportRules, RepeatedFilesDoNotLowerTheNoiseFloor) {
  const auto files = load_docs({"h100_resnet50_bf16_cl_b256.json", "h100_resnet50_bf16_cl_b256.json",
                                "h100_resnet50_fp16_cl_b256.json", "h100_resnet50_fp16_cl_b256.json"});
  const Report r = build_report(files, {});
  std::vector<std::string> setup;
  for (const auto& x : r.summary.recommendations)
    if (x.topic == "setup") setup.push_back(x.text + " [" + x.from + "]");
  EXPECT_EQ(setup, std::vector<std::string>{
                       "resnet50, channels_last, batch 256 per GPU, 224 px, NVIDIA H100 80GB HBM3 on 1 rank: the 2 "
                       "setups measured are within 19.5% of each other (ddp, fp16 fastest at 4124.5 ex/s); choose by "
                       "memory. [strategy comparison, F3 vs F1]"});
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
  EXPECT_EQ(r.cost[0].not_priced, std::vector<std::string>{"2 ranks on 1 GPU (F1)"});
  const std::string text = render_report(r, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("\n2         1      1        2000.0          2000.0         n/a                   "
                              "37.5%      0.0320      passed    F1\n"));
  EXPECT_THAT(text, HasSubstr("2 ranks ran on 1 GPU (the same GPU UUID or bus id): this row measures sharing, not "
                              "scaling"));
  EXPECT_THAT(text, HasSubstr("2 ranks on 1 GPU (F1): not priced"));
  // Its table's largest scaling row is one GPU: no scaling target, and the headline says why.
  EXPECT_TRUE(std::none_of(r.summary.checks.begin(), r.summary.checks.end(),
                           [](const SummaryCheck& c) { return c.metric == "weak-scaling efficiency"; }));
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
