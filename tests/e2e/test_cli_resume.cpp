// End-to-end tests of `ddpbench run --resume`: a stopped run's rows are kept and the rest
// measured; rows and environments it cannot vouch for are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <set>
#include <stdexcept>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"
#include "core/result/result.hpp"
#include "e2e/cli_test_util.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using namespace cli_tests;  // kBin, kTiny and the testutil and gmock names they use

// run --resume: a sweep whose rank 1 died in its first DDP step (DDPBENCH_TEST_FAULT=exit-rank1)
// left the no-DDP and 1-rank rows in PATH.partial; resumed with the same flags, under the
// built-in launcher and then with ranks started by hand (torchrun's variables), it keeps
// those rows byte for byte (the same p50s and the stopped launch's id: not measured again),
// measures the 2-rank row under a launch of its own and writes one complete PATH. Other
// flags, a file that is not a .partial and a second --json are refused.
TEST(Resume, KeepsTheStoppedRunsRowsAndMeasuresTheRest) {
  TempDir d;
  const auto stopped_run = [&](const std::string& name) {
    const std::string json = (d.path / name).string();
    const auto o = run("DDPBENCH_TEST_FAULT=exit-rank1 " + kBin + kTiny + " --nproc-per-node 2 --json " + json);
    EXPECT_NE(o.code, 0) << o.err;
    EXPECT_THAT(o.err, HasSubstr(json + ".partial")) << o.err;  // the note on the rows saved
    const ResultFile partial = read_result_file(json + ".partial");
    EXPECT_FALSE(partial.complete);
    EXPECT_EQ(partial.results.size(), 2u);  // no ddp, then ddp on 1 rank
    return partial;
  };
  const auto check_resumed = [&](const ResultFile& partial, const std::string& json, const Outcome& o) {
    ASSERT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_FALSE(fs::exists(json + ".partial"));
    const ResultFile f = read_result_file(json);
    EXPECT_TRUE(f.complete);
    ASSERT_EQ(f.results.size(), 3u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(f.results[i].group, partial.results[i].group);
      EXPECT_EQ(f.results[i].summary.p50_s, partial.results[i].summary.p50_s);
      EXPECT_EQ(f.results[i].launch, partial.results[i].launch);
    }
    EXPECT_EQ(f.results[2].world_size, 2);
    EXPECT_EQ(f.results[2].group, std::string(testutil::kTinyModel) + "/ddp2");
    ASSERT_TRUE(f.results[2].launch.is_object());
    EXPECT_NE(f.results[2].launch.at("job_id"), partial.results[0].launch.at("job_id"));
    size_t kept = 0;
    for (size_t at = o.out.find("(kept from the stopped run)"); at != std::string::npos;
         at = o.out.find("(kept from the stopped run)", at + 1))
      ++kept;
    EXPECT_EQ(kept, 2u) << o.out;
  };
  // The built-in launcher.
  const ResultFile p1 = stopped_run("a.json");
  const std::string a = (d.path / "a.json").string();
  check_resumed(p1, a, run(kBin + kTiny + " --nproc-per-node 2 --resume " + a + ".partial"));
  // Ranks started by hand, as torchrun or srun start them (a requeued job runs the same line).
  const ResultFile p2 = stopped_run("b.json");
  const std::string b = (d.path / "b.json").string();
  const std::string common =
      "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(find_free_port()) + " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 ";
  const std::string args = kTiny + " --resume " + b + ".partial";
  check_resumed(p2, b,
                run("sh -c '" + common + "RANK=1 LOCAL_RANK=1 " + kBin + args + " >/dev/null 2>&1 & " + common +
                    "RANK=0 LOCAL_RANK=0 " + kBin + args + "; r=$?; wait; exit $r'"));
  // Refusals: exit 2, one line, before any rank starts; the .partial is left as it was.
  const ResultFile p3 = stopped_run("c.json");
  const std::string c = (d.path / "c.json").string();
  const std::string before = slurp(c + ".partial");
  EXPECT_EQ(bad_input_problem(run(kBin + kTiny + " --seed 7 --nproc-per-node 2 --resume " + c + ".partial"),
                              "seed is 0 there and 7 here"),
            "");
  EXPECT_EQ(bad_input_problem(run(kBin + kTiny + " --nproc-per-node 2 --resume " + a), "is not a PATH.partial file"),
            "");
  EXPECT_EQ(bad_input_problem(run(kBin + kTiny + " --nproc-per-node 2 --resume " + c + ".partial --json " + a),
                              "drop --json"),
            "");
  EXPECT_EQ(slurp(c + ".partial"), before);
}

