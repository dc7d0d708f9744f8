// `ddpbench report`: scaling numbers computed by hand from the fixtures, and golden
// table, Markdown and CSV output (regenerate with DDPBENCH_UPDATE_GOLDEN=1 after a
// deliberate change, and review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "common/testutil.hpp"
#include "core/errors.hpp"
#include "core/report.hpp"
#include "core/stats.hpp"

namespace ddpbench {
namespace {

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
  EXPECT_EQ(t.gpu, "CPU (Fixture CPU)");
  EXPECT_EQ(t.batch_per_rank, 16);
  ASSERT_EQ(t.rows.size(), 3u);
  // p50 0.21 / 0.22 / 0.25 s at 16 examples per rank; no-DDP p50 0.20 s.
  EXPECT_NEAR(t.rows[0].per_gpu_ex_s, 16 / 0.21, 1e-9);
  EXPECT_NEAR(t.rows[2].aggregate_ex_s, 4 * 16 / 0.25, 1e-9);
  EXPECT_NEAR(t.rows[1].efficiency, (16 / 0.22) / (16 / 0.21), 1e-12);
  EXPECT_NEAR(t.rows[2].efficiency, 0.84, 1e-12);
  EXPECT_NEAR(*t.rows[0].exposed_comm, (0.21 - 0.20) / 0.21, 1e-12);
  EXPECT_NEAR(*t.rows[2].exposed_comm, 0.2, 1e-12);
  EXPECT_EQ(t.baseline, "1-GPU DDP");
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
  EXPECT_NEAR(*t.rows[1].exposed_comm, (0.45 - 0.40) / 0.45, 1e-12);
  EXPECT_TRUE(r.weak.empty());
}

TEST(Report, CostByHand) {
  const Report r = build_report(load({"weak_cpu.json"}), cost_opts());
  ASSERT_EQ(r.cost.size(), 1u);
  const auto& c = r.cost[0];
  const double agg1 = 16 / 0.21, agg4 = 4 * 16 / 0.25;
  EXPECT_NEAR(c.rows[0].usd_per_million, 2.0 * 1 / 3600 * 1e6 / agg1, 1e-9);
  EXPECT_NEAR(c.rows[2].usd_per_million, 2.0 * 4 / 3600 * 1e6 / agg4, 1e-9);
  EXPECT_NEAR(c.rows[2].hours, 2 * 100000 / agg4 / 3600, 1e-12);
  EXPECT_NEAR(c.rows[2].usd, 2 * 100000 / agg4 / 3600 * 4 * 2.0, 1e-9);
  EXPECT_EQ(c.best_world_size, 1);  // efficiency below 1: more GPUs cost more per sample
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
}

TEST(Report, RepeatedConfigurationsUseTheRowWithMoreSamples) {
  auto files = load({"weak_cpu.json", "weak_cpu.json"});
  auto& dup = files[1].file.results[1];  // the 1-GPU row of the second copy: more samples, slower
  dup.ranks[0].samples_s.assign(9, 0.42);
  dup.summary = summarize({dup.ranks[0].samples_s}, 16, 1);
  files[1].name = "second";
  const Report r = build_report(files, {});
  ASSERT_EQ(r.weak.size(), 1u);
  EXPECT_NEAR(r.weak[0].rows[0].per_gpu_ex_s, 16 / 0.42, 1e-9);
  EXPECT_NEAR(r.weak[0].rows[1].per_gpu_ex_s, 16 / 0.22, 1e-9);  // the other rows tie: the first file's
}

TEST(Report, DifferentSetupsAreDifferentConfigurations) {
  auto files = load({"weak_cpu.json", "weak_cpu.json"});
  files[1].name = "channels-last";
  files[1].file.config["channels_last"] = true;
  const Report r = build_report(files, {});
  ASSERT_EQ(r.weak.size(), 2u);
  EXPECT_EQ(r.weak[0].precision, "fp32");
  EXPECT_EQ(r.weak[1].precision, "fp32, channels_last");
  EXPECT_EQ(r.weak[1].base_precision, "fp32");
}

TEST(Report, Tf32MathSeparatesGpuRunsOnly) {
  auto gpu = load({"gpu_h100.json", "gpu_h100.json"});
  gpu[0].file.environment["math"] = {{"cudnn_allow_tf32", true}};  // fp32 with TF32 convolutions
  gpu[1].name = "true-fp32";
  gpu[1].file.environment["math"] = {{"cudnn_allow_tf32", false}, {"cublas_allow_tf32", false}};
  const Report g = build_report(gpu, {});
  ASSERT_EQ(g.weak.size(), 2u);
  EXPECT_EQ(g.weak[0].precision, "fp32");  // tables are ordered by setup label
  EXPECT_EQ(g.weak[1].precision, "fp32 (TF32 allowed)");

  // On a CPU the cuDNN/cuBLAS flags change nothing: one configuration, no TF32 label.
  auto cpu = load({"weak_cpu.json", "weak_cpu.json"});
  cpu[0].file.environment["math"] = {{"cudnn_allow_tf32", true}};
  cpu[1].name = "second";
  const Report c = build_report(cpu, {});
  ASSERT_EQ(c.weak.size(), 1u);
  EXPECT_EQ(c.weak[0].precision, "fp32");
}

TEST(Report, ComparesDeviceTypes) {
  const Report r = build_report(all_fixtures(), {});
  EXPECT_EQ(r.comparison.by, "device type");
  EXPECT_EQ(r.comparison.groups,
            (std::vector<std::string>{"NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"}));  // CPU has no common row
  ASSERT_EQ(r.comparison.rows.size(), 2u);
  EXPECT_NEAR(*r.comparison.rows[0].per_gpu_ex_s[0], 320, 1e-9);
  EXPECT_NEAR(*r.comparison.rows[0].ratio[1], 2.0, 1e-12);
  EXPECT_EQ(r.comparison.rows[1].world_size, 16);
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

void golden(const std::string& name, const std::string& actual) {
  const std::string path = kDir + "golden/" + name;
  if (std::getenv("DDPBENCH_UPDATE_GOLDEN")) std::ofstream(path) << actual;
  EXPECT_EQ(actual, testutil::slurp(path)) << "golden file " << path << " differs";
}

TEST(ReportGolden, Table) { golden("report.txt", render_text(build_report(all_fixtures(), cost_opts()))); }
TEST(ReportGolden, Markdown) { golden("report.md", render_markdown(build_report(all_fixtures(), cost_opts()))); }
TEST(ReportGolden, Csv) { golden("report.csv", render_csv(build_report(all_fixtures(), cost_opts()))); }

TEST(Report, JsonHasEveryTable) {
  const auto j = report_json(build_report(all_fixtures(), cost_opts()));
  EXPECT_EQ(j["weak"].size(), 3u);
  EXPECT_EQ(j["strong"].size(), 1u);
  EXPECT_EQ(j["cost"].size(), 4u);
  EXPECT_EQ(j["comparison"]["rows"].size(), 2u);
  EXPECT_EQ(j["files"].size(), 4u);
  EXPECT_DOUBLE_EQ(j["weak"][0]["rows"][2]["efficiency"].get<double>(), 0.84);
}

TEST(Report, DeviceType) {
  ResultFile f;
  EXPECT_EQ(device_type(f), "CPU");
  f.environment = {{"gpus", {{{"name", "A"}}, {{"name", "A"}}}}};
  EXPECT_EQ(device_type(f), "A");
  f.environment = {{"gpus", {{{"name", "A"}}, {{"name", "B"}}}}};
  EXPECT_EQ(device_type(f), "mixed: A + B");
}

}  // namespace
}  // namespace ddpbench
