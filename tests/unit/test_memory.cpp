// core/memory: /proc/self/status parsing and the row's "memory" object, by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "core/memory.hpp"

namespace ddpbench {
namespace {

TEST(ProcStatus, ReadsKibibyteLinesAsBytes) {
  const std::string text =
      "Name:\tddpbench\nVmPeak:\t 2000000 kB\nVmHWM:\t  123456 kB\nVmRSS:\t   65536 kB\nThreads:\t4\n";
  EXPECT_EQ(proc_status_bytes(text, "VmHWM:"), 123456.0 * 1024);
  EXPECT_EQ(proc_status_bytes(text, "VmRSS:"), 64.0 * 1024 * 1024);
  EXPECT_FALSE(proc_status_bytes(text, "VmSwap:"));
  EXPECT_FALSE(proc_status_bytes("VmHWM:\tlots kB\n", "VmHWM:"));
  EXPECT_FALSE(proc_status_bytes("VmHWM:\t12 MB\n", "VmHWM:"));  // not proc(5)'s unit
  EXPECT_FALSE(read_proc_status_bytes("/nonexistent/status", "VmHWM:"));
}

TEST(ProcStatus, ThisProcessHasAPeakAtLeastItsResidentSet) {
  std::ifstream in("/proc/self/status");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto hwm = proc_status_bytes(text, "VmHWM:");  // one snapshot: the peak is at least the current set
  const auto rss = proc_status_bytes(text, "VmRSS:");
  if (!hwm || !rss) GTEST_SKIP() << "no /proc/self/status VmHWM/VmRSS here";
  EXPECT_GE(*hwm, *rss);
  EXPECT_GT(*rss, 0);
}

TEST(MemoryJson, PerRankAndMaxOverRanks) {
  std::vector<RankMemory> ranks{{0, std::nullopt, std::nullopt, 100.0},
                                {1, std::nullopt, std::nullopt, 300.0},
                                {2, std::nullopt, std::nullopt, std::nullopt}};
  ModelStateBytes s;
  s.parameters = 10;
  s.gradients = 10;
  s.optimizer = 7;
  const auto j = memory_json(ranks, s, kMemorySourceRss);
  ASSERT_EQ(j["per_rank"].size(), 3u);
  EXPECT_EQ(j["per_rank"][1]["rank"], 1);
  EXPECT_EQ(j["per_rank"][1]["peak_rss_bytes"], 300.0);
  EXPECT_TRUE(j["per_rank"][2]["peak_rss_bytes"].is_null());
  EXPECT_TRUE(j["per_rank"][0]["peak_allocated_bytes"].is_null());
  EXPECT_EQ(j["max_over_ranks"]["peak_rss_bytes"], 300.0);
  EXPECT_TRUE(j["max_over_ranks"]["peak_reserved_bytes"].is_null());
  EXPECT_EQ(j["model_state_bytes"]["total"], 27);
  EXPECT_EQ(j["source"], kMemorySourceRss);
  EXPECT_EQ(row_peak_memory_bytes(j), 300.0);
  EXPECT_TRUE(memory_json(ranks, std::nullopt, kMemorySourceRss)["model_state_bytes"].is_null());
}

TEST(MemoryJson, GpuRowsComparePeakAllocated) {
  const auto j = memory_json({{0, 5e9, 6e9, 2e9}, {1, 7e9, 8e9, 1e9}}, std::nullopt, kMemorySourceCuda);
  EXPECT_EQ(j["max_over_ranks"]["peak_allocated_bytes"], 7e9);
  EXPECT_EQ(j["max_over_ranks"]["peak_reserved_bytes"], 8e9);
  EXPECT_EQ(row_peak_memory_bytes(j), 7e9);
  EXPECT_FALSE(row_peak_memory_bytes(nlohmann::json::object()));
}

}  // namespace
}  // namespace ddpbench
