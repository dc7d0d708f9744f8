// End-to-end tests of the ddpbench binary when something is wrong: the bad-input table (exit 2
// with one line naming the problem), results kept or left untouched, failing self-checks, ranks
// that wait on a failed group or die.
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

/// A bad command line: its case name, the arguments, and a piece of the expected message.
struct BadCase {
  std::string name, args, expect;
  std::string env = "";    ///< "VAR=value " put before the command
  std::string setup = "";  ///< a shell command run first (files in @DIR)
};
/// Failure messages show the command, not the struct's bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.env << "ddpbench " << c.args; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitTwoWithOneLineNamingTheProblem) {
  TempDir d;
  std::string args = GetParam().args, setup = GetParam().setup;
  for (std::string* s : {&args, &setup})
    for (size_t pos; (pos = s->find("@DIR")) != std::string::npos;) s->replace(pos, 4, d.path.string());
  if (!setup.empty()) ASSERT_EQ(std::system(setup.c_str()), 0) << setup;
  const auto o = run(GetParam().env + kBin + " " + args);
  EXPECT_EQ(bad_input_problem(o, GetParam().expect), "");
  EXPECT_EQ(o.out, "");
}

INSTANTIATE_TEST_SUITE_P(
    Run, BadInput,
    ::testing::Values(
        BadCase{"UnknownModel", "run --model resnet9000", "unknown model 'resnet9000'"},
        BadCase{"ZeroBatch", "run --batch-size 0", "--batch-size 0 must be >= 1"},
        BadCase{"NegativeBatch", "run --batch-size -3", "--batch-size -3 must be >= 1"},
        BadCase{"WorldSizeBeyondTheJob", "run --nproc-per-node 2 --world-sizes 1,4", "--world-sizes has 4"},
        BadCase{"JsonInMissingDir", "run --json /nonexistent-ddpbench-dir/r.json", "not writable"},
        BadCase{"JsonIsADirectory", "run --json @DIR", "is a directory"},
        BadCase{"JsonEmpty", "run --json ''", "--json needs a file path; pass e.g. --json result.json"},
        BadCase{"JsonIsASymlink", "run --json @DIR/link.json",
                "link.json' is a symbolic link, not a regular file; pass the file's real path or a new "
                "name",
                "", "echo earlier >@DIR/real.json && ln -s real.json @DIR/link.json"},
        BadCase{"JsonOnDevFull", "run --json /dev/full",
                "--json '/dev/full' exists and is not a regular file; pass a new file name"},
        BadCase{"JsonReadOnly", "run --json @DIR/ro.json --overwrite",
                "ro.json' is read-only; make it writable or pass a new file name", "",
                "echo earlier >@DIR/ro.json && chmod 0444 @DIR/ro.json"},
        BadCase{"JsonProcVersion", "run --json /proc/version --overwrite",
                "--json '/proc/version' is read-only; make it writable or pass a new file name"},
        BadCase{"JsonExists", "run --json @DIR/r.json",
                "r.json' already exists; pass --overwrite to replace it once the new run completes, "
                "or choose a new name",
                "", "echo earlier >@DIR/r.json"},
        BadCase{"JsonPartialExists", "run --json @DIR/r.json",
                "r.json.partial' already exists (the rows of a run that stopped early); pass "
                "--overwrite",
                "", "echo '{}' >@DIR/r.json.partial"},
        BadCase{"ItersNotANumber", "run --iters many", "--iters 'many' must be a count >= 1 or auto"},
        BadCase{"ItersZero", "run --iters 0", "--iters '0' must be a count >= 1 or auto"},
        BadCase{"ItersNotAnInteger", "run --iters 1e3", "--iters '1e3'"},
        BadCase{"TargetCiWithFixedIters", "run --iters 5 --target-ci 1", "--target-ci needs --iters auto"},
        BadCase{"NegativeTargetCi", "run --target-ci -1", "--target-ci -1 must be a percentage"},
        BadCase{"MaxItersBelowMin", "run --iters auto --max-iters 3", "--max-iters 3 must be >= --min-iters 20"},
        BadCase{"UnknownTestFault", "run --nproc-per-node 1 --model resnet18 --image-size 32 --warmup 0 --iters 1",
                "DDPBENCH_TEST_FAULT 'bogus' is unknown", "DDPBENCH_TEST_FAULT=bogus "},
        BadCase{"UnknownFlag", "run --no-such-flag", "no-such-flag"},
        BadCase{"UnknownBackend", "run --backend mpi", "--backend 'mpi'"},
        BadCase{"ZeroRanks", "run --nproc-per-node 0", "--nproc-per-node 0"},
        BadCase{"ModelTwice", "run --model resnet18,resnet50,resnet18", "'resnet18' twice"},
        BadCase{"NcclOnTheCpu", "run --device cpu --backend nccl", "--backend nccl needs GPUs"},
        BadCase{"TimeoutTooShort", "run --timeout 0.0001", "--timeout"},
        BadCase{"GlobalBatchNotDivisible", "run --scaling strong --global-batch-size 7 --nproc-per-node 2",
                "does not divide"},
        BadCase{"Fp16OnTheCpu", "run --device cpu --precision fp16", "--precision fp16 needs a GPU"},
        BadCase{"UnknownPrecision", "run --precision half", "--precision 'half'"},
        BadCase{"HeadWithoutFrozenBackbone", "run --head mlp4096", "add --freeze-backbone"},
        BadCase{"VitImageNotAPatchMultiple", "run --model vit_b_16 --image-size 100 --warmup 0",
                "multiple of its patch size 16"},
        BadCase{"AlexnetImageTooSmall", "run --model alexnet --image-size 32",
                "alexnet needs images of at least 63 pixels"},
        BadCase{"ModelsHeadWithoutFrozenBackbone", "models --head mlp4096", "add --freeze-backbone"},
        BadCase{"NoSubcommand", "", "subcommand"},
        // Numbers bounded before they reach libtorch or overflow (environment, then flags).
        BadCase{"WorldSizeWrapsToOne", "run", "WORLD_SIZE=4294967297 is out of range; set it to 1..1048576",
                "WORLD_SIZE=4294967297 RANK=0 "},
        BadCase{"MasterPortWrapsIntoRange", "run", "MASTER_PORT=4294996796 is out of range",
                "WORLD_SIZE=1 RANK=0 MASTER_PORT=4294996796 "},
        BadCase{"SlurmTasksPerNodeBeyondInt", "run",
                "SLURM_TASKS_PER_NODE=99999999999 is out of range; each node's task count must be 1..1048576",
                "SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_STEP_ID=0 SLURM_JOB_ID=7 SLURM_NODEID=0 "
                "SLURM_TASKS_PER_NODE=99999999999 "},
        BadCase{"SlurmTasksPerNodeRepeatedTwoBillionTimes", "run",
                "SLURM_TASKS_PER_NODE=1(x2000000000) is out of range",
                "SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_STEP_ID=0 SLURM_JOB_ID=7 SLURM_NODEID=0 "
                "SLURM_TASKS_PER_NODE='1(x2000000000)' "},
        BadCase{"OmpThreadsBeyondInt", "run --nproc-per-node 1", "OMP_NUM_THREADS=4294967297 is out of range",
                "OMP_NUM_THREADS=4294967297 "},
        BadCase{"TimeoutInfinite", "run --timeout inf", "--timeout inf is out of range; use 1..86400 seconds"},
        BadCase{"TimeoutHuge", "run --timeout 1e300", "--timeout 1e+300 is out of range"},
        BadCase{"TimeoutNan", "run --timeout nan", "--timeout nan is out of range"},
        BadCase{"BatchBeyondBound", "run --batch-size 1000000000",
                "--batch-size 1000000000 is out of range; use 1..16777216"},
        BadCase{"BatchOfTwentyDigits", "run --batch-size 99999999999999999999",
                "--batch-size: 99999999999999999999 is out of range (beyond 64 bits)"},
        BadCase{"BatchInHex", "run --batch-size 0x10", "--batch-size: '0x10' is not a whole number"},
        BadCase{"GlobalBatchBeyondBound", "run --scaling strong --global-batch-size 9000000000000000000",
                "--global-batch-size 9000000000000000000 is out of range"},
        BadCase{"ImageSizeBeyondBound", "run --image-size 100000",
                "--image-size 100000 is out of range; use 32..16384"},
        BadCase{"NumClassesBeyondBound", "run --num-classes 2000000000",
                "--num-classes 2000000000 is out of range; use 2..1000000"},
        BadCase{"WarmupBeyondBound", "run --warmup 2000000000", "--warmup 2000000000 is out of range"},
        BadCase{"NegativeSeed", "run --seed -1", "--seed -1 must be >= 0"},
        BadCase{"SeedOfTwentyDigits", "run --seed 99999999999999999999",
                "--seed: 99999999999999999999 is out of range (beyond 64 bits)"},
        BadCase{"BucketCapInfinite", "run --bucket-cap-mb inf",
                "--bucket-cap-mb 'inf' is not a comma list of sizes in MiB"},
        BadCase{"BucketCapTooLarge", "run --bucket-cap-mb 1,65537",
                "--bucket-cap-mb 65537 is out of range; use a size in (0, 65536] MiB"},
        BadCase{"UnknownCommHook", "run --comm-hook none,fp8", "--comm-hook 'fp8' is unknown"},
        BadCase{"GradAccumZero", "run --grad-accum 0", "--grad-accum 0 is out of range"},
        BadCase{"StaticGraphWithUnused", "run --static-graph --find-unused-parameters",
                "--static-graph already handles unused parameters"},
        BadCase{"SkipUnusedWithoutFindUnused", "run --skip-all-reduce-unused-params",
                "--skip-all-reduce-unused-params skips the unused parameters that --find-unused-parameters finds"},
        BadCase{"ProfileDirIsAFile", "run --profile /dev/null", "--profile '/dev/null'"},
        BadCase{"ProfileDirEmpty", "run --profile ''", "--profile needs a directory"},
        BadCase{"EnvOutputEmpty", "env -o ''", "--output needs a file path"},
        BadCase{"FirstBucketCapNan", "run --first-bucket-cap-mb nan", "--first-bucket-cap-mb nan"},
        BadCase{"GradCheckTolInfinite", "run --grad-check-tol inf", "--grad-check-tol inf is out of range"},
        BadCase{"DatasetSizeBeyondBound", "run --dataset-size 9223372036854775807",
                "--dataset-size 9223372036854775807 is out of range"},
        BadCase{"TooManyRanksPerNode", "run --nproc-per-node 100000",
                "--nproc-per-node 100000 is out of range; use 1..4096"},
        BadCase{"WorldSizesBeyondInt", "run --world-sizes 4294967297", "--world-sizes has 4294967297"},
        BadCase{"InputBatchCannotFitInMemory", "run --device cpu --nproc-per-node 1 --batch-size 16000000",
                "--batch-size 16000000 at 64 px needs 732.4 GiB per rank for the input batch alone"}),
    testutil::ParamName());

