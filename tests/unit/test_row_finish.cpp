// The one place a row is finished (core/result/row_finish) and the per-rank metrics of the
// catalogue (core/result/row_metrics): their reduction over steps and ranks, their JSON, and
// every metric of the catalogue in every output its uses name (run's line, every report
// format, check, diff), each against values written by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include <stdexcept>

#include "common/testutil.hpp"
#include "core/analysis/check.hpp"
#include "core/analysis/diff.hpp"
#include "core/analysis/report_analysis.hpp"
#include "core/render/html.hpp"
#include "core/render/report_tables.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/row_finish.hpp"
#include "core/result/row_metrics.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;

const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";

// A row of `ranks` ranks whose rank r measured the steps `samples[r]`.
BenchResult row_of(bool ddp, const std::vector<std::vector<double>>& samples, double p50) {
  BenchResult row;
  row.model = "resnet18";
  row.batch_per_rank = 16;
  row.ddp = ddp;
  row.world_size = static_cast<int>(samples.size());
  for (size_t r = 0; r < samples.size(); ++r) {
    RankSamples rs;
    rs.rank = static_cast<int>(r);
    rs.samples_s = samples[r];
    row.ranks.push_back(rs);
  }
  row.summary.p50_s = p50;
  return row;
}

TEST(RowFinish, TrimsWarnsAndStampsTheLaunch) {
  std::vector<BenchResult> rows = {row_of(false, {{0.3, 0.3}}, 0.30), row_of(true, {{0.2, 0.3}, {0.4, 0.5}}, 0.25)};
  const nlohmann::json launch{{"job_id", "j1"}, {"started_utc", "2026-11-27T00:00:00Z"}};
  finish_row(rows[1], rows, RowFinish{false, launch});
  const BenchResult& r = rows[1];
  EXPECT_EQ(r.launch, launch);
  ASSERT_EQ(r.warnings.size(), 1u);  // 0.25 s < the no-DDP row's 0.30 s
  EXPECT_EQ(r.warnings[0].code, "negative_ddp_overhead");
  // Rank 1 is the slowest (mean 0.45 s): its samples stay, rank 0's go; both keep a summary.
  ASSERT_TRUE(r.ranks_kept_in_full);
  EXPECT_EQ(*r.ranks_kept_in_full, std::vector<int>{1});
  EXPECT_TRUE(r.ranks[0].samples_s.empty());
  EXPECT_DOUBLE_EQ(r.ranks[0].step->mean_s, 0.25);
  EXPECT_DOUBLE_EQ(r.ranks[1].step->mean_s, 0.45);
  ASSERT_EQ(r.iteration_means_s.size(), 2u);
  EXPECT_DOUBLE_EQ(r.iteration_means_s[0], 0.3);  // (0.2 + 0.4) / 2
  EXPECT_DOUBLE_EQ(r.iteration_means_s[1], 0.4);  // (0.3 + 0.5) / 2
}

TEST(RowFinish, ARowKeptByResumeIsLeftAsWritten) {
  std::vector<BenchResult> rows = {row_of(false, {{0.3, 0.3}}, 0.30), row_of(true, {{0.2, 0.3}}, 0.25)};
  const nlohmann::json kept{{"job_id", "old"}, {"started_utc", "2026-11-26T00:00:00Z"}};
  rows[1].launch = kept;
  finish_row(rows[1], rows, RowFinish{false, nlohmann::json{{"job_id", "new"}}});
  EXPECT_EQ(rows[1].launch, kept);
  EXPECT_TRUE(rows[1].warnings.empty());
  EXPECT_FALSE(rows[1].ranks[0].step.has_value());
  EXPECT_EQ(rows[1].ranks[0].samples_s.size(), 2u);
}

TEST(RowFinish, WithoutALaunchTheRowHasNone) {  // `dataparallel` records none
  std::vector<BenchResult> rows = {row_of(true, {{0.2, 0.3}}, 0.25)};
  finish_row(rows[0], rows, RowFinish{true, nullptr});
  EXPECT_TRUE(rows[0].launch.is_null());
  EXPECT_FALSE(rows[0].ranks_kept_in_full.has_value());  // keep_all: every rank's samples stay
  EXPECT_EQ(rows[0].ranks[0].samples_s.size(), 2u);
}

TEST(PerRankMetrics, ReduceByHand) {
  const std::vector<double> v = {2, 4, 9};
  EXPECT_DOUBLE_EQ(*reduce_over(Reduce::kMean, v), 5);
  EXPECT_DOUBLE_EQ(*reduce_over(Reduce::kMax, v), 9);
  EXPECT_DOUBLE_EQ(*reduce_over(Reduce::kMin, v), 2);
  EXPECT_DOUBLE_EQ(*reduce_over(Reduce::kSum, v), 15);
  EXPECT_FALSE(reduce_over(Reduce::kMax, {}).has_value());
}

