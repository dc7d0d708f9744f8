// End-to-end tests of `ddpbench comm --pairs`: emulated nodes (network namespaces on one
// bridge, tests/tools/netns_nodes.sh) with one node's link limited by tc, which the run must
// name; pairs of ranks on one host; bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <set>

#include "common/netns.hpp"
#include "common/testutil.hpp"
#include "core/result/result.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using testutil::bad_input_problem;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kNetns = testutil::kNetnsScript;
using testutil::Netns;

// The tc rate of the limited node, and its value in GB/s (1e9 bytes/s): 200 Mbit/s = 25e6 B/s.
constexpr const char* kRate = "200mbit";
constexpr double kRateGbps = 200e6 / 8 / 1e9;

// Three emulated nodes (node0 with two ranks, one of which only waits), node2's veth limited
// to 200 Mbit/s on what it sends: the run names node2, its sending direction is near the tc
// rate, everything else is well above, and the result lists the three hosts.
// Three nodes, so each round runs one pair and a bye: with four, two pairs of a round share
// this machine's two cores and the healthy pairs' numbers vary several-fold. For the same
// reason --slow-fraction is 0.1, not 0.7: the limited link is ~40x below the healthy veths,
// so 0.1 separates the two with room for the CPU noise of a shared 2-core machine (a healthy
// direction was seen at 0.16 of the reference under a load average of 12).
TEST(PairsNetns, RateLimitedNodeIsNamed) {
  if (!testutil::netns_available())
    GTEST_SKIP() << "network namespaces are not available here (ip netns add refused: needs root or "
                    "CAP_SYS_ADMIN + CAP_NET_ADMIN, plus tc and unshare)";
  const int limited = 2;
  Netns ns(3, std::to_string(limited), kRate);
  ASSERT_TRUE(ns.ok) << "netns_nodes.sh up failed";
  TempDir d;
  const auto json = (d.path / "pairs.json").string();
  // rank -> (node, local rank); node0 holds ranks 0 and 1.
  const std::vector<std::pair<int, int>> ranks{{0, 0}, {0, 1}, {1, 0}, {2, 0}};
  std::string script;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const auto [node, local] = ranks[r];
    const std::string log = (d.path / ("rank" + std::to_string(r))).string();
    script += "(" + kNetns + " exec " + ns.prefix + " " + std::to_string(node) + " node" + std::to_string(node) +
              " env RANK=" + std::to_string(r) + " WORLD_SIZE=" + std::to_string(ranks.size()) +
              " LOCAL_RANK=" + std::to_string(local) + " LOCAL_WORLD_SIZE=" + (node == 0 ? "2" : "1") +
              " MASTER_ADDR=10.213.0.1 MASTER_PORT=29517 GLOO_SOCKET_IFNAME=veth0 timeout -k 5 120 " + kBin +
              " comm --pairs --pair-bytes 2M -w 1 -n 8 --slow-fraction 0.1 --timeout 60 --json " + json + " >" + log +
              ".out 2>" + log + ".err; echo $? >" + log + ".rc) & ";
  }
  script += "wait";
  (void)run("sh -c '" + script + "'");
  auto rc = [&](int r) { return testutil::slurp(d.path / ("rank" + std::to_string(r) + ".rc")); };
  const std::string out0 = testutil::slurp(d.path / "rank0.out"), err0 = testutil::slurp(d.path / "rank0.err");
  ASSERT_EQ(rc(0), "1\n") << "rank 0 must exit 1 (a slow node named)\n" << out0 << err0;
  for (int r = 1; r < 4; ++r)
    EXPECT_EQ(rc(r), "0\n") << "rank " << r << ": " << testutil::slurp(d.path / ("rank" + std::to_string(r) + ".err"));
  EXPECT_THAT(out0, HasSubstr("SLOW NODE node2: every pair with it is slow (2 of 2)"));
  EXPECT_THAT(out0, HasSubstr("pairs: FAIL: slow node node2"));

  const ResultFile f = read_result_file(json);
  EXPECT_TRUE(f.complete);
  EXPECT_EQ(f.kind, "comm");
  // Nothing assumes one host: three host names, and the participants are each host's lowest rank.
  EXPECT_EQ(f.environment.at("hosts"), (nlohmann::json{"node0", "node1", "node2"}));
  const auto& s = f.comm_pairs;
  ASSERT_TRUE(s.is_object()) << "no comm_pairs in the result";
  EXPECT_EQ(s.at("unit"), "node");
  std::vector<int> part;
  for (const auto& p : s.at("participants")) part.push_back(p.at("rank").get<int>());
  EXPECT_EQ(part, (std::vector<int>{0, 2, 3}));
  ASSERT_EQ(s.at("slow_nodes").size(), 1u) << s.dump(1);
  EXPECT_EQ(s.at("slow_nodes")[0].at("name"), "node2");
  EXPECT_TRUE(s.at("slow_nodes")[0].at("send_slow").get<bool>());
  EXPECT_TRUE(s.at("slow_links").empty()) << s.dump(1);
  EXPECT_TRUE(s.at("outliers").get<bool>());

  // 3 nodes: 3 rounds of one pair and a bye, every pair once; 3 rows per pair.
  ASSERT_EQ(f.comm_results.size(), 9u);
  std::set<std::pair<std::string, std::string>> pairs;
  std::map<int, std::set<std::string>> in_round;
  for (const auto& r : f.comm_results) {
    SCOPED_TRACE(r.collective + " " + r.extra.dump());
    EXPECT_EQ(r.world_size, 2);
    EXPECT_EQ(r.nodes, 2);
    EXPECT_EQ(r.bytes, 2 << 20);
    EXPECT_EQ(r.wrong, 0);
    const std::string a = r.extra.at("pair")[0], b = r.extra.at("pair")[1];
    const int round = r.extra.at("round");
    const bool with_limited = a == "node2" || b == "node2";
    if (r.collective == "allreduce") {
      EXPECT_TRUE(pairs.insert({a, b}).second) << a << "-" << b << " twice";
      EXPECT_TRUE(in_round[round].insert(a).second) << a << " twice in round " << round;
      EXPECT_TRUE(in_round[round].insert(b).second) << b << " twice in round " << round;
      // A 2-rank allreduce sends the whole buffer each way (reduce-scatter + all-gather of
      // halves), so node2's are bounded by the rate too.
      if (with_limited) {
        EXPECT_LT(r.busbw_gbps, 1.5 * kRateGbps);
        EXPECT_GT(r.busbw_gbps, 0.2 * kRateGbps);
      } else {
        EXPECT_GT(r.busbw_gbps, 3 * kRateGbps);
      }
      continue;
    }
    ASSERT_EQ(r.collective, "sendrecv");
    const std::string dir = r.extra.at("direction");
    if (dir.rfind("node2->", 0) == 0) {  // node2 sends: through the tbf, near the rate
      EXPECT_GT(r.algbw_gbps, 0.3 * kRateGbps);
      EXPECT_LT(r.algbw_gbps, 1.5 * kRateGbps);
    } else {  // everything else, node2 receiving included, is well above
      EXPECT_GT(r.algbw_gbps, 3 * kRateGbps) << dir;
    }
  }
  EXPECT_EQ(pairs.size(), 3u);
  EXPECT_EQ(in_round.size(), 3u);
}

