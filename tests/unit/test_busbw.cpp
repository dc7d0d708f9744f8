// core/analysis/busbw: nccl-tests' bus bandwidth factors, size and count columns, the size sweep and
// the --min-busbw verdict, on cases computed by hand from nccl-tests' doc/PERFORMANCE.md and
// its <collective>GetCollByteCount / GetBw functions.
#include <gtest/gtest.h>

#include "core/analysis/busbw.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

TEST(Busbw, FactorsByHand) {
  // allreduce 2(n-1)/n: n=2 -> 1, n=4 -> 1.5, n=8 -> 1.75, n=1 -> 0.
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllreduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllreduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllreduce, 3), 4.0 / 3.0);
  // (n-1)/n: n=2 -> 0.5, n=4 -> 0.75, n=3 -> 2/3.
  for (Collective c : {Collective::kReduceScatter, Collective::kAllGather, Collective::kAllToAll}) {
    EXPECT_DOUBLE_EQ(busbw_factor(c, 2), 0.5) << collective_name(c);
    EXPECT_DOUBLE_EQ(busbw_factor(c, 4), 0.75) << collective_name(c);
    EXPECT_DOUBLE_EQ(busbw_factor(c, 3), 2.0 / 3.0) << collective_name(c);
  }
  for (Collective c : {Collective::kBroadcast, Collective::kReduce}) {
    EXPECT_DOUBLE_EQ(busbw_factor(c, 2), 1.0);
    EXPECT_DOUBLE_EQ(busbw_factor(c, 16), 1.0);
  }
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBarrier, 4), 0.0);
  EXPECT_THROW(busbw_factor(Collective::kAllreduce, 0), std::invalid_argument);
}

TEST(Busbw, SizeAndCountColumnsFollowNcclTests) {
  // allreduce of 1 MiB float32: size 1048576 B, count 262144.
  CommSize s = comm_size(Collective::kAllreduce, 1 << 20, 4, 3);
  EXPECT_EQ(s.bytes, 1 << 20);
  EXPECT_EQ(s.count, 262144);
  EXPECT_EQ(s.buffer_elements, 262144);
  // all_gather, 1000 B of float32 on 3 ranks: count = 250 elements, chunk 250/3 = 83,
  // recv buffer 83*3 = 249 elements = 996 B (nccl-tests prints 996 and 83).
  s = comm_size(Collective::kAllGather, 1000, 4, 3);
  EXPECT_EQ(s.count, 83);
  EXPECT_EQ(s.buffer_elements, 249);
  EXPECT_EQ(s.bytes, 996);
  // reduce_scatter and all_to_all: the same arithmetic on the send side.
  EXPECT_EQ(comm_size(Collective::kReduceScatter, 1000, 4, 3).bytes, 996);
  EXPECT_EQ(comm_size(Collective::kAllToAll, 1000, 4, 3).count, 83);
  // float16, 2 ranks, 1 KiB: 512 elements, chunk 256.
  s = comm_size(Collective::kAllToAll, 1024, 2, 2);
  EXPECT_EQ(s.count, 256);
  EXPECT_EQ(s.bytes, 1024);
  // Too small to give every rank an element: zero.
  EXPECT_EQ(comm_size(Collective::kAllGather, 8, 4, 3).bytes, 0);
  // broadcast/reduce: a size not a multiple of the element size rounds down.
  EXPECT_EQ(comm_size(Collective::kBroadcast, 1001, 8, 2).bytes, 1000);
  EXPECT_EQ(comm_size(Collective::kReduce, 1001, 8, 2).count, 125);
  EXPECT_EQ(comm_size(Collective::kBarrier, 1 << 20, 4, 2).bytes, 0);
  // A sweep's rows: 8 B leaves no float32 per rank on 3 ranks; 12 B and 16 B both give one
  // element per rank (12 B), so the second is a repeat.
  const auto rows = comm_sizes(Collective::kAllGather, {8, 12, 16, 24}, 4, 3);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bytes, 12);
  EXPECT_EQ(rows[1].bytes, 24);
  EXPECT_EQ(comm_sizes(Collective::kAllreduce, {8, 12, 16, 24}, 4, 3).size(), 4u);
  EXPECT_EQ(comm_sizes(Collective::kBarrier, {8, 12}, 4, 3).size(), 1u);
  // Memory per rank for S = 1200 B on 3 ranks.
  EXPECT_EQ(buffer_bytes_per_rank(Collective::kAllreduce, 1200, 3), 1200);
  EXPECT_EQ(buffer_bytes_per_rank(Collective::kAllGather, 1200, 3), 1600);
  EXPECT_EQ(buffer_bytes_per_rank(Collective::kAllToAll, 1200, 3), 2400);
  EXPECT_EQ(buffer_bytes_per_rank(Collective::kReduceScatter, 1200, 3), 2800);
  EXPECT_EQ(buffer_bytes_per_rank(Collective::kBarrier, 1200, 3), 0);
}