// Checked before any rank starts: one line, not one per rank.
// (libgomp prints a warning of its own about the same variable when it loads.)
TEST(Cli, BadThreadCountIsReportedOnce) {
  const auto o = run("OMP_NUM_THREADS=0 " + kBin + " run --nproc-per-node 2");
  EXPECT_EQ(o.code, 2);
  size_t ours = 0;
  for (size_t p = o.err.find("ddpbench: "); p != std::string::npos; p = o.err.find("ddpbench: ", p + 1)) ++ours;
  EXPECT_EQ(ours, 1u) << o.err;
  EXPECT_THAT(o.err, HasSubstr("ddpbench: error: OMP_NUM_THREADS=0 is out of range; set it to 1..4096")) << o.err;
  EXPECT_EQ(o.err.find("[rank"), std::string::npos) << o.err;
}

TEST(Cli, BadInputLeavesAnEarlierResultUntouched) {
  TempDir d;
  const auto json = d.path / "r.json";
  std::ofstream(json) << "earlier result\n";
  const auto o = run(kBin + " run --model nope --json " + json.string());
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(slurp(json), "earlier result\n");
}

// The rows measured before the failure are kept in PATH.partial, marked incomplete; PATH
// itself is not written (it only ever holds a complete run).
TEST(Cli, SelfCheckFailsLoudlyAndKeepsTheRows) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto o = run("DDPBENCH_TEST_FAULT=skew-grad " + kBin + kTiny + " --nproc-per-node 2 --json " + json);
  EXPECT_EQ(o.code, 3) << o.err;
  EXPECT_THAT(o.err, HasSubstr("self-check failed")) << o.err;
  EXPECT_FALSE(fs::exists(json));
  const auto f = read_result_file(json + ".partial");
  EXPECT_FALSE(f.complete);
  EXPECT_EQ(f.rows_planned, 3);
  ASSERT_EQ(f.results.size(), 3u);  // no ddp, 1 rank (passes), 2 ranks (fails)
  EXPECT_TRUE(f.results[1].checks.grad_check_passed.value());
  EXPECT_FALSE(f.results[2].checks.grad_check_passed.value());
  EXPECT_GE(f.results[2].checks.grad_max_abs_diff_across_ranks.value(), 1.0);
}

