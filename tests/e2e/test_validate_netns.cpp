// `ddpbench validate` on emulated nodes (network namespaces on one bridge,
// tests/tools/netns_nodes.sh): three nodes, one rank each started by hand, node2's link
// limited by tc. A plan of an env step and a pairs step must agree on the nodes, name node2,
// count that FAIL in its report and exit 1; both steps stay complete in validate.json.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/netns.hpp"
#include "common/testutil.hpp"

namespace ddpbench {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testutil::Netns;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Three nodes, one rank each, node2 sending through a 200 Mbit/s tbf (as
// PairsNetns.RateLimitedNodeIsNamed). The pairs step has that test's options: 2 MiB
// messages, few iterations, and --slow-fraction 0.1 (the limited link is ~40x below the
// healthy veths; 0.1 leaves room for the CPU noise of 2 shared cores). Verdicts expected:
// env PASS (three hosts of one machine agree on every judged field), pairs FAIL naming node2
// (one slow node, no slow link), and the report of the pairs file adds none (its verdicts
// come from run tables and targets, and the plan has neither): 1 PASS, 1 FAIL, 0 VOID,
// 0 not evaluated.
TEST(ValidateNetns, SlowNodeIsAFailOfThePairsStep) {
  if (!testutil::netns_available())
    GTEST_SKIP() << "network namespaces are not available here (ip netns add refused: needs root or "
                    "CAP_SYS_ADMIN + CAP_NET_ADMIN, plus tc and unshare)";
  Netns ns(3, "2", "200mbit");
  ASSERT_TRUE(ns.ok) << "netns_nodes.sh up failed";
  TempDir d;
  const std::string plan = (d.path / "plan.yaml").string(), out = (d.path / "out").string();
  {
    std::ofstream f(plan);
    f << "ddpbench_plan: 1\n"
         "description: emulated nodes, node2 limited\n"
         "steps:\n"
         "  - env\n"
         "  - pairs:\n"
         "      pair-bytes: 2M\n"
         "      warmup_iters: 1\n"
         "      iters: 8\n"
         "      slow-fraction: 0.1\n"
         "      timeout: 60\n";
  }
  // Every rank runs validate in its node (shared --out: one machine); validate's store on
  // port 29700 of node0, the steps' on 29701 and 29702. The whole takes about 25 s; a hang
  // ends in validate's own timeouts, else in each rank's bound (180 s).
  const std::string log = (d.path / "rank").string();
  const std::string bin = "env DDPBENCH_JOB_ID=validate-netns " + kBin;
  (void)run("sh -c '" +
            ns.launch_script(3, bin, "validate " + plan + " --out " + out + " --timeout 60 --step-timeout 120", log,
                             29700, 180) +
            "'");
  const auto rc = [&](int r) { return testutil::slurp(log + ".r" + std::to_string(r) + ".rc"); };
  const std::string out0 = testutil::slurp(log + ".r0.out"), err0 = testutil::slurp(log + ".r0.err");
  ASSERT_EQ(rc(0), "1\n") << "rank 0 must exit 1 (the pairs step named a slow node)\n" << out0 << err0;
  // The other ranks took part in both steps; the verdict is rank 0's.
  for (int r = 1; r < 3; ++r)
    EXPECT_EQ(rc(r), "0\n") << "rank " << r << ": " << testutil::slurp(log + ".r" + std::to_string(r) + ".err");

  const auto stdout_lines = lines_of(out0);
  ASSERT_FALSE(stdout_lines.empty()) << err0;
  // The verdict names the FAIL: the pairs step's check with the slow node and its numbers.
  const std::string verdict = stdout_lines.back();
  EXPECT_THAT(verdict, StartsWith("validate: 1 PASS, 1 FAIL (02-pairs no slow node or link: node2: every pair with it "
                                  "is slow (2 of 2)"))
      << out0 << err0;
  EXPECT_THAT(verdict, EndsWith("), 0 VOID, 0 not evaluated")) << out0;

  // report.txt: validate's block first (the plan, the verdict line as printed), then the
  // report, whose Targets table holds one line per check.
  const std::string report = testutil::slurp(out + "/report.txt");
  const auto lines = lines_of(report);
  // Shown, for the log: validate's block (up to the blank line before the report's body).
  for (const auto& l : lines) {
    if (l.empty()) break;
    std::cout << "report.txt: " << l << "\n";
  }
  ASSERT_GE(lines.size(), 4u) << report;
  EXPECT_EQ(lines[0], "ddpbench validate: " + plan + " (emulated nodes, node2 limited)");
  EXPECT_EQ(lines[1], verdict) << report;
  const auto line_starting = [&](const std::string& prefix) {
    for (const auto& l : lines)
      if (l.rfind(prefix, 0) == 0) return l;
    return std::string();
  };
  EXPECT_THAT(line_starting("01-env "), StartsWith("01-env        PASS    nodes agree: 3 nodes agree")) << report;
  const std::string pairs_line = line_starting("02-pairs ");
  EXPECT_THAT(pairs_line, StartsWith("02-pairs      FAIL    no slow node or link: node2")) << report;
  // node2 alone is named: no other node, no link.
  for (const std::string other : {"node0", "node1"}) {
    EXPECT_THAT(pairs_line, ::testing::Not(HasSubstr(other))) << report;
    EXPECT_THAT(verdict, ::testing::Not(HasSubstr(other))) << report;
  }

  // validate.json: both steps complete, the pairs step with its verdict's exit 1.
  const auto rec = nlohmann::json::parse(testutil::slurp(out + "/validate.json"));
  ASSERT_EQ(rec.at("steps").size(), 2u) << rec.dump(1);
  const auto& env = rec.at("steps")[0];
  const auto& pairs = rec.at("steps")[1];
  EXPECT_EQ(env.at("name"), "01-env");
  EXPECT_EQ(env.at("status"), "complete");
  EXPECT_EQ(env.at("exit_code"), 0);
  EXPECT_EQ(pairs.at("name"), "02-pairs");
  EXPECT_EQ(pairs.at("status"), "complete");
  EXPECT_EQ(pairs.at("exit_code"), 1);
  EXPECT_EQ(pairs.at("launch").at("world_size"), 3) << pairs.dump(1);

  // The step files: three hosts in the env step, node2 the one slow node of the pairs step.
  const auto envf = nlohmann::json::parse(testutil::slurp(out + "/01-env.json"));
  EXPECT_EQ(envf.at("nodes").size(), 3u) << envf.dump(1);
  const auto pf = nlohmann::json::parse(testutil::slurp(out + "/02-pairs.json"));
  const auto& s = pf.at("comm_pairs");
  ASSERT_EQ(s.at("slow_nodes").size(), 1u) << s.dump(1);
  EXPECT_EQ(s.at("slow_nodes")[0].at("name"), "node2");
  EXPECT_TRUE(s.at("slow_links").empty()) << s.dump(1);
}

}  // namespace
}  // namespace ddpbench