// run --resume keeps only what it can vouch for, on real stopped runs: a sweep whose
// 2-rank group failed its self-check (exit 3) is not resumed to a complete file; a launch with
// another OMP_NUM_THREADS is refused before any rank starts; a launch on other hosts (the
// file's hosts edited) is refused by rank 0 once the ranks met, and rank 1 says why it stops.
// Each refusal exits 2, writes no PATH and leaves the .partial as it was.
TEST(Resume, RefusesRowsAndEnvironmentsItCannotVouchFor) {
  TempDir d;
  const std::string flags = kTiny + " --nproc-per-node 2 --timeout 60";
  // A failed self-check: three rows, the last one failed.
  const std::string failed = (d.path / "failed.json").string();
  auto o = run("DDPBENCH_TEST_FAULT=skew-grad " + kBin + flags + " --json " + failed);
  ASSERT_EQ(o.code, 3) << o.err;
  const std::string failed_rows = slurp(failed + ".partial");
  o = run(kBin + flags + " --resume " + failed + ".partial");
  EXPECT_EQ(bad_input_problem(o, "--resume '" + failed + ".partial' cannot be continued: row 3 (" +
                                     testutil::kTinyModel + "/ddp2) failed its self-check"),
            "");
  EXPECT_FALSE(fs::exists(failed));
  EXPECT_EQ(slurp(failed + ".partial"), failed_rows);

  // A run stopped after two rows (rank 1 died in the 2-rank group), with OMP_NUM_THREADS=1.
  const std::string json = (d.path / "r.json").string(), partial = json + ".partial";
  o = run("OMP_NUM_THREADS=1 DDPBENCH_TEST_FAULT=exit-rank1 " + kBin + flags + " --json " + json);
  ASSERT_NE(o.code, 0) << o.err;
  ASSERT_EQ(read_result_file(partial).results.size(), 2u);
  const std::string rows = slurp(partial);
  o = run("OMP_NUM_THREADS=2 " + kBin + flags + " --resume " + partial);
  EXPECT_EQ(bad_input_problem(o, "--resume '" + partial +
                                     "' was measured in another environment: OMP_NUM_THREADS is 1 there and 2 here; "),
            "");
  EXPECT_EQ(o.out, "");
  EXPECT_FALSE(fs::exists(json));
  EXPECT_EQ(slurp(partial), rows);

  // Other hosts: only known once every rank reported its own.
  auto j = nlohmann::json::parse(rows);
  const std::string host = j["environment"]["hosts"].at(0).get<std::string>();
  j["environment"]["hosts"] = {"elsewhere"};
  { std::ofstream(partial) << j.dump(1); }
  const std::string edited = slurp(partial);
  o = run("OMP_NUM_THREADS=1 " + kBin + flags + " --resume " + partial);
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_THAT(o.err,
              HasSubstr("ddpbench: error: --resume '" + partial +
                        "' was measured in another environment: the hosts are elsewhere there and " + host + " here; "))
      << o.err;
  // Rank 1, told, leaves it to rank 0's line; the launcher's note says where the rows stay.
  EXPECT_EQ(count_lines(o.err), 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("ddpbench: note: the 2 row(s) measured so far are in " + partial)) << o.err;
  EXPECT_FALSE(fs::exists(json));
  EXPECT_EQ(slurp(partial), edited);
  // Ranks started by hand: rank 1, on a terminal of its own, says why it stops.
  const std::string common = "OMP_NUM_THREADS=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(find_free_port()) +
                             " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 ";
  const std::string args = kTiny + " --timeout 60 --resume " + partial;
  const std::string err1 = (d.path / "err1").string(), rc1 = (d.path / "rc1").string();
  o = run("sh -c '(" + common + "RANK=1 LOCAL_RANK=1 " + kBin + args + " >/dev/null 2>" + err1 + "; echo $? >" + rc1 +
          ") & " + common + "RANK=0 LOCAL_RANK=0 " + kBin + args + "; r=$?; wait; exit $r'");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("the hosts are elsewhere there and " + host + " here")) << o.err;
  EXPECT_EQ(count_lines(o.err), 1) << o.err;
  EXPECT_EQ(slurp(rc1), "2\n");
  EXPECT_EQ(slurp(err1), "ddpbench: error: rank 1: rank 0 refused --resume '" + partial +
                             "': the stopped run was measured in another environment (the hosts are elsewhere there "
                             "and " +
                             host + " here)\n");
  EXPECT_FALSE(fs::exists(json));
  EXPECT_EQ(slurp(partial), edited);
}
}  // namespace
}  // namespace ddpbench