TEST(PerRankMetrics, AnUnknownKeyIsAProgrammingError) {
  StepMetrics m;
  EXPECT_THROW(m.add("no_such_metric", 1.0), std::logic_error);
  EXPECT_THROW(m.add("p50_s", 1.0), std::logic_error);  // a metric of the row, not measured per rank
  EXPECT_EQ(m.values().size(), per_rank_metrics().size());
}

TEST(PerRankMetrics, JsonKeepsTheRowsAndTheRanksValuesAndDropsWhatIsNotANumber) {
  BenchResult row = row_of(true, {{0.2}}, 0.2);
  nlohmann::json j = row;
  EXPECT_FALSE(j.contains("metrics"));  // none measured: no key
  EXPECT_FALSE(j["ranks"][0].contains("metrics"));
  row.metrics["x"] = 1.5;
  row.ranks[0].metrics["x"] = 1.5;
  j = row;
  EXPECT_EQ(j["metrics"]["x"], 1.5);
  EXPECT_EQ(j["ranks"][0]["metrics"]["x"], 1.5);
  j["metrics"]["text"] = "3";
  j["metrics"]["none"] = nullptr;
  j["ranks"][0]["metrics"] = "not an object";
  const auto back = j.get<BenchResult>();
  EXPECT_EQ(back.metrics, (std::map<std::string, double>{{"x", 1.5}}));
  EXPECT_TRUE(back.ranks[0].metrics.empty());
}

// weak_cpu.json's rows with a hand-written value of every metric of the catalogue: the row
// metrics by their sections, each per-rank metric on every rank (rank r: 1 + r), then finished.
ResultFile file_with_every_metric() {
  ResultFile f = read_result_file(kFix + "weak_cpu.json");
  for (auto& row : f.results) {
    row.telemetry.peak_memory_bytes_max_over_ranks = 3758096384LL;
    row.communication.steps_per_epoch = 10010;
    row.compute.tokens_per_s_per_gpu = 1024 * row.summary.ex_per_s_per_gpu;  // as if a language model's
    row.compute.tokens_per_s = 1024 * row.summary.ex_per_s_total;
    row.breakdown.mean_over_ranks.emplace();
    (*row.breakdown.mean_over_ranks)[Phase::exposed_comm] = 0.25 * row.summary.p50_s;
    (*row.breakdown.mean_over_ranks)[Phase::step] = row.summary.p50_s;
    for (auto& rs : row.ranks)
      for (const RowMetric* m : per_rank_metrics()) rs.metrics[m->key] = 1.0 + rs.rank;
    reduce_rank_metrics(row);
  }
  return f;
}

TEST(RowMetricCatalogue, EveryMetricAppearsInEveryOutputItsUsesName) {
  const ResultFile f = file_with_every_metric();
  const BenchResult& ddp = f.results.back();  // the 4-rank DDP row
  for (const auto& row : f.results)
    for (const auto& m : row_metrics()) ASSERT_TRUE(m.of(row).has_value()) << m.key << " on " << row.label;
  for (const RowMetric* m : per_rank_metrics()) {  // rank r has 1 + r: the row's value by its reduction
    std::vector<double> v;
    for (const auto& rs : ddp.ranks) v.push_back(1.0 + rs.rank);
    EXPECT_DOUBLE_EQ(*m->of(ddp), *reduce_over(m->per_rank->over_ranks, v)) << m->key;
  }
  const Report report = build_report({{"weak_cpu.json", f}}, {});
  const std::string text = render_report(report, TableFormat::text), md = render_report(report, TableFormat::markdown),
                    csv = render_report(report, TableFormat::csv), json = render_report(report, TableFormat::json),
                    html = render_html(report, {}, "2026-11-27T00:00:00Z");
  nlohmann::json round = nlohmann::json(f);  // the result file itself
  const auto read_back = round.get<ResultFile>();
  int skipped = 0;
  const auto d = diff_json(diff_results(f, f));
  for (const auto& m : row_metrics()) {
    SCOPED_TRACE(m.key);
    EXPECT_EQ(m.of(read_back.results.back()), m.of(ddp));  // the JSON keeps it
    if (m.run_label) EXPECT_THAT(table_row_extras(ddp), HasSubstr(std::string("  ") + m.run_label + " "));
    if (m.used_in(kInReportTables)) {
      EXPECT_THAT(text, HasSubstr(m.header));
      EXPECT_THAT(md, HasSubstr(m.header));
      EXPECT_THAT(csv, HasSubstr(m.key));
      EXPECT_THAT(json, HasSubstr(std::string("\"") + m.key + "\""));
      EXPECT_THAT(html, HasSubstr(m.header));
    }
    if (m.used_in(kCheckable)) {
      const auto refs = parse_reference(
          R"({"ddpbench_reference": "2.0", "references": [{"device": "*", "model": "resnet18", "batch_per_rank": 16,
              "image_size": 64, "world_size": 4, "setup": {"precision": "fp32"}, "metric": ")" +
              std::string(m.key) + R"(", "value": 1e9, "upper": 100}]})",
          "r.json");
      const auto rows = check_against(f, refs, skipped);
      ASSERT_EQ(rows.size(), 1u);
      ASSERT_TRUE(rows[0].measured.has_value());
      EXPECT_DOUBLE_EQ(*rows[0].measured, *m.of(ddp));
    }
    if (m.used_in(kInDiff)) {  // diff's DDP rows come first, by world size: the 4-rank row is the last of them
      const auto rows = d["rows"];
      const auto it = std::find_if(rows.begin(), rows.end(), [](const nlohmann::json& r) {
        return r["ddp"].get<bool>() && r["world_size"].get<int>() == 4;
      });
      ASSERT_NE(it, rows.end());
      EXPECT_DOUBLE_EQ((*it)["metrics"][m.key]["base"].get<double>(), *m.of(ddp));
    }
  }
}

