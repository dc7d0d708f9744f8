// End-to-end tests of `ddpbench comm`: real ranks over Gloo on 127.0.0.1 started by the
// built-in launcher, the result file they write, the corrupted-buffer seam, --min-busbw and
// bad input. Small sizes, so each launch takes a few seconds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <set>

#include "common/testutil.hpp"
#include "core/result/result.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using testutil::bad_input_problem;
using testutil::count_lines;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;

const std::vector<std::string> kCollectives{"allreduce", "reduce_scatter", "all_gather", "broadcast",
                                            "reduce",    "all_to_all",     "barrier"};

// nccl-tests' busbw factors, written out here as the independent oracle (doc/PERFORMANCE.md).
double factor(const std::string& c, int n) {
  if (c == "allreduce") return 2.0 * (n - 1) / n;
  if (c == "reduce_scatter" || c == "all_gather" || c == "all_to_all") return double(n - 1) / n;
  if (c == "broadcast" || c == "reduce") return 1.0;
  return 0.0;
}

// Every collective on groups of 2 and 3 real ranks (one launch of 3 ranks, --world-sizes 2,3):
// every checked result is right, and the columns obey nccl-tests' definitions.
TEST(Comm, EveryCollectiveOnTwoAndThreeRanksIsCorrect) {
  TempDir d;
  const auto json = (d.path / "c.json").string();
  const auto o = run(kBin + " comm --nproc-per-node 3 --world-sizes 2,3 -b 1K -e 4K -f 4 -w 1 -n 3 --json " + json);
  ASSERT_EQ(o.code, 0) << o.err << o.out;
  EXPECT_THAT(o.out, HasSubstr("size (B)"));
  EXPECT_THAT(o.out, HasSubstr("#wrong"));
  EXPECT_THAT(o.out, HasSubstr("# Out of bounds values : 0 OK"));
  const ResultFile f = read_result_file(json);
  EXPECT_EQ(f.kind, "comm");
  EXPECT_TRUE(f.complete);
  EXPECT_TRUE(f.results.empty());
  // 2 groups x (6 collectives x 2 sizes + 1 barrier).
  ASSERT_EQ(f.comm_results.size(), 26u);
  std::map<std::pair<std::string, int>, int> seen;
  for (const auto& r : f.comm_results) {
    SCOPED_TRACE(r.collective + " on " + std::to_string(r.world_size) + " ranks, " + std::to_string(r.bytes) + " B");
    ++seen[{r.collective, r.world_size}];
    EXPECT_EQ(r.warmup, 1);
    EXPECT_EQ(r.iters, 3);
    EXPECT_GT(r.time_us, 0.0);
    EXPECT_GE(r.time_us_max_over_ranks, r.time_us);
    ASSERT_EQ(r.extra.at("time_us_per_rank").size(), static_cast<size_t>(r.world_size));
    if (r.collective == "barrier") {
      EXPECT_EQ(r.bytes, 0);
      EXPECT_EQ(r.wrong, -1);  // nothing to check
      continue;
    }
    EXPECT_EQ(r.wrong, 0);
    EXPECT_EQ(r.dtype, "float32");
    // Sizes as nccl-tests: the per-rank chunk of all_gather/reduce_scatter/all_to_all is
    // (size/4)/n elements and the size column the whole n-chunk buffer.
    const long long requested = r.bytes <= 1024 ? 1024 : 4096;
    const bool chunked =
        r.collective == "all_gather" || r.collective == "reduce_scatter" || r.collective == "all_to_all";
    const long long count = chunked ? requested / 4 / r.world_size : requested / 4;
    EXPECT_EQ(r.count, count);
    EXPECT_EQ(r.bytes, chunked ? count * r.world_size * 4 : requested);
    EXPECT_NEAR(r.algbw_gbps, r.bytes / (r.time_us * 1e-6) / 1e9, 1e-9 * r.algbw_gbps + 1e-12);
    EXPECT_NEAR(r.busbw_gbps, r.algbw_gbps * factor(r.collective, r.world_size), 1e-12);
    EXPECT_EQ(r.redop, r.collective == "allreduce" || r.collective == "reduce_scatter" || r.collective == "reduce"
                           ? "sum"
                           : "none");
    EXPECT_EQ(r.root, r.collective == "broadcast" || r.collective == "reduce" ? 0 : -1);
    // Gloo in torch 1.13 has no reduce_scatter: the row must say it was emulated.
    if (r.collective == "reduce_scatter" && r.extra.contains("emulated")) {
      EXPECT_THAT(r.label, HasSubstr("emulated"));
      EXPECT_THAT(o.out, HasSubstr("EMULATED"));
    }
  }
  for (const auto& c : kCollectives)
    for (int n : {2, 3}) EXPECT_EQ((seen[{c, n}]), c == "barrier" ? 1 : 2) << c << " on " << n;
}

// Another reduction and dtype: int8 products against the closed form (one launch; the other
// dtype/op pairs cost a launch each, so they are not repeated here).
TEST(Comm, ReductionsAndDtypesAreChecked) {
  for (const std::string flags : {"-d int8 -o prod"}) {
    const auto o = run(kBin + " comm --nproc-per-node 3 --world-sizes 3 -b 1K -e 1K -w 0 -n 1 " + flags +
                       " --collectives allreduce,reduce_scatter,reduce");
    EXPECT_EQ(o.code, 0) << flags << "\n" << o.err << o.out;
    EXPECT_THAT(o.out, HasSubstr("# Out of bounds values : 0 OK")) << flags;
  }
}