// --overwrite replaces an earlier complete result only once the new run completes: a run
// that fails leaves it byte for byte, with its own rows in PATH.partial.
TEST(Cli, OverwriteReplacesAResultOnlyWithACompleteOne) {
  TempDir d;
  const auto json = (d.path / "r.json").string(), partial = json + ".partial";
  const std::string tiny = kBin + kTiny + " --nproc-per-node 2 --json " + json;
  auto o = run(tiny);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("Wrote " + json + " (3 rows, schema " + kSchemaVersion + ")"));
  EXPECT_FALSE(fs::exists(partial));
  const std::string first = slurp(json);
  const auto f1 = read_result_file(json);
  EXPECT_TRUE(f1.complete);
  EXPECT_EQ(f1.rows_planned, 3);
  EXPECT_EQ(f1.results.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(first).at("complete"), true);

  o = run(tiny);  // no --overwrite: refused before anything runs
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(o.err, "ddpbench: error: --json '" + json +
                       "' already exists; pass --overwrite to replace it once the new run completes, or choose a new "
                       "name\n");
  EXPECT_EQ(slurp(json), first);

  o = run("DDPBENCH_TEST_FAULT=skew-grad " + tiny + " --overwrite");
  EXPECT_EQ(o.code, 3) << o.err;
  EXPECT_EQ(slurp(json), first);  // the earlier complete result stays
  const auto p = read_result_file(partial);
  EXPECT_FALSE(p.complete);
  EXPECT_EQ(p.rows_planned, 3);
  EXPECT_EQ(p.results.size(), 3u);
  // Rank 0's error line, and, last, where the rows are: the built-in launcher says it once
  // its ranks ended (the ranks' own lines come in either order).
  const std::string note = "ddpbench: note: the 3 row(s) measured so far are in " + partial + " (marked incomplete)\n";
  ASSERT_GE(o.err.size(), note.size()) << o.err;
  EXPECT_EQ(o.err.substr(o.err.size() - note.size()), note) << o.err;
  EXPECT_THAT("\n" + o.err, HasSubstr("\nddpbench: self-check failed: squeezenet1_0 on 2 ranks")) << o.err;

  o = run(tiny + " --overwrite");  // replaces the result and clears the partial rows
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(partial));
  const auto f2 = read_result_file(json);
  EXPECT_TRUE(f2.complete);
  EXPECT_EQ(f2.results.size(), 3u);
  EXPECT_EQ(f2.argv.back(), "--overwrite");
  EXPECT_NE(slurp(json), first);
}