// preemptions_per_step end to end, by hand: rank 0's steps preempted 3, 5 and 10 times, rank
// 1's 0 and 2 times. Each rank's value is its mean (6, 1), the row's the largest (6); the
// result file, report, check and diff carry it.
TEST(PreemptionsPerStep, FromTheStepsToEveryOutput) {
  const char* key = "preemptions_per_step";
  ResultFile f = read_result_file(kFix + "weak_cpu.json");
  BenchResult& row = f.results[2];  // the 2-rank DDP row
  ASSERT_EQ(row.ranks.size(), 2u);
  const std::vector<std::vector<double>> steps = {{3, 5, 10}, {0, 2}};
  for (size_t r = 0; r < 2; ++r) {
    StepMetrics m;  // the capture of run_series
    for (double v : steps[r]) m.add(key, v);
    const auto values = m.values();  // what the rank sends (RankStats::metrics); make_row keys them
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i]) row.ranks[r].metrics[per_rank_metrics()[i]->key] = *values[i];
  }
  std::vector<BenchResult> rows(f.results.begin(), f.results.begin() + 3);
  finish_row(rows[2], rows, RowFinish{true, nullptr});
  f.results[2] = rows[2];
  EXPECT_DOUBLE_EQ(f.results[2].ranks[0].metrics.at(key), 6);  // (3 + 5 + 10) / 3
  EXPECT_DOUBLE_EQ(f.results[2].ranks[1].metrics.at(key), 1);  // (0 + 2) / 2
  EXPECT_DOUBLE_EQ(f.results[2].metrics.at(key), 6);           // max(6, 1)
  EXPECT_THAT(table_row_extras(f.results[2]), HasSubstr("  preempt 6.0"));

  const std::string path = testing::TempDir() + "preemptions.json";
  write_result_file_atomic(path, f);
  const ResultFile back = read_result_file(path);
  const nlohmann::json j = nlohmann::json::parse(testutil::slurp(path));
  EXPECT_EQ(j["results"][2]["metrics"][key], 6.0);
  EXPECT_EQ(j["results"][2]["ranks"][1]["metrics"][key], 1.0);
  EXPECT_FALSE(j["results"][1].contains("metrics"));  // a row that did not measure it
  EXPECT_DOUBLE_EQ(*find_row_metric(key)->of(back.results[2]), 6);

  const Report report = build_report({{"preemptions.json", back}}, {});
  const std::string md = render_report(report, TableFormat::markdown);
  EXPECT_THAT(md, HasSubstr("preemptions/step"));
  EXPECT_THAT(md, HasSubstr(" 6.0 |"));

  int skipped = 0;
  const auto ref = [&](double value, double upper) {
    return parse_reference(fmt::format(R"({{"ddpbench_reference": "2.0", "references": [{{"device": "*",
        "model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 2, "setup": {{"precision":
        "fp32"}}, "metric": "preemptions_per_step", "value": {}, "upper": {}}}]}})",
                                       value, upper),
                           "r.json");
  };
  const auto pass = check_against(back, ref(5.9, 0.05), skipped);  // 6 <= 5.9 x 1.05 = 6.195
  ASSERT_EQ(pass.size(), 1u);
  EXPECT_DOUBLE_EQ(*pass[0].measured, 6);
  EXPECT_EQ(pass[0].status, "PASS");
  EXPECT_EQ(check_against(back, ref(5.0, 0.1), skipped)[0].status, "FAIL");  // 6 > 5.0 x 1.1 = 5.5

  ResultFile test = back;
  test.results[2].metrics[key] = 9;
  const auto d = diff_json(diff_results(back, test));
  bool seen = false;
  for (const auto& r : d["rows"])
    if (r["metrics"][key]["base"].is_number()) {
      EXPECT_EQ(r["metrics"][key]["base"], 6.0);
      EXPECT_EQ(r["metrics"][key]["test"], 9.0);
      seen = true;
    }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace ddpbench