// The test seam corrupts element 0 of one rank's input (the root of broadcast/reduce, else the
// last rank): the elements that depend on it are counted on every rank that receives them.
TEST(Comm, CorruptedBufferIsCountedExactly) {
  TempDir d;
  const auto json = (d.path / "c.json").string();
  const auto o = run("DDPBENCH_TEST_FAULT=corrupt-comm " + kBin +
                     " comm --nproc-per-node 3 --world-sizes 2,3 -b 1K -e 1K -w 0 -n 1 --json " + json);
  EXPECT_EQ(o.code, 3) << o.err << o.out;
  EXPECT_EQ(count_lines(o.err), 1u) << o.err;
  EXPECT_THAT(o.err, HasSubstr("ddpbench: self-check failed: "));
  const ResultFile f = read_result_file(json);
  ASSERT_EQ(f.comm_results.size(), 14u);
  long long total = 0;
  for (const auto& r : f.comm_results) {
    const int n = r.world_size;
    // allreduce, all_gather, broadcast: every rank's element that holds the corrupted one;
    // reduce: the root's; reduce_scatter and all_to_all: the one rank it is sent to.
    const std::map<std::string, long long> expected{{"allreduce", n}, {"all_gather", n},     {"broadcast", n},
                                                    {"reduce", 1},    {"reduce_scatter", 1}, {"all_to_all", 1},
                                                    {"barrier", -1}};
    EXPECT_EQ(r.wrong, expected.at(r.collective)) << r.collective << " on " << n;
    total += std::max(0LL, r.wrong);
  }
  EXPECT_EQ(total, (2 + 2 + 2 + 1 + 1 + 1) + (3 + 3 + 3 + 1 + 1 + 1));  // 9 on 2 ranks, 12 on 3
  EXPECT_THAT(o.out, HasSubstr("# Out of bounds values : 21 FAILED"));
}

TEST(Comm, MinBusbwDecidesTheExitCode) {
  const std::string cmd = kBin + " comm --nproc-per-node 2 --collectives allreduce -b 1K -e 8K -f 2 -w 1 -n 2";
  auto o = run(cmd + " --min-busbw 1e6");
  EXPECT_EQ(o.code, 1) << o.err << o.out;
  EXPECT_THAT(o.out, HasSubstr("min-busbw: FAIL"));
  // Sizes >= 1/4 of the largest (8192): 2048, 4096 and 8192.
  EXPECT_THAT(o.out, HasSubstr("over 3 size(s) 2048..8192 B"));
  o = run(cmd + " --min-busbw 1e-9");
  EXPECT_EQ(o.code, 0) << o.err << o.out;
  EXPECT_THAT(o.out, HasSubstr("min-busbw: PASS"));
}

struct BadCommCase {
  std::string name, args, expect;
  std::string env = "";
};
void PrintTo(const BadCommCase& c, std::ostream* os) { *os << c.env << "ddpbench " << c.args; }

class BadCommInput : public ::testing::TestWithParam<BadCommCase> {};

TEST_P(BadCommInput, ExitTwoWithOneLine) {
  TempDir d;
  std::string args = GetParam().args;
  for (size_t pos; (pos = args.find("@DIR")) != std::string::npos;) args.replace(pos, 4, d.path.string());
  const auto o = run(GetParam().env + kBin + " " + args);
  EXPECT_EQ(bad_input_problem(o, GetParam().expect), "");
  EXPECT_EQ(o.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    Comm, BadCommInput,
    ::testing::Values(
        BadCommCase{"UnknownCollective", "comm --collectives allreduce,gather", "'gather' is not a collective"},
        BadCommCase{"UnknownDtype", "comm -d float8", "-d/--datatype 'float8' is not supported"},
        BadCommCase{"UnknownOp", "comm -o avg", "-o/--op 'avg' is not supported"},
        BadCommCase{"MaxBelowMin", "comm -b 1M -e 1K", "-e/--maxbytes 1024 is below -b/--minbytes 1048576"},
        BadCommCase{"BelowOneElement", "comm -b 3 -e 3", "-e/--maxbytes 3 moves nothing in allreduce"},
        BadCommCase{"RootOutsideGroup", "comm --nproc-per-node 2 -r 2", "-r/--root 2 is not a rank"},
        BadCommCase{"MinBusbwWithoutAllreduce", "comm --collectives broadcast --min-busbw 1",
                    "--min-busbw judges allreduce"},
        BadCommCase{"JsonIsADirectory", "comm --json @DIR", "is a directory"},
        BadCommCase{"HugeBuffers", "comm -b 1P -e 1P --collectives allreduce", "use a smaller -e"},
        BadCommCase{"UnknownTestFault", "comm", "DDPBENCH_TEST_FAULT 'skew-grad' is unknown to comm",
                    "DDPBENCH_TEST_FAULT=skew-grad "}),
    testutil::ParamName());

}  // namespace
}  // namespace ddpbench