TEST(Cli, NanGradientsFailTheSelfCheck) {
  const auto o = run("DDPBENCH_TEST_FAULT=nan-grad " + kBin + kTiny + " --nproc-per-node 2");
  EXPECT_EQ(o.code, 3) << o.err;
  EXPECT_THAT(o.err, HasSubstr("self-check failed")) << o.err;
}

// Ranks waiting outside a failing group learn why, without a launcher to clean up:
// three ranks started by hand, the group of the first two fails its self-check.
TEST(Cli, WaitingRanksAreToldWhyAGroupFailed) {
  TempDir d;
  const std::string common = "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(find_free_port()) +
                             " WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 DDPBENCH_TEST_FAULT=skew-grad ";
  std::string cmd = "sh -c '";
  for (int r = 0; r < 3; ++r)
    cmd += "(" + common + "RANK=" + std::to_string(r) + " LOCAL_RANK=" + std::to_string(r) + " " + kBin + kTiny +
           " --world-sizes 2 --timeout 60 >" + (d.path / ("out" + std::to_string(r))).string() + " 2>" +
           (d.path / ("err" + std::to_string(r))).string() + "; echo $? >" +
           (d.path / ("rc" + std::to_string(r))).string() + ") & ";
  cmd += "wait'";
  run(cmd);
  EXPECT_EQ(slurp(d.path / "rc0"), "3\n");
  EXPECT_EQ(slurp(d.path / "rc1"), "3\n");
  EXPECT_EQ(slurp(d.path / "rc2"), "1\n");
  const std::string err2 = slurp(d.path / "err2");
  EXPECT_THAT(err2, HasSubstr("benchmark group 'squeezenet1_0/ddp2' failed")) << err2;
  EXPECT_THAT(err2, HasSubstr("gradients differ across ranks")) << err2;
}

