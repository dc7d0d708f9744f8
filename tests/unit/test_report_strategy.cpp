// `ddpbench report`'s strategy, memory and inference tables (schema 1.7), by hand.
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
}  // namespace
}  // namespace ddpbench