TEST(Busbw, AlgbwAndBusbwByHand) {
  // 1e9 bytes in 0.5 s: 2 GB/s; allreduce on 4 ranks: busbw 3 GB/s.
  EXPECT_DOUBLE_EQ(algbw_gbps(1'000'000'000, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(algbw_gbps(1'000'000'000, 0.5) * busbw_factor(Collective::kAllreduce, 4), 3.0);
  // all_gather of 996 B (the whole gathered buffer) in 1 us on 3 ranks: algbw 0.996 GB/s,
  // busbw 0.664 GB/s (nccl-tests: count*typesize*nranks / t, times (n-1)/n).
  EXPECT_NEAR(algbw_gbps(996, 1e-6), 0.996, 1e-12);
  EXPECT_NEAR(algbw_gbps(996, 1e-6) * busbw_factor(Collective::kAllGather, 3), 0.664, 1e-12);
  EXPECT_EQ(algbw_gbps(0, 1.0), 0.0);
  EXPECT_EQ(algbw_gbps(100, 0.0), 0.0);
}

TEST(Busbw, SizeSweepAsNcclTestsLoop) {
  EXPECT_EQ(size_sweep(1024, 8192, 2, 0), (std::vector<long long>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(size_sweep(1000, 8000, 2, 0), (std::vector<long long>{1000, 2000, 4000, 8000}));
  EXPECT_EQ(size_sweep(1000, 7999, 2, 0), (std::vector<long long>{1000, 2000, 4000}));
  EXPECT_EQ(size_sweep(10, 40, 1, 15), (std::vector<long long>{10, 25, 40}));
  EXPECT_EQ(size_sweep(32 << 20, 32 << 20, 1, 1 << 20), (std::vector<long long>{32 << 20}));
  // 1K..256M by 2: 19 sizes.
  EXPECT_EQ(size_sweep(1024, 256LL << 20, 2, 0).size(), 19u);
  // Near the top of 64 bits the loop stops instead of overflowing.
  EXPECT_EQ(size_sweep(1LL << 62, (1LL << 62) + 5, 4, 0).size(), 1u);
  EXPECT_THROW(size_sweep(100, 10, 2, 0), UsageError);
  EXPECT_THROW(size_sweep(-1, 10, 2, 0), UsageError);
  EXPECT_THROW(size_sweep(1, 10, 0, 0), UsageError);
  EXPECT_THROW(size_sweep(1, 10, 1, 0), UsageError);
  EXPECT_THROW(size_sweep(0, 10, 2, 0), UsageError);
  EXPECT_THROW(size_sweep(1, 1LL << 40, 1, 1), UsageError);  // more than 4096 sizes
}

TEST(Busbw, ParsesCollectivesDtypesAndOps) {
  const auto cs = parse_collectives("barrier,all_gather,allreduce,alltoall,allreduce");
  ASSERT_EQ(cs.size(), 4u);
  EXPECT_EQ(cs[0], Collective::kAllreduce);  // all_collectives() order
  EXPECT_EQ(cs[1], Collective::kAllGather);
  EXPECT_EQ(cs[2], Collective::kAllToAll);
  EXPECT_EQ(cs[3], Collective::kBarrier);
  EXPECT_THROW(parse_collectives("allreduce,gather"), UsageError);
  EXPECT_THROW(parse_collectives(","), UsageError);
  EXPECT_EQ(dtype_size("float32"), 4);
  EXPECT_EQ(dtype_size("bfloat16"), 2);
  EXPECT_EQ(dtype_size("int64"), 8);
  EXPECT_EQ(dtype_size("uint8"), 1);
  EXPECT_THROW(dtype_size("float"), UsageError);
  EXPECT_NO_THROW(check_redop("min"));
  EXPECT_THROW(check_redop("avg"), UsageError);
  EXPECT_TRUE(reduces(Collective::kReduceScatter));
  EXPECT_FALSE(reduces(Collective::kAllGather));
  EXPECT_TRUE(has_root(Collective::kReduce));
  EXPECT_FALSE(has_root(Collective::kAllreduce));
}

CommResult allreduce_row(const std::string& label, int n, long long bytes, double busbw) {
  CommResult r;
  r.collective = "allreduce";
  r.label = label;
  r.world_size = n;
  r.bytes = bytes;
  r.busbw_gbps = busbw;
  return r;
}

TEST(Busbw, MinBusbwUsesSizesFromAQuarterOfTheLargest) {
  // Largest 4096: sizes 1024, 2048, 4096 count (mean (1+2+3)/3 = 2), 512 does not.
  std::vector<CommResult> rows{allreduce_row("1M/2C", 2, 512, 100.0), allreduce_row("1M/2C", 2, 1024, 1.0),
                               allreduce_row("1M/2C", 2, 2048, 2.0), allreduce_row("1M/2C", 2, 4096, 3.0)};
  CommResult other = allreduce_row("1M/2C", 2, 4096, 0.0);
  other.collective = "broadcast";  // not judged
  rows.push_back(other);
  EXPECT_TRUE(min_busbw_verdict(rows, 2.0).pass);
  EXPECT_FALSE(min_busbw_verdict(rows, 2.01).pass);
  EXPECT_NE(min_busbw_verdict(rows, 2.0).line.find("2.000 GB/s over 3 size(s) 1024..4096 B"), std::string::npos)
      << min_busbw_verdict(rows, 2.0).line;
  // Every group of >= 2 ranks must reach it; a 1-rank group is not judged.
  rows.push_back(allreduce_row("1M/3C", 3, 4096, 0.5));
  rows.push_back(allreduce_row("1M/1C", 1, 4096, 0.0));
  EXPECT_FALSE(min_busbw_verdict(rows, 1.0).pass);
  EXPECT_TRUE(min_busbw_verdict(rows, 0.5).pass);
  EXPECT_THROW(min_busbw_verdict({allreduce_row("1M/1C", 1, 4096, 0.0)}, 1.0), UsageError);
}

TEST(Busbw, TableHasNcclTestsColumns) {
  CommResult r = allreduce_row("1M/2C", 2, 1024, 0.5);
  r.count = 256;
  r.dtype = "float32";
  r.redop = "sum";
  r.root = -1;
  r.time_us = 12.5;
  r.algbw_gbps = 0.5;
  r.wrong = 0;
  const Table t = comm_table("allreduce", {r});
  const std::string text = render_tables({t}, TableFormat::text);
  for (const char* h :
       {"size (B)", "count (elements)", "type", "redop", "root", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "#wrong"})
    EXPECT_NE(text.find(h), std::string::npos) << h;
  EXPECT_NE(text.find("12.50"), std::string::npos) << text;
  EXPECT_EQ(text.find("max time"), std::string::npos);  // CSV/JSON only
  CommResult unchecked = r;
  unchecked.wrong = -1;  // not checked: n/a beside a checked row (a column no row has is left out of text)
  EXPECT_NE(render_tables({comm_table("allreduce", {r, unchecked})}, TableFormat::text).find("n/a"), std::string::npos);
  // The CPU cores the collective kept busy: shown where measured, left out where no row has them.
  EXPECT_EQ(text.find("CPU cores"), std::string::npos) << text;
  CommResult busy = r;
  busy.cpu_cores = 0.75;
  const std::string with = render_tables({comm_table("allreduce", {busy})}, TableFormat::text);
  EXPECT_NE(with.find("CPU cores"), std::string::npos) << with;
  EXPECT_NE(with.find("0.75"), std::string::npos) << with;
}

}  // namespace
}  // namespace ddpbench