// A rank that dies must not hang the others, even without a launcher to clean up:
// two ranks started by hand, rank 1 exits during its first DDP step. Liveness bound: rank 0
// gives up within its --timeout (a collective that cannot finish fails after it), so the
// whole command ends within that plus a generous margin for start-up and the no-DDP
// baseline before it; a hang would run into ctest's 600 s instead.
TEST(Cli, DeadRankMakesTheOthersFailNotHang) {
  constexpr int kTimeoutS = 20, kMarginS = 30;
  TempDir d;
  const int port = find_free_port();
  const std::string common = "MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) +
                             " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 DDPBENCH_TEST_FAULT=exit-rank1 ";
  const std::string timeout = " --timeout " + std::to_string(kTimeoutS);
  const std::string rc0 = (d.path / "rc0").string();
  const auto start = std::chrono::steady_clock::now();
  const auto o = run("sh -c '" + common + "RANK=1 LOCAL_RANK=1 " + kBin + kTiny + timeout + " >/dev/null 2>&1 & " +
                     common + "RANK=0 LOCAL_RANK=0 " + kBin + kTiny + timeout + "; echo $? > " + rc0 + "; wait'");
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int code = std::stoi(slurp(rc0));
  EXPECT_NE(code, 0) << o.err;
  EXPECT_NE(code, 2) << o.err;
  EXPECT_THAT(o.err, HasSubstr("ddpbench: error:")) << o.err;
  EXPECT_LT(elapsed_s, kTimeoutS + kMarginS) << "rank 0 took " << elapsed_s << " s to give up\n" << o.err;
}
}  // namespace
}  // namespace ddpbench