// `comm --pairs` on `nodes` emulated nodes of `ns`, one rank each. Returns rank 0's exit code
// and output; the result is `json`.
testutil::Outcome pairs_on_nodes(const Netns& ns, int nodes, const std::string& json, int port) {
  (void)run("sh -c '" +
            ns.launch_script(nodes, kBin, "comm --pairs --pair-bytes 2M -w 1 -n 8 --timeout 120 --json " + json, json,
                             port, 300) +
            "'");
  testutil::Outcome o;
  const std::string rc = testutil::slurp(json + ".r0.rc");
  o.code = rc.empty() ? -1 : std::stoi(rc);
  o.out = testutil::slurp(json + ".r0.out");
  o.err = testutil::slurp(json + ".r0.err");
  return o;
}

// The verdict holds under contention: four emulated nodes, so the two pairs of every round
// share this machine's 2 cores (healthy pairs then vary several-fold in the first pass),
// node3's link limited to 200 Mbit/s, the default --slow-fraction (0.7) and --confirm-runs
// (3); five runs in a row, then five nodes once. Every run names node3, and only node3, as a
// slow node: its pairs stay slow alone (0.024 GB/s against about 1 GB/s). A healthy pair slowed
// in the first pass is measured again alone; when it is still slow there (on these 2 cores an
// emulated node's rank may be starved of CPU even then: one run in several, by the machine's
// load, not by its link), the verdict must be what its own numbers say, checked here from the
// file apart from the tool's rule: each metric it names is below 0.7 x the reference and more than
// 5% below the healthy pairs' lowest; a p2p direction makes it a named link, the allreduce alone a note
// (allreduce_only_links). How often that happened is printed, not asserted.
TEST(PairsNetns, OnlyTheLimitedNodeIsNamedUnderContention) {
  if (!testutil::netns_available())
    GTEST_SKIP() << "network namespaces are not available here (ip netns add refused: needs root or "
                    "CAP_SYS_ADMIN + CAP_NET_ADMIN, plus tc and unshare)";
  int cleared = 0, allreduce_only = 0, healthy_named = 0;
  for (int run_i = 0; run_i < 6; ++run_i) {
    const int nodes = run_i < 5 ? 4 : 5, limited = nodes - 1;
    SCOPED_TRACE(fmt::format("run {} on {} nodes", run_i + 1, nodes));
    Netns ns(nodes, std::to_string(limited), kRate);
    ASSERT_TRUE(ns.ok) << "netns_nodes.sh up failed";
    TempDir d;
    const auto json = (d.path / "pairs.json").string();
    const auto o = pairs_on_nodes(ns, nodes, json, 29530 + run_i);
    size_t notes = 0;      // this run's healthy pairs slow alone in the allreduce only
    size_t p2p_pairs = 0;  // ... and in a p2p direction
    ASSERT_EQ(o.code, 1) << "rank 0 must exit 1 (a slow node named)\n" << o.out << o.err;
    const std::string node = "node" + std::to_string(limited);
    const ResultFile f = read_result_file(json);
    const auto& s = f.comm_pairs;
    ASSERT_EQ(s.at("slow_nodes").size(), 1u) << s.dump(1);
    EXPECT_EQ(s.at("slow_nodes")[0].at("name"), node);
    const auto& ref = s.at("reference");
    const auto& healthy = s.at("healthy_floor");
    // The pairs of the links the file names (a healthy pair's: the limited node's are in its
    // slow_nodes entry, not named as links).
    const auto named = [&](const char* list, const nlohmann::json& names) {
      for (const auto& l : s.at(list))
        if ((l.at("names")[0] == names[0] && l.at("names")[1] == names[1]) ||
            (l.at("names")[0] == names[1] && l.at("names")[1] == names[0]))
          return true;
      return false;
    };
    for (const auto& l : s.at("slow_links"))
      EXPECT_TRUE(l.at("names")[0] != node && l.at("names")[1] != node) << "the limited node's pairs are its own: " << l.dump();
    for (const auto& p : s.at("pairs")) {
      const bool with_limited = p.at("names")[0] == node || p.at("names")[1] == node;
      // Every pair with the limited node was a suspect, measured alone and stayed slow there.
      if (with_limited) {
        EXPECT_EQ(p.at("flag"), "slow") << p.dump();
        ASSERT_TRUE(p.contains("alone")) << p.dump();
        EXPECT_EQ(p.at("alone").at("runs"), 3);
        EXPECT_LT(p.at("alone").at("allreduce_busbw_gbps").get<double>(), 1.5 * kRateGbps) << p.dump();
      } else if (p.at("flag") == "slow") {
        // Still slow alone: each metric named must be below the limit and more than 5% below the
        // healthy floor in the alone measurement (the file's own numbers).
        ASSERT_TRUE(p.contains("alone")) << p.dump();
        const auto& alone = p.at("alone");
        bool p2p = false;
        for (const auto& m : p.at("slow")) {
          const std::string metric = m;
          double v = 0, limit = 0, lowest = 0;
          if (metric == "allreduce") {
            v = alone.at("allreduce_busbw_gbps");
            limit = 0.7 * ref.at("allreduce_busbw_gbps").get<double>();
            lowest = healthy.at("allreduce_busbw_gbps");
          } else {
            p2p = true;
            const bool ab = metric == "p2p " + p.at("names")[0].get<std::string>() + "->" + p.at("names")[1].get<std::string>();
            v = alone.at("p2p_gbps")[ab ? 0 : 1];
            limit = 0.7 * ref.at("p2p_gbps").get<double>();
            lowest = healthy.at("p2p_gbps");
          }
          EXPECT_LT(v, limit) << metric << " " << p.dump();
          EXPECT_LT(v, 0.95 * lowest) << metric << " " << p.dump();  // more than 5% below the healthy lowest
        }
        EXPECT_EQ(named("slow_links", p.at("names")), p2p) << p.dump();
        EXPECT_EQ(named("allreduce_only_links", p.at("names")), !p2p) << p.dump();
        ++(p2p ? p2p_pairs : notes);
      } else {
        cleared += p.at("flag") == "cleared";
      }
    }
    EXPECT_EQ(s.at("allreduce_only_links").size(), notes);
    const size_t links = s.at("slow_links").size();
    EXPECT_EQ(links, p2p_pairs) << "a named link is a healthy pair slow alone in p2p, and each such pair is named";
    EXPECT_THAT(o.out, HasSubstr("pairs: FAIL: slow node " + node + (links ? ", link " : " (below 0.7 x the reference")))
        << o.out;
    allreduce_only += static_cast<int>(notes);
    healthy_named += static_cast<int>(s.at("slow_links").size());
  }
  // How often the load made a healthy pair a suspect: printed, not asserted (it depends on
  // the machine's load).
  std::cout << "healthy pairs slow in the first pass and cleared alone: " << cleared
            << "; slow alone in the allreduce only (a note): " << allreduce_only
            << "; healthy pairs still slow alone in p2p (named links, by CPU starvation): " << healthy_named << "\n";
}

