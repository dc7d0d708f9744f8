// `ddpbench report` on collectives and cluster-validation files: nccl-tests' tables, telemetry,
// stragglers, burn-in, pair bandwidth, find-max-bs, the device type.
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

// ------------------------------------------------------------------ cluster validation (schema 1.6)
// tests/fixtures/make_fixtures_16.py holds the hand numbers.

const Table* find_table(const std::vector<Table>& ts, const std::string& kind, size_t nth = 0) {
  for (const auto& t : ts)
    if (t.kind == kind && nth-- == 0) return &t;
  return nullptr;
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
      "Straggler (resnet18, batch 16 per rank, 2 ranks, F1): rank 1 (host node0, local rank 1, CPU) has score 0.52 < 0.95");
  EXPECT_EQ(r.findings[1],
            "No straggler (resnet50, batch 64 per rank, 4 ranks, F2): every score >= 0.95 (lowest: rank 2, "
            "0.97)");
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
}  // namespace
}  // namespace ddpbench
