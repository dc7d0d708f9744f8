// The catalogue of per-row metrics (core/result/row_metrics): each getter against values written
// by hand into a row, and the outputs that follow from the catalogue (run's line, report's
// columns and notes, check's metric names, diff's rows).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "common/testutil.hpp"
#include "core/analysis/check.hpp"
#include "core/analysis/diff.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/row_metrics.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";

// A DDP row with every section a metric reads, by hand.
BenchResult hand_row() {
  BenchResult r;
  r.model = "resnet18";
  r.batch_per_rank = 32;
  r.world_size = 4;
  r.summary.p50_s = 0.25;
  r.summary.p95_s = 0.30;
  r.summary.ex_per_s_per_gpu = 128;  // 32 / 0.25
  r.summary.ex_per_s_total = 512;
  r.breakdown.mean_over_ranks.emplace();
  (*r.breakdown.mean_over_ranks)[Phase::exposed_comm] = 0.05;
  (*r.breakdown.mean_over_ranks)[Phase::step] = 0.25;
  r.telemetry.peak_memory_bytes_max_over_ranks = 3758096384LL;  // 3.5 GiB
  r.summary.mean_s = 0.26;
  r.communication.steps_per_epoch = 10010;  // ceil(1,281,167 / (32 x 4))
  r.metrics["preemptions_per_step"] = 2.5;
  r.metrics["cpu_cores"] = 0.6;
  r.compute.seq_len = 1024;  // as if a language model: 128 sequences/s of 1,024 tokens
  r.compute.tokens_per_s_per_gpu = 128.0 * 1024;
  r.compute.tokens_per_s = 512.0 * 1024;
  return r;
}

double value(const char* key, const BenchResult& r) {
  const RowMetric* m = find_row_metric(key);
  if (!m) throw std::logic_error(std::string("no metric ") + key);
  const auto v = m->of(r);
  if (!v) throw std::logic_error(std::string("no value of ") + key);
  return *v;
}

TEST(RowMetrics, KeysAreUniqueAndEveryEntryIsComplete) {
  std::set<std::string> keys;
  for (const auto& m : row_metrics()) {
    EXPECT_TRUE(keys.insert(m.key).second) << m.key;
    EXPECT_STRNE(m.header, "");
    EXPECT_STRNE(m.unit, "");
    EXPECT_STRNE(m.definition, "");
    EXPECT_TRUE(m.format && m.of) << m.key;
  }
  EXPECT_EQ(find_row_metric("no_such_metric"), nullptr);
}

TEST(RowMetrics, GettersReadTheHandWrittenRow) {
  const BenchResult r = hand_row();
  EXPECT_DOUBLE_EQ(value("p50_s", r), 0.25);
  EXPECT_DOUBLE_EQ(value("p95_s", r), 0.30);
  EXPECT_DOUBLE_EQ(value("ex_per_s_per_gpu", r), 128);
  EXPECT_DOUBLE_EQ(value("ex_per_s_total", r), 512);
  EXPECT_DOUBLE_EQ(value("exposed_comm", r), 0.2);  // 0.05 / 0.25
  EXPECT_DOUBLE_EQ(value("peak_memory_bytes", r), 3758096384.0);
  EXPECT_DOUBLE_EQ(value("epoch_time_s", r), 10010 * 0.26);  // 2602.6 s: steps x the mean step
  EXPECT_DOUBLE_EQ(value("preemptions_per_step", r), 2.5);
  EXPECT_DOUBLE_EQ(value("cpu_cores", r), 0.6);
  EXPECT_DOUBLE_EQ(value("tokens_per_s_per_gpu", r), 131072);
  EXPECT_DOUBLE_EQ(value("tokens_per_s", r), 524288);
  EXPECT_EQ(find_row_metric("epoch_time_s")->format(Value(2602.6)), "43.4 min");
  EXPECT_EQ(find_row_metric("epoch_time_s")->format(Value(10010 * 2.0)), "5.56 h");
  EXPECT_EQ(find_row_metric("epoch_time_s")->format(Value(45.25)), "45.2 s");
  const auto all = row_metric_values(r);
  ASSERT_EQ(all.size(), row_metrics().size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_TRUE(all[i].has_value()) << row_metrics()[i].key;
}

TEST(RowMetrics, SectionsOfAnyShapeGiveNoValueAndNeverThrow) {
  BenchResult r = hand_row();
  r.breakdown = nlohmann::json::array({1, 2}).get<RowBreakdown>();
  r.telemetry = nlohmann::json("not an object").get<RowTelemetry>();
  EXPECT_FALSE(find_row_metric("exposed_comm")->of(r));
  EXPECT_FALSE(find_row_metric("peak_memory_bytes")->of(r));
  r.breakdown = hand_row().breakdown;
  (*r.breakdown.mean_over_ranks)[Phase::step] = 0;   // no step time: no fraction
  r.telemetry.peak_memory_bytes_max_over_ranks = 0;  // 0: not measured
  EXPECT_FALSE(find_row_metric("exposed_comm")->of(r));
  EXPECT_FALSE(find_row_metric("peak_memory_bytes")->of(r));
}

TEST(RowMetrics, RunLineShowsTheMetricsWithARunLabel) {
  BenchResult r = hand_row();
  r.summary.iterations = 50;
  r.summary.mean_s = 0.25;
  r.summary.ci95_s = 0.002;
  EXPECT_EQ(table_row_extras(r), "  n  50  ci ±0.8%  tokens/s per rank 131072  peak 3.50 GiB  epoch 41.7 min  preempt 2.5");  // 10010 x 0.25 s
  r.telemetry.peak_memory_bytes_max_over_ranks = 503316480LL;  // 480 MiB: the bytes format's MiB
  r.communication = RowCommunication{};                        // no epoch without steps per epoch
  EXPECT_EQ(table_row_extras(r), "  n  50  ci ±0.8%  tokens/s per rank 131072  peak 480.0 MiB  preempt 2.5");
}

TEST(RowMetrics, CheckNamesEveryCheckableMetricAndReadsItFromTheRow) {
  std::vector<std::string> expected = row_metric_keys(kCheckable);
  expected.push_back("weak_scaling_efficiency");
  expected.push_back("ddp_overhead");
  EXPECT_EQ(check_metrics(), expected);
  // gpu_h100.json's 1-GPU DDP row peaked at 3,308,238,848 bytes.
  const auto refs = parse_reference(R"({"ddpbench_reference": "2.0", "references": [
      {"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1,
       "setup": {"precision": "fp32"}, "metric": "peak_memory_bytes", "value": 3.2e9, "upper": 0.05},
      {"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1,
       "setup": {"precision": "fp32"}, "metric": "peak_memory_bytes", "value": 3.2e9, "upper": 0.02},
      {"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1,
       "setup": {"precision": "fp32"}, "metric": "exposed_comm", "value": 0.1, "upper": 0.5}]})",
                                    "r.json");
  int skipped = 0;
  const auto rows = check_against(read_result_file(kFix + "gpu_h100.json"), refs, skipped);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(*rows[0].measured, 3308238848.0);
  EXPECT_EQ(rows[0].status, "PASS");     // <= 3.2e9 * 1.05 = 3.36e9
  EXPECT_EQ(rows[1].status, "FAIL");     // >  3.2e9 * 1.02 = 3.264e9
  EXPECT_EQ(rows[2].status, "MISSING");  // the fixture row has no breakdown
  EXPECT_THAT(render_check_text(rows, "NVIDIA H100 80GB HBM3", skipped), HasSubstr("exposed_comm needs"));
}