// One host, --pair-unit rank: every pair of 3 ranks once in 3 rounds (a bye each), every
// message checked; with --slow-fraction 0.01 nothing is slow, so exit 0.
TEST(Pairs, RanksOfOneHostArePaired) {
  TempDir d;
  const auto json = (d.path / "p.json").string();
  const auto o = run(kBin +
                     " comm --pairs --pair-unit rank --nproc-per-node 3 --pair-bytes 64K -w 1 -n 2 "
                     "--slow-fraction 0.01 --json " +
                     json);
  ASSERT_EQ(o.code, 0) << o.err << o.out;
  EXPECT_THAT(o.out, HasSubstr("pairs: PASS"));
  EXPECT_THAT(o.out, HasSubstr("# Out of bounds values : 0 OK"));
  const ResultFile f = read_result_file(json);
  ASSERT_EQ(f.comm_results.size(), 9u);
  EXPECT_EQ(f.comm_pairs.at("rounds"), (nlohmann::json{{{1, 2}}, {{0, 2}}, {{0, 1}}}));
  for (const auto& r : f.comm_results) {
    EXPECT_EQ(r.wrong, 0);
    EXPECT_EQ(r.nodes, 1);
    EXPECT_EQ(r.bytes, 64 << 10);
    // algbw = bytes / the receiver's (sendrecv) or the mean (allreduce) time.
    EXPECT_NEAR(r.algbw_gbps, r.bytes / (r.time_us * 1e-6) / 1e9, 1e-9 * r.algbw_gbps);
  }
}

