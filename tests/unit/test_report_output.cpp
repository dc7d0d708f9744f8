// `ddpbench report`'s output: the golden table, Markdown and CSV reports (regenerate with
// DDPBENCH_UPDATE_GOLDEN=1 after a deliberate change: the tests then write the files and fail,
// so review the diff and run them again without it), the JSON form, the table printers, and what
// each scaling row shows (units, self-check, memory, warnings).
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

// The table kinds are one list: each once, each in a named section; a kind missing from it is
// an error, never a default section; plots are placed by the prefixes of that list.
TEST(ReportSections, EveryKindIsListedOnceAndAnUnknownKindIsAnError) {
  std::map<std::string, int> seen;
  for (const auto& k : report_table_kinds()) {
    EXPECT_EQ(++seen[k.kind], 1) << k.kind;
    EXPECT_FALSE(k.section.empty()) << k.kind;
  }
  EXPECT_EQ(report_section("weak"), "Throughput scaling");
  EXPECT_EQ(report_section("time_to_loss"), "Time to accuracy");
  EXPECT_EQ(report_section("nodes"), "Appendix: what ran");
  EXPECT_THROW(report_section("no_such_kind"), std::logic_error);
  // Every table the fixtures' report makes is of a listed kind (report_tables would throw).
  for (const auto& t : report_tables(build_report(all_fixtures(), cost_opts()))) EXPECT_EQ(seen.count(t.kind), 1u) << t.kind;

  EXPECT_EQ(report_section_of_plot("strong-resnet18-fp32-cpu-i64-gb32-efficiency"), "Throughput scaling");
  EXPECT_EQ(report_section_of_plot("weak-resnet18-fp32-cpu-i64-b16-breakdown"), "Where the time goes");
  EXPECT_EQ(report_section_of_plot("ttl-resnet18-fashion-mnist-cpu-loss"), "Time to accuracy");
  EXPECT_EQ(report_section_of_plot("stragglers-resnet18-cpu-2r"), "Hardware utilization and stragglers");
  EXPECT_EQ(report_section_of_plot("burnin-resnet18-1m-2c-cpu"), "Hardware utilization and stragglers");
  EXPECT_EQ(report_section_of_plot("something-else"), "");
}

TEST(Report, JsonHasEveryTable) {
  const auto j = nlohmann::json::parse(rendered(TableFormat::json));
  std::map<std::string, int> kinds;
  for (const auto& t : j["tables"]) ++kinds[t["kind"].get<std::string>()];
  EXPECT_EQ(kinds["weak"], 3);
  EXPECT_EQ(kinds["strong"], 1);
  EXPECT_EQ(kinds["cost"], 2);  // one per model: resnet18 (weak and strong), resnet50 (A100 and H100)
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
}  // namespace
}  // namespace ddpbench
