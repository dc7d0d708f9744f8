// `ddpbench predict` through the binary on the hand-made fixtures tests/fixtures/predict_{run,comm}.json
// (their numbers: tests/unit/test_predict.cpp): exit codes, one-line errors, the JSON file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/testutil.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";
const std::string kRun = kFix + "predict_run.json", kComm = kFix + "predict_comm.json";

TEST(PredictCli, TableAndJsonFile) {
  TempDir d;
  const auto path = (d.path / "pred.json").string();
  const auto o =
      run(kBin + " predict " + kRun + " --comm " + kComm + " --world-sizes 8,4096 --model ring --json " + path);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("alpha-beta fits"));
  EXPECT_THAT(o.out, HasSubstr("Predicted step time: resnet18"));
  const auto j = nlohmann::json::parse(testutil::slurp(path));
  ASSERT_EQ(j["tables"].size(), 3u);
  for (const auto& t : j["tables"])
    for (const auto& r : t["rows"]) EXPECT_EQ(r["model"], "ring") << r;  // --model ring: no tree fit or point
  // From the 2-rank row: sizes 2, 4 (measured) and 8, 4096; at 8 ranks 0.105 s + 30.060128 ms exposed
  // times the row's comm factor 5 / 4.234304 (the unit test derives both).
  const auto& rows = j["tables"][1]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2]["world_size"], 8);
  EXPECT_EQ(rows[2]["link"], "inter-node");
  EXPECT_NEAR(rows[2]["step_s"].get<double>(), 0.105 + 0.005 / 0.004234304 * 0.030060128, 1e-12);
  EXPECT_TRUE(rows[2]["error"].is_null());
  EXPECT_NEAR(rows[0]["error"].get<double>(), 0.0, 1e-9);  // its own size: reproduced
}

// A fit of two sizes has two points for two coefficients: it goes through both, so R^2 and the
// residual say nothing; they are n/a (null in JSON) with a note, never "1.00000" and "0.0%".
TEST(PredictCli, ATwoPointFitShowsNoResidual) {
  TempDir d;
  auto j = nlohmann::json::parse(testutil::slurp(kComm));
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& r : j["comm_results"])
    if (r["bytes"] != 1048576) kept.push_back(r);
  j["comm_results"] = kept;
  const auto comm = (d.path / "two.json").string();
  std::ofstream(comm) << j.dump();
  const auto o = run(kBin + " predict " + kRun + " --comm " + comm + " --model ring --format json");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto out = nlohmann::json::parse(o.out);
  const auto& fits = out["tables"][0];
  ASSERT_FALSE(fits["rows"].empty()) << fits.dump(1);
  for (const auto& r : fits["rows"]) {
    EXPECT_EQ(r["points"], 2) << r;
    EXPECT_TRUE(r["r2"].is_null()) << r;
    EXPECT_TRUE(r["max_rel_residual"].is_null()) << r;
  }
  EXPECT_THAT(fits["notes"].dump(), HasSubstr("a fit of two points goes through both"));
  // Three sizes: R^2 is a number again.
  const auto three = nlohmann::json::parse(run(kBin + " predict " + kRun + " --comm " + kComm + " --model ring --format json").out);
  EXPECT_TRUE(three["tables"][0]["rows"][0]["r2"].is_number());
}

TEST(PredictCli, GpusPerNodeAndFormats) {
  auto o = run(kBin + " predict " + kRun + " --comm " + kComm + " --world-sizes 8 --gpus-per-node 8 --format json");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["gpus_per_node"], 8);
  // The fixture ran on Gloo, whose allreduce is a ring at every size: --model auto (the default)
  // predicts with the ring alone, one row per world size (2, 4 measured; 8).
  ASSERT_EQ(j["tables"][1]["rows"].size(), 3u);
  for (const auto& r : j["tables"][1]["rows"]) EXPECT_EQ(r["model"], "ring") << r;
  // 8 ranks on one node: intra-node alpha-beta, ring 0.105 s + 7.620032 ms x the comm factor.
  const auto& row = j["tables"][1]["rows"][2];
  EXPECT_EQ(row["world_size"], 8);
  EXPECT_EQ(row["model"], "ring");
  EXPECT_EQ(row["link"], "intra-node");
  EXPECT_NEAR(row["step_s"].get<double>(), 0.105 + 0.005 / 0.004234304 * 0.007620032, 1e-12);
  o = run(kBin + " predict " + kRun + " --comm " + kComm + " --format csv");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("table,", 0), 0u);
  o = run(kBin + " predict " + kRun + " --comm " + kComm + " --format md");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("### Predicted step time"));
}

TEST(PredictCli, BadInputExitsTwoWithOneLine) {
  struct Case {
    std::string args, needle;
  };
  const std::vector<Case> cases = {
      {kRun, "pass --comm FILE"},
      {kComm + " --comm " + kComm, "is a comm result"},
      {kRun + " --comm " + kRun, "--comm takes files written by ddpbench comm"},
      {kRun + " --comm " + kComm + " --model star", "--model"},
      {kRun + " --comm " + kComm + " --world-sizes 0", "--world-sizes 0"},
      {kRun + " --comm " + kComm + " --gpus-per-node 0", "--gpus-per-node"},
      {kFix + "weak_cpu.json --comm " + kComm, "no weak-scaling DDP row with a step breakdown"},
  };
  for (const auto& c : cases) {
    const auto o = run(kBin + " predict " + c.args);
    EXPECT_EQ(o.code, 2) << c.args << "\n" << o.out << o.err;
    EXPECT_THAT(o.err, HasSubstr(c.needle)) << c.args;
    EXPECT_EQ(testutil::count_lines(o.err), 1u) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

}  // namespace
}  // namespace ddpbench