// The corrupted-buffer seam: the pair's rank 1 adds 64 to element 0 of what it sends and of
// its allreduce input, so b->a has 1 wrong element and the allreduce 2 (both ranks' results).
TEST(Pairs, CorruptedMessagesAreCounted) {
  const auto o = run("DDPBENCH_TEST_FAULT=corrupt-comm " + kBin +
                     " comm --pairs --pair-unit rank --nproc-per-node 2 --pair-bytes 4K -w 0 -n 1");
  EXPECT_EQ(o.code, 3) << o.err << o.out;
  EXPECT_THAT(o.out, HasSubstr("# Out of bounds values : 3 FAILED"));
}

TEST(Pairs, BadInputIsOneLine) {
  const std::string c = kBin + " comm --pairs --nproc-per-node 2 ";
  EXPECT_EQ(bad_input_problem(run(c + "--collectives allreduce"), "drop --collectives"), "");
  EXPECT_EQ(bad_input_problem(run(c + "--pair-bytes 1001"), "--pair-bytes 1001 must be a whole number"), "");
  EXPECT_EQ(
      bad_input_problem(run(kBin + " comm --nproc-per-node 2 --pair-bytes 1M"), "--pair-bytes belongs to --pairs"), "");
  // One host and the default unit (node): found after the ranks met, said once by rank 0.
  EXPECT_EQ(bad_input_problem(run(c + "--pair-bytes 4K -w 0 -n 1"), "all 2 rank(s) run on one host"), "");
}

}  // namespace
}  // namespace ddpbench