TEST(RowMetrics, DiffShowsBaseAndTestOfEachDiffMetric) {
  ResultFile base, test;
  BenchResult b = hand_row(), t = hand_row();
  b.iteration_means_s = t.iteration_means_s = {0.25, 0.25, 0.25, 0.25, 0.25};
  t.telemetry.peak_memory_bytes_max_over_ranks = 4294967296LL;  // 4 GiB
  t.breakdown = RowBreakdown{};                                 // test without a breakdown
  base.results = {b};
  test.results = {t};
  const DiffReport d = diff_results(base, test);
  ASSERT_EQ(d.rows.size(), 1u);
  const auto& ms = d.rows[0].metrics;
  ASSERT_EQ(ms.size(), row_metric_keys(kInDiff).size());
  for (const auto& m : ms) {
    if (m.key == "peak_memory_bytes") {
      EXPECT_EQ(*m.base, 3758096384.0);
      EXPECT_EQ(*m.test, 4294967296.0);
    } else if (m.key == "exposed_comm") {
      EXPECT_DOUBLE_EQ(*m.base, 0.2);
      EXPECT_FALSE(m.test.has_value());
    }
  }
  const auto j = diff_json(d);
  EXPECT_EQ(j["rows"][0]["metrics"]["peak_memory_bytes"]["test"], 4294967296.0);
  EXPECT_TRUE(j["rows"][0]["metrics"]["exposed_comm"]["test"].is_null());
  const std::string text = render_diff_text(d);
  EXPECT_THAT(text, HasSubstr("peak mem"));
  EXPECT_THAT(text, HasSubstr("3.50 GiB -> 4.00 GiB"));
  EXPECT_THAT(text, HasSubstr("20.0% -> n/a"));  // the test side has no breakdown
}

// The cells of a Markdown table row, trimmed: "| a | b |" -> {"a", "b"}.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  size_t at = line.find('|');
  while (at != std::string::npos) {
    const size_t next = line.find('|', at + 1);
    if (next == std::string::npos) break;
    std::string c = line.substr(at + 1, next - at - 1);
    c.erase(0, c.find_first_not_of(' '));
    c.erase(c.find_last_not_of(' ') + 1);
    out.push_back(c);
    at = next;
  }
  return out;
}

// The guide's table lists every metric of the catalogue, with the uses the catalogue gives it.
TEST(RowMetrics, TheGuideListsEveryMetricWithItsUses) {
  const std::string guide = testutil::slurp(DDPBENCH_SOURCE_DIR "/docs/guide/report-diff-check.md");
  for (const auto& m : row_metrics()) {
    const size_t at = guide.find(std::string("| `") + m.key + "` |");
    ASSERT_NE(at, std::string::npos) << "docs/guide/report-diff-check.md has no row for " << m.key;
    const auto mark = [&](MetricUse u) { return std::string(m.used_in(u) ? "✓" : ""); };
    const std::vector<std::string> expected = {std::string("`") + m.key + "`",
                                               m.header,
                                               m.unit,
                                               m.run_label ? std::string("`") + m.run_label + "`" : "",
                                               mark(kInReportTables),
                                               mark(kCheckable),
                                               mark(kInDiff)};
    EXPECT_EQ(cells(guide.substr(at, guide.find('\n', at) - at)), expected) << m.key;
  }
}

}  // namespace
}  // namespace ddpbench
