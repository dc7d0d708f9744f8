// The terminal table keeps benchmark.py's layout byte for byte.
#include <gtest/gtest.h>

#include "core/result/bench_table.hpp"

namespace ddpbench {
namespace {

TEST(BenchTable, HeaderLayout) {
  const std::string h = table_header();
  EXPECT_EQ(h.size(), 22u + 4u * 24u);
  EXPECT_EQ(h.substr(0, 22), std::string(22, ' '));
  EXPECT_EQ(h.substr(22, 24), "      sec/iter    ex/sec");
}

TEST(BenchTable, RowMatchesBenchmarkPyFormat) {
  BenchResult row;
  row.label = group_label(1, 2, 'G');
  row.world_size = 2;
  row.batch_per_rank = 32;
  row.summary.p50_s = 0.097;
  row.summary.p75_s = 0.1;
  row.summary.p90_s = 0.125;
  row.summary.p95_s = 2.0;
  // benchmark.py: "%8s:" % f"{len(ranks):4} GPUs -- {prefix}" + "  p%02d:  %1.3fs  %6d/s" per percentile
  EXPECT_EQ(table_row(row, "GPUs"),
            "   2 GPUs --    1M/2G:  p50:  0.097s     329/s  p75:  0.100s     320/s  p90:  0.125s     256/s"
            "  p95:  2.000s      16/s");
}

TEST(BenchTable, NoDdpLabelAndCpuUnits) {
  BenchResult row;
  row.label = "no ddp";
  row.world_size = 1;
  row.batch_per_rank = 8;
  row.summary.p50_s = row.summary.p75_s = row.summary.p90_s = row.summary.p95_s = 0.5;
  EXPECT_EQ(table_row(row, "CPUs").substr(0, 22), "   1 CPUs --   no ddp:");
}

TEST(BenchTable, ExtrasShowIterationsCiCheckAndMemory) {
  BenchResult row;
  row.summary.iterations = 50;
  row.summary.mean_s = 0.2;
  row.summary.ci95_s = 0.0016;  // 0.8% of the mean
  row.checks.grad_check_passed = true;
  row.telemetry.peak_memory_bytes_max_over_ranks = 3LL * 1024 * 1024 * 1024 + 512LL * 1024 * 1024;  // 3.5 GiB
  EXPECT_EQ(table_row_extras(row), "  n  50  ci ±0.8%  check ok  peak 3.50 GiB");
  row.checks.grad_check_passed = false;
  row.stopping = {"auto", "max_time", 1.0, 2.5};
  EXPECT_EQ(table_row_extras(row),
            "  n  50  ci ±0.8% (stopped at max_time, not at the 1% target)  check FAILED  peak 3.50 GiB");
  row.warnings.push_back({"noisy", "cv 7%"});
  ASSERT_EQ(table_row_warnings(row).size(), 1u);
  EXPECT_EQ(table_row_warnings(row)[0], "      ! noisy: cv 7%");
}

TEST(BenchTable, GroupLabelCountsMachines) {
  EXPECT_EQ(group_label(2, 16, 'G'), "2M/16G");
  EXPECT_EQ(group_label(1, 3, 'C'), "1M/3C");
}

TEST(BenchTable, Thousands) {
  EXPECT_EQ(with_thousands(11689512), "11,689,512");
  EXPECT_EQ(with_thousands(999), "999");
  EXPECT_EQ(with_thousands(1000), "1,000");
  EXPECT_EQ(with_thousands(0), "0");
  EXPECT_EQ(with_thousands(-1234567), "-1,234,567");
}

}  // namespace
}  // namespace ddpbench
