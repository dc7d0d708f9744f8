// core/result/row_memory: /proc/self/status parsing and the row's "memory" object, by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "core/result/row_memory.hpp"

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
  const RowMemory m = row_memory(ranks, s, kMemorySourceRss);
  const nlohmann::json j = m;
  ASSERT_EQ(j["per_rank"].size(), 3u);
  EXPECT_EQ(j["per_rank"][1]["rank"], 1);
  EXPECT_EQ(j["per_rank"][1]["peak_rss_bytes"], 300.0);
  // Schema 1.12: a rank's peak without a value is left out (the row's max keeps its nulls).
  EXPECT_FALSE(j["per_rank"][2].contains("peak_rss_bytes"));
  EXPECT_FALSE(j["per_rank"][0].contains("peak_allocated_bytes"));
  EXPECT_EQ(j["max_over_ranks"]["peak_rss_bytes"], 300.0);
  EXPECT_TRUE(j["max_over_ranks"]["peak_reserved_bytes"].is_null());
  EXPECT_EQ(j["model_state_bytes"]["total"], 27);
  EXPECT_EQ(j["source"], kMemorySourceRss);
  EXPECT_EQ(m.peak_bytes(), 300.0);
  EXPECT_TRUE(nlohmann::json(row_memory(ranks, std::nullopt, kMemorySourceRss))["model_state_bytes"].is_null());
  EXPECT_EQ(j.get<RowMemory>(), m);  // reads back as written
  EXPECT_EQ(nlohmann::json(j.get<RowMemory>()), j);
}

// A hand-written memory object with every field set reads into the fields, keeps a key it
// does not know, and is written back unchanged.
TEST(MemoryJson, HandWrittenObjectRoundTrips) {
  const auto doc = nlohmann::json::parse(R"({
    "per_rank": [{"rank": 0, "peak_allocated_bytes": 4096, "peak_reserved_bytes": 8192, "peak_rss_bytes": 1024},
                 {"rank": 1, "peak_rss_bytes": 2048}],
    "max_over_ranks": {"peak_allocated_bytes": 4096, "peak_reserved_bytes": 8192, "peak_rss_bytes": 2048},
    "model_state_bytes": {"parameters": 12, "gradients": 8, "optimizer": 4, "total": 24},
    "source": "cuda caching allocator", "from_a_newer_version": true})");
  const RowMemory m = doc.get<RowMemory>();
  ASSERT_EQ(m.per_rank.size(), 2u);
  EXPECT_EQ(m.per_rank[0].peak_reserved_bytes, 8192.0);
  EXPECT_EQ(m.per_rank[1].rank, 1);
  EXPECT_FALSE(m.per_rank[1].peak_allocated_bytes.has_value());
  EXPECT_EQ(m.max_over_ranks.peak_rss_bytes, 2048.0);
  ASSERT_TRUE(m.model_state_bytes.has_value());
  EXPECT_EQ(m.model_state_bytes->total(), 24);
  EXPECT_EQ(m.source, "cuda caching allocator");
  EXPECT_EQ(m.extra, nlohmann::json::parse(R"({"from_a_newer_version": true})"));
  EXPECT_EQ(m.peak_bytes(), 4096.0);
  EXPECT_EQ(nlohmann::json(m), doc);
  // Before 1.12 a rank's missing peak was null: it reads as no value.
  const auto old = nlohmann::json::parse(R"({"per_rank": [{"rank": 1, "peak_allocated_bytes": null,
    "peak_reserved_bytes": null, "peak_rss_bytes": 2048}]})");
  const RowMemory o = old.get<RowMemory>();
  ASSERT_EQ(o.per_rank.size(), 1u);
  EXPECT_FALSE(o.per_rank[0].peak_allocated_bytes.has_value());
  EXPECT_FALSE(o.per_rank[0].peak_reserved_bytes.has_value());
  EXPECT_EQ(o.per_rank[0].peak_rss_bytes, 2048.0);
}

TEST(MemoryJson, GpuRowsComparePeakAllocated) {
  const RowMemory m = row_memory({{0, 5e9, 6e9, 2e9}, {1, 7e9, 8e9, 1e9}}, std::nullopt, kMemorySourceCuda);
  const nlohmann::json j = m;
  EXPECT_EQ(j["max_over_ranks"]["peak_allocated_bytes"], 7e9);
  EXPECT_EQ(j["max_over_ranks"]["peak_reserved_bytes"], 8e9);
  EXPECT_EQ(m.peak_bytes(), 7e9);
  EXPECT_FALSE(RowMemory{}.peak_bytes());
  EXPECT_EQ(nlohmann::json(RowMemory{}), nlohmann::json::object());
}

}  // namespace
}  // namespace ddpbench
