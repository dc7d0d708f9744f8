// `ddpbench report`: scaling numbers computed by hand from the fixtures, the typed
// tables and their printers, and golden table, Markdown and CSV output (regenerate with
// DDPBENCH_UPDATE_GOLDEN=1 after a deliberate change: the tests then write the files and
// fail, so review the diff and run them again without it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "common/testutil.hpp"
#include "core/errors.hpp"
#include "core/report.hpp"
#include "core/stats.hpp"

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

TEST(Report, RepeatedConfigurationsUseTheMostPreciseRow) {
  auto files = load({"weak_cpu.json", "weak_cpu.json", "weak_cpu.json"});
  // The 1-GPU row three times: the first file's as it is; a tight one (0.42 s +- 0.1%); and
  // a noisy one with the most samples (0.3 to 0.5 s, as a long --iters auto series).
  auto& tight = files[1].file.results[1];
  tight.ranks[0].samples_s = {0.4196, 0.4204, 0.4196, 0.4204, 0.42};
  tight.summary = summarize({tight.ranks[0].samples_s}, 16, 1);
  auto& noisy = files[2].file.results[1];
  noisy.ranks[0].samples_s.clear();
  for (int i = 0; i < 50; ++i) noisy.ranks[0].samples_s.push_back(i % 2 ? 0.3 : 0.5);
  noisy.summary = summarize({noisy.ranks[0].samples_s}, 16, 1);
  files[1].name = "tight";
  files[2].name = "noisy";
  const double first_rel = files[0].file.results[1].summary.ci95_s / files[0].file.results[1].summary.mean_s;
  ASSERT_GT(first_rel, tight.summary.ci95_s / tight.summary.mean_s);  // the premise: the tight row is tighter
  const Report r = build_report(files, {});
  ASSERT_EQ(r.weak.size(), 1u);
  EXPECT_NEAR(r.weak[0].rows[0].p50_s, 0.42, 1e-9);
  EXPECT_NEAR(r.weak[0].rows[1].per_gpu_ex_s, 16 / 0.22, 1e-9);  // the other rows tie: the first file's
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
  const auto& cpu = j["tables"][0];
  EXPECT_EQ(cpu["device"], "CPU (Fixture CPU)");
  EXPECT_DOUBLE_EQ(cpu["rows"][2]["efficiency"].get<double>(), 0.84);
  EXPECT_DOUBLE_EQ(cpu["rows"][2]["ddp_overhead"].get<double>(), 0.2);
  const auto& cmp = j["tables"][4];
  ASSERT_EQ(cmp["kind"], "comparison");
  EXPECT_EQ(cmp["rows"].size(), 4u);  // 2 configurations x 2 device types, long form
  EXPECT_DOUBLE_EQ(cmp["rows"][1]["ratio"].get<double>(), 2.0);
}

// ------------------------------------------------------------------ typed tables

Table tiny() {
  Table t;
  t.kind = "k";
  t.title = "T";
  t.context = {{"device", std::string("CPU, x")}};
  t.columns = {{"n", "N", "", fmtcol::plain()}, {"frac", "share", "fraction", fmtcol::percent()},
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
            "table,device,n,frac,hidden\nk,\"CPU, x\",3,0.25,1.5\nk,\"CPU, x\",4,,2\n");
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
  const auto text = render_report(build_report(load({"weak_cpu.json", "strong_cpu.json"}), cost_opts()), TableFormat::text);
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
  EXPECT_EQ(*rows[0].facts.peak_memory_bytes, 3308238848.0);
  EXPECT_NEAR(*rows[0].mfu, 6 * 4089184256.0 * 640 / 1e12 / 67, 1e-9);
  ASSERT_EQ(rows[1].facts.warnings.size(), 1u);
  EXPECT_EQ(rows[1].facts.stopping.reason, "max_iters");
  const auto tables = report_tables(r);
  const Table& t = tables[0];
  EXPECT_EQ(t.rows[0][t.col("self_check")], Value(std::string("passed")));
  EXPECT_EQ(t.rows[0][t.col("peak_memory_bytes")], Value(3308238848.0));
  EXPECT_EQ(t.rows[1][t.col("notes")], Value(std::string("noisy, auto: max_iters")));
  const auto text = render_tables({t}, TableFormat::text);
  EXPECT_THAT(text, HasSubstr("3.08 GiB"));
  EXPECT_THAT(text, HasSubstr("MFU = achieved TFLOP/s / FP32 dense peak (no tensor cores), 67 TFLOP/s"));
  EXPECT_THAT(text, HasSubstr("16 GPUs: noisy: cv 7.2%"));
  EXPECT_THAT(text, HasSubstr("16 GPUs: auto stopping ended on max_iters"));
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
