// The fault-and-bad-input suite's table (tests/faults/test_faults.cpp runs it): every scenario,
// what it starts, which fault it injects when, and what must follow.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"
#include "faults/fault_scenario.hpp"

extern char** environ;

namespace ddpbench {
namespace {

namespace fs = std::filesystem;
using testutil::slurp;
using testutil::TempDir;
using namespace fault_tests;

When appears(const std::string& role, double d = 0) { return {When::kAppears, role, "", d}; }
When listening(const std::string& role, double d = 0) { return {When::kListening, role, "", d}; }
When output(const std::string& role, const std::string& text, double d = 0) { return {When::kOutput, role, text, d}; }
Expect exits(std::vector<int> codes, std::vector<std::string> line_has, double per_timeout, double plus_s) {
  Expect e;
  e.codes = std::move(codes);
  e.line_has = std::move(line_has);
  e.per_timeout = per_timeout;
  e.plus_s = plus_s;
  return e;
}
/// Bad input: exit 2 within a few seconds, one line naming the problem, nothing on stdout.
Expect bad_input(const std::string& has) {
  Expect e = exits({2}, {has}, 0, 10);
  e.since_start = true;
  e.stdout_empty = true;
  return e;
}
/// The built-in launcher's stderr: its own line and the lines of its ranks (prefixed
/// "[rank N] " but for rank 0's), every one an error or note of ddpbench.
Expect launcher(std::vector<int> codes, std::vector<std::string> line_has, double per_timeout, double plus_s,
                int min_errors = 1) {
  Expect e = exits(std::move(codes), std::move(line_has), per_timeout, plus_s);
  e.min_errors = min_errors;
  e.max_errors = 2;
  e.max_notes = 2;
  return e;
}
Expect since_start(Expect e) {
  e.since_start = true;
  return e;
}

// The smallest sweep (2 ranks: no ddp, 1 rank, 2 ranks), and longer phases to hit them.
const std::string kTiny = "run " + testutil::kTinyArgs + " --iters 3 --warmup 1 @T";
// Two jobs with the same flags on one port: the first must still listen 3 s after it started
// (with 3 iterations resnet18's tiny sweep can end in 3.3 s on an idle machine; 100 keep it
// going for several seconds more).
const std::string kTinyLonger = "run --model resnet18 --batch-size 2 --image-size 32 --iters 100 --warmup 1 @T";
const std::string kLongWarmup = "run --model resnet18 --batch-size 2 --image-size 32 --iters 3 --warmup 400 @T";
const std::string kLongBaseline =
    "run --model resnet18 --batch-size 2 --image-size 32 --iters 400 --warmup 1 --world-sizes 2 @T";
// A baseline of 60 iterations (2 to 3 s), then the 2-rank DDP group measures 60 without a
// warm-up (the first iteration, with the self-check, is measured): a fault 2 s after the
// baseline row hits the DDP group while it measures (on a slow machine, while it still
// sets up), with one row written.
const std::string kMeasure =
    "run --model resnet18 --batch-size 2 --image-size 32 --iters 60 --warmup 0 --world-sizes 2 @T";

// Phases as seen from outside, on the built-in launcher's stdout (rank 0 prints them).
const std::string kHeader = "* Iterations:";  // rendezvous done, warm-up begins
const std::string kBaselineRow = "no ddp:";   // the baseline row: DDP groups begin

// A hand-launched rank: the torchrun variables for rank r of n on 127.0.0.1:@PORT.
std::string hand(int r, int n) {
  return "RANK=" + std::to_string(r) + " WORLD_SIZE=" + std::to_string(n) + " MASTER_ADDR=127.0.0.1 MASTER_PORT=@PORT";
}
Proc ddp(const std::string& role, const std::string& env, const std::string& args, Expect e, When start = at(0)) {
  Proc p;
  p.role = role;
  p.env = env;
  p.args = args;
  p.expect = std::move(e);
  p.start = std::move(start);
  return p;
}
Proc victim(const std::string& role, const std::string& env, const std::string& args, When start = at(0)) {
  Proc p = ddp(role, env, args, {}, std::move(start));
  p.victim = true;
  return p;
}
Proc foreign_listener(std::string sends = "") {
  Proc p;
  p.role = "listener";
  p.env = "MASTER_PORT=@PORT";
  p.listener = true;
  p.listener_sends = std::move(sends);
  p.victim = true;
  return p;
}
Scenario bad(const std::string& name, const std::string& env, const std::string& args, const std::string& has) {
  return {name, 5, {ddp("rank", env, args, bad_input(has))}, {}};
}

// The launcher's line about a rank killed by a signal (its phase named after "during").
std::vector<std::string> killed(int rank, int sig, const std::string& phase = "") {
  std::vector<std::string> v{"rank " + std::to_string(rank), "was killed by signal " + std::to_string(sig), "during"};
  if (!phase.empty()) v.push_back(phase);
  return v;
}

// Cases of the "nothing lost, nothing silent" rules, one function per area so each stays
// one block: outputs that must not replace inputs or results, the bounded JSON reader and the
// one row validation, ranks that refuse their input and text from the environment, and what
// `--resume` keeps.
void add_output_guard_cases(std::vector<Scenario>& s) {
  const auto with = [](Scenario sc, const std::string& setup, const std::string& after) {
    sc.setup = setup;
    sc.after = after;
    return sc;
  };
  const auto also = [](Scenario sc, const std::string& has) {  // the error line has this too
    sc.procs.front().expect.line_has.push_back(has);
    return sc;
  };
  // No output names an input: by path (normalised), by inode (a hard link), and the files a
  // command puts in an output directory. Refused before anything is written; the input stays.
  const std::string input = "cp @SRC/tests/fixtures/weak_cpu.json @DIR/r.json";
  const std::string kept = "cmp -s @SRC/tests/fixtures/weak_cpu.json @DIR/r.json";
  s.push_back(with(also(bad("OutputReportOverItsInput", "", "report @DIR/r.json -o @DIR/r.json",
                            "/r.json' is the input result file '"),
                        "--output '"),
                   input, kept));
  s.push_back(with(also(bad("OutputReportHtmlOverItsInput", "", "report @DIR/r.json --html @DIR/r.json",
                            "/r.json' is the input result file '"),
                        "--html '"),
                   input, kept));
  s.push_back(with(bad("OutputReportOverItsInputByAnotherPath", "", "report @DIR/r.json -o @DIR/sub/.././r.json",
                       "/sub/.././r.json' is the input result file '"),
                   input + " && mkdir @DIR/sub", kept));
  s.push_back(with(bad("OutputReportOverAHardLinkOfItsInput", "", "report @DIR/r.json -o @DIR/h.json",
                       "the same file under another name: a hard link"),
                   input + " && ln @DIR/r.json @DIR/h.json", kept));
  s.push_back(with(bad("OutputReportThroughALinkedDirectory", "", "report @DIR/d/r.json -o @DIR/alias/r.json",
                       "/alias/r.json' is the input result file '"),
                   "mkdir @DIR/d && cp @SRC/tests/fixtures/weak_cpu.json @DIR/d/r.json && ln -s @DIR/d @DIR/alias",
                   "cmp -s @SRC/tests/fixtures/weak_cpu.json @DIR/d/r.json"));
  s.push_back(with(bad("OutputReportOverItsTargets", "",
                       "report @SRC/tests/fixtures/weak_cpu.json --targets @DIR/t.json -o @DIR/t.json",
                       "/t.json' is the input --targets '"),
                   "cp @SRC/docs/reference/example.json @DIR/t.json",
                   "cmp -s @SRC/docs/reference/example.json @DIR/t.json"));
  s.push_back(with(bad("OutputReportTwoOutputsOneFile", "",
                       "report @SRC/tests/fixtures/weak_cpu.json -o @DIR/out --html @DIR/out", "are one file"),
                   "", "test ! -e @DIR/out"));
  // The plot script report writes into --plots DIR would replace an input kept there.
  s.push_back(with(bad("OutputReportPlotsOverAnInputInTheDirectory", "", "report @DIR/p/plots.gp --plots @DIR/p",
                       "/p/plots.gp' is the input result file '"),
                   "mkdir @DIR/p && cp @SRC/tests/fixtures/weak_cpu.json @DIR/p/plots.gp",
                   "cmp -s @SRC/tests/fixtures/weak_cpu.json @DIR/p/plots.gp"));
  s.push_back(with(bad("OutputPredictJsonOverItsCommInput", "",
                       "predict @SRC/tests/fixtures/predict_run.json --comm @DIR/c.json --json @DIR/c.json",
                       "/c.json' is the input --comm '"),
                   "cp @SRC/tests/fixtures/predict_comm.json @DIR/c.json",
                   "cmp -s @SRC/tests/fixtures/predict_comm.json @DIR/c.json"));
  s.push_back(with(bad("OutputRunJsonOverItsDataset", "",
                       "run --model resnet18 --batch-size 2 --image-size 32 --iters 2 --warmup 1 --world-sizes 1 "
                       "--nproc-per-node 1 --data fashion-mnist --data-dir @DIR/idx --json "
                       "@DIR/idx/train-images-idx3-ubyte.gz",
                       "is the input --data-dir file"),
                   "mkdir @DIR/idx && echo data > @DIR/idx/train-images-idx3-ubyte.gz",
                   "test \"$(cat @DIR/idx/train-images-idx3-ubyte.gz)\" = data"));
  // --json names checked before any rank starts: PATH.partial and the writer's temporary
  // file beside it must fit NAME_MAX, and the path must be UTF-8 (the file records it).
  const std::string long_name = std::string(245, 'a') + ".json";
  s.push_back(with(bad("OutputRunJsonNameTooLongForItsPartial", "", kTiny + " --json @DIR/" + long_name,
                       "(NAME_MAX); pass a shorter name"),
                   "", "! ls @DIR | grep -q json"));  // no PATH, .partial or temporary file
  s.push_back(with(bad("OutputRunJsonNameNotUtf8", "", kTiny + " --json @DIR/r\xff.json", "is not valid UTF-8"), "",
                   "! ls @DIR | grep -q json"));
  {
    // A result that appears at the --json path while the run goes is not replaced: the test
    // hook holds rank 0 after PATH.partial holds every row and before the final rename (a
    // fifo it reads to its end); the setup's writer opens the fifo (so it runs once rank 0 is
    // there), writes race.json, and closes it, which lets rank 0 go on. Exit 1, the file
    // that appeared untouched, the rows in race.json.partial.
    Expect e = since_start(launcher({1}, {"/race.json' appeared while this run was going", "not replaced",
                                          "/race.json.partial'"},
                                    2, 30));
    Scenario sc{"OutputRunResultAppearsBeforeTheFinalRename",
                30,
                {ddp("launcher", "DDPBENCH_TEST_BEFORE_COMMIT=@DIR/gate",
                     kTiny + " --nproc-per-node 1 --json @DIR/race.json", e)},
                {}};
    sc.setup = "mkfifo @DIR/gate && (exec 3>@DIR/gate; echo '{\"precious\":1}' > @DIR/race.json) &";
    sc.teardown = ": <> @DIR/gate";  // lets the writer go when the run never reached the hook
    sc.after =
        "test \"$(cat @DIR/race.json)\" = '{\"precious\":1}' && python3 -c \"import json,sys; "
        "d=json.load(open(sys.argv[1])); sys.exit(0 if d['results'] and d['complete'] is False else 1)\" "
        "@DIR/race.json.partial";
    s.push_back(sc);
  }
}

void add_reader_and_row_cases(std::vector<Scenario>& s) {
  // Files crafted from a fixture by python3: `edit` is Python run on `d`, the fixture's JSON.
  const auto crafted = [](const std::string& out, const std::string& edit, const std::string& fixture = "weak_cpu") {
    return "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); " + edit +
           "; open(sys.argv[2],\"w\").write(json.dumps(d))' @SRC/tests/fixtures/" + fixture + ".json " + out;
  };
  const auto with = [](Scenario sc, const std::string& setup, const std::string& after = "") {
    sc.setup = setup;
    if (!after.empty()) sc.after = sc.after.empty() ? after : sc.after + " && " + after;
    return sc;
  };
  // Exit `code` with no error line (check's MISSING is exit 1 without one) and a warning line
  // on stderr that holds `warning`.
  const auto warns = [](const std::string& name, const std::string& args, int code, const std::string& warning) {
    Expect e = exits({code}, {}, 0, 10);
    e.since_start = true;
    e.min_errors = e.max_errors = 0;
    e.max_notes = 2;  // the row's warning, and at most one more
    Scenario sc{name, 5, {ddp("rank", "", args, e)}, {}};
    sc.after = "grep -qF '" + warning + "' @DIR/rank.err";
    return sc;
  };

  // --- One reader, bounded: 100,000 levels inside config (200 KB) crashed every reader with
  // SIGSEGV (a recursive copy of the section); now exit 2 naming the file, the depth and the limit.
  const std::string deep =
      "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d[\"config\"][\"deep\"]=\"@@\"; "
      "open(sys.argv[2],\"w\").write(json.dumps(d).replace(\"\\\"@@\\\"\", \"[\"*100000+\"]\"*100000))' "
      "@SRC/tests/fixtures/weak_cpu.json ";
  const std::string too_deep = "nested 100002 deep, more than the 512 levels";
  s.push_back(with(bad("ReaderDeepConfigReport", "", "report @DIR/deep.json", too_deep), deep + "@DIR/deep.json"));
  s.push_back(with(bad("ReaderDeepConfigDiff", "", "diff @SRC/tests/fixtures/weak_cpu.json @DIR/deep.json", too_deep),
                   deep + "@DIR/deep.json"));
  s.push_back(with(
      bad("ReaderDeepConfigCheck", "", "check @DIR/deep.json --reference @SRC/docs/reference/example.json", too_deep),
      deep + "@DIR/deep.json"));
  s.push_back(with(bad("ReaderDeepConfigPredict", "", "predict @DIR/deep.json", too_deep), deep + "@DIR/deep.json"));
  s.push_back(
      with(bad("ReaderDeepConfigResume", "", kTiny + " --resume @DIR/deep.json.partial", too_deep),
           "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d[\"complete\"]=False; "
           "d[\"config\"][\"deep\"]=\"@@\"; open(sys.argv[2],\"w\").write(json.dumps(d).replace(\"\\\"@@\\\"\", "
           "\"[\"*100000+\"]\"*100000))' @SRC/tests/fixtures/weak_cpu.json @DIR/deep.json.partial"));
  // 200 MB of small objects took 5.4 GB and 11.7 s (std::bad_alloc under ulimit -v 3000000):
  // refused by the counting pass before a DOM is built.
  s.push_back(with(bad("ReaderHugeArrayOfSmallObjects", "", "report @DIR/big.json",
                       "would already take more than the 512 MiB of memory one input may take"),
                   "python3 -c 'import sys; open(sys.argv[1],\"w\").write(\"[\"+\"{\\\"a\\\":1},\"*25000000+\"{}]\")' "
                   "@DIR/big.json",
                   "rm -f @DIR/big.json"));
  // A value of the wrong type names the file and the field (was nlohmann's "type must be
  // number", exit 1, naming neither, for a resumable file whose environment.world_size is a string).
  s.push_back(with(bad("ReaderFieldOfTheWrongType", "", "report @DIR/w.json",
                       "w.json: malformed result file (results[1].summary.p50_s is a string, not a number)"),
                   crafted("@DIR/w.json", "d[\"results\"][1][\"summary\"][\"p50_s\"]=\"fast\"")));
  s.push_back(with(bad("ReaderResumeFieldOfTheWrongType", "", kTiny + " --resume @DIR/w.json.partial",
                       "w.json.partial: malformed result file (environment.world_size is not a number)"),
                   crafted("@DIR/w.json.partial",
                           "d[\"complete\"]=False; d[\"environment\"][\"world_size\"]=\"two\"; "
                           "[r.update(group=\"resnet18/g\") for r in d[\"results\"]]")));
  // 1e30 ranks were read as -2147483648 (report: "up to 0 ranks").
  s.push_back(with(bad("ReaderEnvironmentOf1e30Ranks", "", "report @DIR/w.json",
                       "(environment.world_size is not an integer in range)"),
                   crafted("@DIR/w.json", "d[\"environment\"][\"world_size\"]=1e30")));

  // --- One row rule for report, check, diff and predict: a row it refuses is named on
  // stderr by file, row and label (report dropped these silently, check passed or listed
  // them, diff recomputed a time).
  const std::string row3 = "@DIR/w.json row 3 (resnet18 1M/2G): ";
  s.push_back(with(warns("ReaderRowP50ZeroReport", "report @DIR/w.json", 0,
                         row3 + "summary.p50_s is 0 s, not a step time in 1e-09..1e+06 s; it is left out"),
                   crafted("@DIR/w.json", "d[\"results\"][2][\"summary\"][\"p50_s\"]=0")));
  s.push_back(with(warns("ReaderRowOfZeroRanksCheck", "check @DIR/w.json --reference @DIR/ref.json", 1,
                         row3 + "world_size is 0, not a rank count in 1..10000000; it is left out"),
                   crafted("@DIR/w.json", "d[\"results\"][2][\"world_size\"]=0") +
                       " && echo '{\"ddpbench_reference\": \"2.0\", \"references\": [{\"device\": \"*\", \"model\": "
                       "\"resnet18\", \"batch_per_rank\": 16, \"image_size\": 64, \"world_size\": 2, \"setup\": "
                       "{\"precision\": \"fp32\"}, \"metric\": \"ex_per_s_per_gpu\", \"value\": 70, \"lower\": -0.1, "
                       "\"upper\": null}]}' > @DIR/ref.json",
                   "grep -q MISSING @DIR/rank.out"));
  // check passed a stored 1e9 ex/s that report showed as 72.7: now neither uses the row.
  s.push_back(with(warns("ReaderRowStoredThroughputDisagreesCheck", "check @DIR/w.json --reference @DIR/ref.json", 1,
                         row3 + "summary.ex_per_s_per_gpu is 1e+09, but batch_per_rank x grad_accum / p50_s is 72.73"),
                   crafted("@DIR/w.json", "d[\"results\"][2][\"summary\"][\"ex_per_s_per_gpu\"]=1e9") +
                       " && echo '{\"ddpbench_reference\": \"2.0\", \"references\": [{\"device\": \"*\", \"model\": "
                       "\"resnet18\", \"batch_per_rank\": 16, \"image_size\": 64, \"world_size\": 2, \"setup\": "
                       "{\"precision\": \"fp32\"}, \"metric\": \"ex_per_s_per_gpu\", \"value\": 70, \"lower\": -0.1, "
                       "\"upper\": null}]}' > @DIR/ref.json",
                   "grep -q MISSING @DIR/rank.out && ! grep -q PASS @DIR/rank.out"));
  s.push_back(with(warns("ReaderRowP50ZeroDiff", "diff @SRC/tests/fixtures/weak_cpu.json @DIR/w.json", 0,
                         row3 + "summary.p50_s is 0 s"),
                   crafted("@DIR/w.json", "d[\"results\"][2][\"summary\"][\"p50_s\"]=0")));
  // A p50 of 1e308 printed 309 digits; a denormal one "inf%" inside a recommendation.
  s.push_back(with(warns("ReaderRowHugeP50Report", "report @DIR/w.json", 0, row3 + "summary.p50_s is 1e+308 s"),
                   crafted("@DIR/w.json", "d[\"results\"][2][\"summary\"][\"p50_s\"]=1e308"),
                   "! grep -qE '[0-9]{40}' @DIR/rank.out"));
  s.push_back(with(warns("ReaderRowDenormalP50Report", "report @DIR/w.json", 0, row3 + "summary.p50_s is "),
                   crafted("@DIR/w.json", "d[\"results\"][2][\"summary\"][\"p50_s\"]=4e-320"),
                   "grep -q 'e-320 s, not a step time' @DIR/rank.err && ! grep -q 'inf%' @DIR/rank.out"));
  s.push_back(with(bad("ReaderNoRowUsable", "", "report @DIR/w.json",
                       "w.json: none of its 4 rows can be used (row 1 (resnet18 no ddp): batch_per_rank is 0"),
                   crafted("@DIR/w.json", "[r.update(batch_per_rank=0) for r in d[\"results\"]]")));
}

void add_rank_and_environment_cases(std::vector<Scenario>& s) {
  // A rank other than 0 that refuses its input says so in one line naming itself, and tells
  // rank 0 through the store, which exits 2 with that line at once: both well within the
  // 30 s --timeout rank 0 would otherwise wait before blaming MASTER_ADDR/MASTER_PORT.
  const std::string tail = " --iters 3 --warmup 1 @T";
  const auto refused_by_rank_one = [&](const std::string& name, const std::string& env1, const std::string& args1,
                                       const std::string& has) {
    return Scenario{name,
                    30,
                    {ddp("rank0", hand(0, 2), kTiny, since_start(exits({2}, {"rank 1 refused its input", has}, 0, 20))),
                     ddp("rank1", hand(1, 2) + env1, args1, since_start(exits({2}, {"error: rank 1: ", has}, 0, 20)))},
                    {}};
  };
  s.push_back(refused_by_rank_one("RankOneRefusesBatchSizeZero", "",
                                  "run --model resnet18 --image-size 32 --batch-size 0" + tail, "--batch-size"));
  s.push_back(refused_by_rank_one("RankOneRefusesUnknownModel", "",
                                  "run --model nosuchnet --image-size 32 --batch-size 2" + tail, "nosuchnet"));
  s.push_back(refused_by_rank_one("RankOneRefusesOmpNumThreadsZero", " OMP_NUM_THREADS=0", kTiny, "OMP_NUM_THREADS"));
  s.push_back(refused_by_rank_one("RankOneRefusesAFlagItCannotParse", "",
                                  "run --model resnet18 --image-size 32 --batch-size two" + tail, "--batch-size"));
  // Alone, a refusing rank still names itself (and exits once nobody took its word).
  s.push_back({"RankOneRefusesAlone",
               30,
               {ddp("rank1", hand(1, 2), "run --model resnet18 --image-size 32 --batch-size 0" + tail,
                    since_start(exits({2}, {"error: rank 1: ", "--batch-size"}, 0, 20)))},
               {}});

  // OMP_NUM_THREADS: 0 is refused by ddpbench's one line only (the OpenMP runtime never sees
  // it, so it prints nothing); OpenMP's nested list "1,1" is valid, its first number used.
  s.push_back(bad("EnvOmpNumThreadsZero", "OMP_NUM_THREADS=0", kTiny, "OMP_NUM_THREADS=0 is out of range"));
  s.push_back(bad("EnvOmpNumThreadsNotAList", "OMP_NUM_THREADS=4,", kTiny, "OMP_NUM_THREADS='4,'"));
  s.push_back({"EnvOmpNumThreadsNestedList",
               60,
               {ddp("launcher", "OMP_NUM_THREADS=1,1", kTiny + " --nproc-per-node 2 --world-sizes 2",
                    since_start(launcher({0}, {}, 0, 90, /*min_errors=*/0)))},
               {}});

  // Text from the environment is made valid UTF-8 where it enters: 300 euro signs (900 bytes)
  // in an NCCL_* variable are cut to 512 bytes between characters, and a stray byte becomes
  // U+FFFD; `env` and `run` record it and exit 0.
  std::string euros;
  for (int i = 0; i < 300; ++i) euros += "\xE2\x82\xAC";
  {
    Expect e = since_start(exits({0}, {}, 0, 30));
    e.min_errors = 0;
    e.max_errors = 0;
    s.push_back({"EnvNcclVariableOfNonAsciiText", 30, {ddp("cmd", "NCCL_SOCKET_IFNAME=" + euros, "env --json", e)}, {}});
    s.push_back({"EnvNcclVariableNotUtf8", 30, {ddp("cmd", "NCCL_DEBUG=IN\xFF" "FO", "env", e)}, {}});
  }
  s.push_back({"RunRecordsNcclVariableOfNonAsciiText",
               60,
               {ddp("launcher", "MASTER_ADDR=127.0.0.1 MASTER_PORT=@PORT NCCL_SOCKET_IFNAME=" + euros,
                    kTiny + " --nproc-per-node 1 @JSON", since_start(launcher({0}, {}, 0, 90, /*min_errors=*/0)))},
               {},
               ResultFile::kFresh,
               ResultState::kComplete});
  // DDPBENCH_JOB_ID is compared as text at the rendezvous: refused before any rank starts.
  s.push_back(bad("EnvJobIdNotUtf8", "DDPBENCH_JOB_ID=job\xFF", kTiny, "DDPBENCH_JOB_ID='job"));
  s.push_back(bad("EnvJobIdTooLong", "DDPBENCH_JOB_ID=" + std::string(300, 'j'), kTiny,
                  "DDPBENCH_JOB_ID is 300 bytes, more than the 256"));
  s.push_back(bad("EnvJobIdNotUtf8HandLaunched", hand(0, 1) + " DDPBENCH_JOB_ID=job\xFF", kTiny, "DDPBENCH_JOB_ID"));

  // Slurm node lists that are not lists: refused with the list and the fix, never read as a
  // host ("[1-3]" would be "1", the address 0.0.0.1).
  const std::string srun = "SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_NTASKS=2 SLURM_NODELIST=";
  s.push_back(bad("EnvSlurmNodelistWithoutName", srun + "[1-3]", kTiny, "node list '[1-3]' is malformed"));
  s.push_back(bad("EnvSlurmNodelistEmptyGroup", srun + "node[]", kTiny, "node list 'node[]' is malformed"));
  s.push_back(bad("EnvSlurmNodelistNegativeItem", srun + "node[-3]", kTiny, "node list 'node[-3]' is malformed"));
  s.push_back(bad("EnvSlurmNodelistDescending", srun + "node[3-1]", kTiny, "node list 'node[3-1]' is malformed"));

  // Rank 0 with a MASTER_ADDR that is not one of this host's addresses cannot serve the
  // rendezvous there: it says so, instead of "another job shares this port" citing itself.
  s.push_back({"RendezvousMasterAddrNotThisHost",
               10,
               {ddp("rank0", "RANK=0 WORLD_SIZE=2 MASTER_ADDR=0.0.0.1 MASTER_PORT=@PORT", kTiny,
                    since_start(exits({2}, {"MASTER_ADDR '0.0.0.1'", "not an address of this host"}, 0, 15)))},
               {}});

  // `check` reads run results: a comm or find-max-bs result is the wrong kind of file (2).
  const auto wrong_kind = [](const std::string& name, const std::string& fixture, const std::string& kind) {
    Scenario sc = bad(name, "", "check @DIR/r.json --reference @SRC/docs/reference/example.json",
                      "is a " + kind + " result; check reads run results");
    sc.setup = "cp @SRC/tests/fixtures/" + fixture + " @DIR/r.json";
    return sc;
  };
  s.push_back(wrong_kind("CheckOfACommResult", "comm_cpu.json", "comm"));
  s.push_back(wrong_kind("CheckOfAFindMaxBsResult", "maxbs_cpu.json", "find-max-bs"));
}

void add_resume_and_models_cases(std::vector<Scenario>& s) {
  // run --resume checks what it keeps. The file is a real one: tests/fixtures/
  // resume_selfcheck_failed.json is the PATH.partial of a 2-rank sweep of these flags whose
  // 2-rank group failed its gradient self-check (DDPBENCH_TEST_FAULT=skew-grad, exit 3), 3 rows
  // of 3 planned; the cases copy it and edit its rows or recorded environment. Each is refused
  // before a rank starts, and the .partial stays as it was.
  const std::string resume = "run " + testutil::kTinyArgs +
                             " --iters 3 --warmup 1 --timeout 60 --nproc-per-node 2 --resume @DIR/r.json.partial";
  const std::string fixture = "@SRC/tests/fixtures/resume_selfcheck_failed.json";
  // The fixture, copied to @DIR/r.json.partial after `edit` (Python; `d` is the file's JSON,
  // `rows` its results) ran on it; @DIR/kept is the copy to compare with after the case.
  const auto partial = [&](const std::string& edit) {
    return "python3 - " + fixture +
           " @DIR/r.json.partial <<'EOF'\nimport json, sys\nd = json.load(open(sys.argv[1]))\n"
           "rows = d['results']\n" +
           edit + "\njson.dump(d, open(sys.argv[2], 'w'), indent=1)\nEOF\ncp @DIR/r.json.partial @DIR/kept";
  };
  const auto case_of = [&](const std::string& name, const std::string& env, const std::string& edit,
                           const std::string& has) {
    Scenario sc = bad(name, env, resume, has);
    sc.setup = partial(edit);
    sc.after = "test ! -e @DIR/r.json && cmp -s @DIR/r.json.partial @DIR/kept";
    return sc;
  };
  // Kept as it is: the failed row would be resumed to a complete file.
  s.push_back(case_of("ResumeKeepsAFailedSelfCheck", "", "", "row 3 (squeezenet1_0/ddp2) failed its self-check"));
  // The 1-rank row twice (the failed one dropped): 3 rows, one of them a copy.
  s.push_back(case_of("ResumeKeepsADuplicatedRow", "", "rows[2] = dict(rows[1])",
                      "rows 2 and 3 are both of group squeezenet1_0/ddp1"));
  s.push_back(case_of("ResumeKeepsARowNotInThePlan", "", "del rows[2]; rows[1]['group'] = 'squeezenet1_0/ddp4'",
                      "row 2 (squeezenet1_0/ddp4) is not one of the 3 benchmark group(s)"));
  // Another launch environment: the rows would mix two measurements in one file. (The
  // harness starts every process with OMP_NUM_THREADS=1, so the stopped run had 2.)
  s.push_back(case_of("ResumeWithAnotherOmpNumThreads", "",
                      "del rows[2]; d['environment']['env']['OMP_NUM_THREADS'] = '2'",
                      "OMP_NUM_THREADS is 2 there and 1 here"));
  s.push_back(case_of("ResumeWithANcclVariableSetNow", "NCCL_ALGO=Tree", "del rows[2]",
                      "NCCL_ALGO is unset there and Tree here"));

  // models counts FLOPs by a forward pass at --image-size: above 1024 it is refused, not run
  // for minutes and gigabytes.
  s.push_back(bad("ModelsImageSizeAboveTheCountedLimit", "", "models --image-size 4096",
                  "--image-size 4096 is above 1024, the largest size models counts at"));
}

}  // namespace

namespace fault_tests {

std::vector<Scenario> scenarios() {
  std::vector<Scenario> s;
  const std::string L = "--nproc-per-node 2";

  // --- Bad launcher environments and flags: one process, exit 2, one line, before any rank.
  s.push_back(bad("EnvRankWithoutWorldSize", "RANK=0", kTiny, "RANK and WORLD_SIZE must be set together"));
  s.push_back(bad("EnvRankBeyondWorld", "RANK=2 WORLD_SIZE=2", kTiny, "rank 2 is outside world size 2"));
  s.push_back(bad("EnvWorldSizeZero", "RANK=0 WORLD_SIZE=0", kTiny, "WORLD_SIZE=0"));
  s.push_back(bad("EnvLocalRankBeyondLocalWorld", "RANK=0 WORLD_SIZE=2 LOCAL_RANK=3 LOCAL_WORLD_SIZE=2", kTiny,
                  "local rank 3 is outside"));
  s.push_back(bad("EnvOmpiRankWithoutSize", "OMPI_COMM_WORLD_RANK=0", kTiny, "OMPI_COMM_WORLD_SIZE"));
  s.push_back(bad("EnvPmixRankWithoutSize", "PMIX_RANK=0", kTiny, "world size is unknown"));
  s.push_back(bad("EnvSrunWithoutNtasks", "SLURM_PROCID=0 SLURM_STEP_ID=0", kTiny, "SLURM_NTASKS"));
  s.push_back(bad("EnvSlurmNodelistMalformed",
                  "SLURM_PROCID=0 SLURM_STEP_ID=0 SLURM_NTASKS=2 SLURM_JOB_NODELIST=node[01-02", kTiny,
                  "node list 'node[01-02' is malformed"));
  s.push_back(bad("EnvMasterPortOutOfRange", "MASTER_PORT=70000", kTiny, "MASTER_PORT=70000"));
  s.push_back(bad("EnvMasterPortNotANumber", "MASTER_PORT=abc", kTiny, "MASTER_PORT='abc'"));
  s.push_back(
      bad("EnvStaleLocalSpawner", "DDPBENCH_LOCAL_SPAWNER=1 RANK=0 WORLD_SIZE=1", kTiny, "DDPBENCH_LOCAL_SPAWNER"));
  s.push_back(bad("FlagNprocUnderTorchrun", hand(0, 1), kTiny + " " + L, "--nproc-per-node is for the built-in"));
  s.push_back(bad("FlagUnknownDevice", "", kTiny + " --device tpu", "--device 'tpu'"));
  s.push_back(bad("FlagUnknownScaling", "", kTiny + " --scaling diagonal", "--scaling 'diagonal'"));
  s.push_back(bad("SubcommandMisspelt", "", "runn --model resnet18", "runn"));

  // --- Input files: one reader (regular files only, opened without blocking, a size cap).
  const std::string result = "cp @SRC/tests/fixtures/gpu_h100.json @DIR/run.json";
  const auto with_setup = [](Scenario sc, const std::string& setup) {
    sc.setup = setup;
    return sc;
  };
  s.push_back(with_setup(bad("InputReferenceIsDevZero", "", "check @DIR/run.json --reference /dev/zero",
                             "'/dev/zero' is not a regular file (a device)"),
                         result));
  s.push_back(with_setup(
      bad("InputReferenceIsFifo", "", "check @DIR/run.json --reference @DIR/fifo", "is not a regular file (a fifo)"),
      result + " && mkfifo @DIR/fifo"));
  s.push_back(with_setup(bad("InputReportOfFifo", "", "report @DIR/fifo", "is not a regular file (a fifo)"),
                         "mkfifo @DIR/fifo"));
  s.push_back(with_setup(
      bad("InputTargetsLargerThanTheCap", "", "report @DIR/run.json --targets @DIR/big.json", "is larger than 256 MiB"),
      result + " && truncate -s 300M @DIR/big.json"));
  // IDX files whose header declares more than the data they hold: 2^39 bytes, 2 GiB in 34
  // bytes (both above the 1 GiB cap), and 512 MiB over a few bytes (truncated).
  const std::string idx =
      "run --model resnet18 --batch-size 2 --image-size 32 --iters 2 --warmup 1 --world-sizes 1 "
      "--nproc-per-node 1 --data fashion-mnist --data-dir @DIR/idx";
  const auto idx_files = [](const std::string& dims) {
    return "mkdir @DIR/idx && python3 -c \"import struct,sys; d=[" + dims +
           "]; open(sys.argv[1],'wb').write(struct.pack('>I',0x803)+b''.join(struct.pack('>I',x) for x in d)+b'\\x01'*"
           "18)\" @DIR/idx/train-images-idx3-ubyte.gz && cd @DIR/idx && touch train-labels-idx1-ubyte.gz "
           "t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz";
  };
  s.push_back(with_setup(bad("InputIdxDeclares2To39Bytes", "", idx, "more than 1024 MiB of data"),
                         idx_files("1<<19,1024,1024")));
  s.push_back(with_setup(bad("InputIdxDeclares2GiBIn34Bytes", "", idx, "more than 1024 MiB of data"),
                         idx_files("2048,1024,1024")));
  s.push_back(with_setup(bad("InputIdxDeclares512MiBOverAFewBytes", "", idx, "truncated"), idx_files("512,1024,1024")));
  // run --resume: the file must be a stopped run's PATH.partial (a complete result, or any
  // other name, is refused before a rank starts).
  s.push_back(with_setup(
      bad("InputResumeOfAFileThatIsNotPartial", "", kTiny + " --resume @DIR/run.json", "is not a PATH.partial file"),
      result));
  s.push_back(with_setup(
      bad("InputResumeOfACompleteResult", "", kTiny + " --resume @DIR/run.json.partial", "it is marked complete"),
      "cp @SRC/tests/fixtures/gpu_h100.json @DIR/run.json.partial"));
  s.push_back(bad("InputResumeOfAMissingFile", "", kTiny + " --resume @DIR/none.json.partial", "cannot read"));
  s.push_back(bad("InputCommSizesBelowOneElement", "", "comm -b 3 -e 3", "moves nothing in allreduce"));
  s.push_back(
      bad("FlagCommHookWithoutDdpRow", "", kTiny + " --strategy zero2 --comm-hook fp16", "add ddp to --strategy"));

  // --- Output paths: the one writer (links, fifos, devices, read-only files refused; every
  // write and the close checked, so a full disk is an error and not a short file).
  s.push_back(with_setup(bad("OutputEnvToFifo", "", "env -o @DIR/fifo", "is not a regular file"), "mkfifo @DIR/fifo"));
  s.push_back(bad("OutputEnvToDevFull", "", "env -o /dev/full", "is not a regular file"));
  s.push_back(with_setup(bad("OutputEnvThroughALink", "", "env -o @DIR/link", "is a symbolic link"),
                         "echo keep > @DIR/target && ln -s @DIR/target @DIR/link"));
  s.push_back(with_setup(bad("OutputEnvToReadOnlyFile", "", "env -o @DIR/ro.json", "read-only"),
                         "touch @DIR/ro.json && chmod 444 @DIR/ro.json"));
  s.push_back(with_setup(
      bad("OutputProfileHoldsEarlierTraces", "", kTiny + " --profile @DIR/p", "holds traces of an earlier run"),
      "mkdir @DIR/p && touch @DIR/p/resnet18-ddp1-rank0.json"));
  {
    Scenario sc = bad("OutputProfileItersZeroLeavesNoDirectory", "", kTiny + " --profile @DIR/p --profile-iters 0",
                      "--profile-iters 0");
    sc.after = "test ! -e @DIR/p";  // refused before the directory is made
    s.push_back(sc);
  }
  // A full file system: a 64 KiB tmpfs, filled.
  const std::string full =
      "mkdir @DIR/full && mount -t tmpfs -o size=64k tmpfs @DIR/full && "
      "(dd if=/dev/zero of=@DIR/full/fill bs=4k >/dev/null 2>&1; true)";
  const auto on_full_disk = [&](const std::string& name, const std::string& args, Expect e) {
    Scenario sc{name, 10, {ddp("cmd", "", args, e)}, {}};
    sc.setup = full;
    sc.teardown = "umount @DIR/full";
    sc.needs_root = true;
    return sc;
  };
  s.push_back(on_full_disk("OutputEnvOnFullDisk", "env -o @DIR/full/env.json",
                           since_start(exits({1}, {"No space left on device"}, 0, 20))));
  s.push_back(on_full_disk("OutputPlotsOnFullDisk", "report @SRC/tests/fixtures/gpu_h100.json --plots @DIR/full/pl",
                           since_start(exits({1}, {"No space left on device"}, 0, 20))));
  {
    Expect e = since_start(launcher({1}, {"during writing", ".partial", "No space left on device"}, 1, 30));
    e.max_errors = 1;
    e.max_notes = 0;
    s.push_back(on_full_disk("OutputCommJsonOnFullDisk",
                             "comm --nproc-per-node 2 -b 1K -e 64K -f 4 @T --json @DIR/full/c.json", e));
  }
  {
    // One line: rank 0's (rank 1, told through the group's gate, leaves it to rank 0).
    Expect e = since_start(launcher({1}, {"not whole JSON", "is the disk full"}, 1, 30));
    e.max_errors = 1;
    s.push_back(on_full_disk("OutputProfileOnFullDisk",
                             "run --model resnet18 --batch-size 2 --image-size 32 --iters 2 --warmup 1 --world-sizes 1 "
                             "--nproc-per-node 2 @T --profile @DIR/full/p",
                             e));
  }

  // --- Child processes end with the process that started them: find-max-bs's trial child
  // (in a process group of its own) when the search is killed or interrupted at the terminal;
  // a trial of 100 steps of resnet50 outlasts the 5 s the suite waits for stray processes.
  for (int sig : {SIGKILL, SIGINT}) {
    Expect e = exits({128 + sig}, {}, 0, 10);
    e.min_errors = 0;
    s.push_back({std::string("ChildFindMaxBsTrialEndsWithItsParentOn") + (sig == SIGKILL ? "Sigkill" : "Sigint"),
                 10,
                 {ddp("search", "", "find-max-bs --model resnet50 --steps 100 --memory-limit 8G", e)},
                 {{at(4), "search", sig}}});
  }

  // --- Rendezvous of hand-launched ranks (torchrun-style environment), --timeout 5.
  s.push_back({"RendezvousRankOneAgainstForeignListener",
               5,
               {foreign_listener(),
                ddp("rank1", hand(1, 2), kTiny, since_start(exits({1}, {"did not answer within --timeout"}, 1, 5)),
                    listening("listener"))},
               {}});
  // A program on MASTER_PORT that answers: text (a web server), or a length prefix of 2 GiB
  // followed by nothing (libtorch's client allocates what a length says, and then waits for it).
  // The store check reads 8 bytes and names the peer.
  const std::string two_gib_length("\x00\x00\x00\x80\x00\x00\x00\x00", 8);
  for (const auto& [name, sends] :
       {std::pair<std::string, std::string>{"Text", "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"},
        {"ATwoGibLength", two_gib_length}})
    s.push_back({"RendezvousRankOneAgainstListenerAnswering" + name,
                 5,
                 {foreign_listener(sends),
                  ddp("rank1", hand(1, 2), kTiny,
                      since_start(exits({2}, {"127.0.0.1:", "is not a PyTorch TCPStore server", "MASTER_PORT"}, 1, 5)),
                      listening("listener"))},
                 {}});
  s.push_back({"RendezvousRankOneWithoutStore",
               5,
               {ddp("rank1", hand(1, 2), kTiny, since_start(exits({1}, {"did not answer within --timeout"}, 1, 5)))},
               {}});
  s.push_back({"RendezvousRankZeroAlone",
               5,
               {ddp("rank0", hand(0, 2), kTiny, since_start(exits({1}, {"did not join"}, 1, 5)))},
               {}});
  s.push_back({"RendezvousRankTwoNeverStarts",
               5,
               {ddp("rank0", hand(0, 3), kTiny, since_start(exits({1}, {"did not join"}, 1, 5))),
                ddp("rank1", hand(1, 3), kTiny, since_start(exits({1}, {}, 1, 8)))},
               {}});
  s.push_back({"RendezvousPortTakenForRankZero",
               5,
               {foreign_listener(), ddp("rank0", hand(0, 2), kTiny, since_start(exits({2}, {"already in use"}, 1, 5)),
                                        listening("listener"))},
               {}});
  s.push_back({"RendezvousRankZeroStoppedWhenListening",
               5,
               {victim("rank0", hand(0, 2), kTiny),
                ddp("rank1", hand(1, 2), kTiny, exits({1}, {"did not answer within --timeout"}, 1, 5),
                    listening("rank0", 0.2))},
               {{listening("rank0"), "rank0", SIGSTOP}}});
  s.push_back({"RendezvousUnresolvableMasterAddrRankZero",
               5,
               {ddp("rank0", "RANK=0 WORLD_SIZE=2 MASTER_ADDR=no-such-host.invalid MASTER_PORT=@PORT", kTiny,
                    since_start(exits({2}, {"does not resolve"}, 1, 5)))},
               {}});
  s.push_back({"RendezvousUnresolvableMasterAddrRankOne",
               5,
               {ddp("rank1", "RANK=1 WORLD_SIZE=2 MASTER_ADDR=no-such-host.invalid MASTER_PORT=@PORT", kTiny,
                    since_start(exits({2}, {"does not resolve"}, 1, 5)))},
               {}});
  s.push_back(
      {"RendezvousFlagsDifferAcrossRanks",
       5,
       {ddp("rank0", hand(0, 2), kTiny, since_start(exits({1, 2}, {}, 1, 8))),
        ddp("rank1", hand(1, 2), kTiny + " --seed 7", since_start(exits({2}, {"other flags than rank 0"}, 1, 5)))},
       {}});
  // Job B's two ranks, started 3 s after job A's on the same address and port: B's rank 0
  // cannot have the port, B's rank 1 claims A's taken rank 1. Once A runs, a rank of a
  // 3-rank job comes to A's port too. Neither may join A, and A runs to its end.
  s.push_back(
      {"TwoJobsOnOnePort",
       20,
       {ddp("a0", hand(0, 2), kTinyLonger, since_start(exits({0}, {}, 2, 30))),
        ddp("a1", hand(1, 2), kTinyLonger, since_start(exits({0}, {}, 2, 30))),
        ddp("b0", hand(0, 2), kTinyLonger, since_start(exits({2}, {"already in use"}, 0, 10)), at(3)),
        ddp("b1", hand(1, 2), kTinyLonger, since_start(exits({2}, {"another job"}, 1, 5)), at(3)),
        ddp("c2", hand(2, 3), kTinyLonger, since_start(exits({2}, {"another job"}, 1, 5)), output("a0", kHeader))},
       {}});
  for (auto& p : s.back().procs)
    if (p.role[0] == 'a') p.expect.min_errors = p.expect.max_errors = 0;

  // --- Hand-launched ranks during measurement: a peer stopped past --timeout, or killed.
  s.push_back({"HandRankStoppedPastTimeout",
               10,
               {ddp("rank0", hand(0, 2), kMeasure, exits({1}, {}, 1, 5)), victim("rank1", hand(1, 2), kMeasure)},
               {{output("rank0", kBaselineRow, 2.0), "rank1", SIGSTOP}}});
  s.push_back({"HandRankKilledDuringMeasurement",
               10,
               {ddp("rank0", hand(0, 2), kMeasure, exits({1}, {}, 1, 5)), victim("rank1", hand(1, 2), kMeasure)},
               {{output("rank0", kBaselineRow, 2.0), "rank1", SIGKILL}}});

  // --- The built-in launcher: a rank stopped or killed in each phase.
  s.push_back({"LauncherRankZeroStoppedWhenListening",
               5,
               {ddp("launcher", "", kTiny + " " + L, launcher({1}, {"did not answer within --timeout"}, 1, 15))},
               {{listening("launcher/rank0"), "launcher/rank0", SIGSTOP}}});
  // A stopped rank cannot say a word and its peers only see a timeout: the launcher names it.
  Expect stopped = launcher({1}, {}, 1, 15);
  stopped.note_has = {"rank 1", "was stopped"};
  s.push_back({"LauncherRankStoppedPastTimeoutInMeasurement",
               10,
               {ddp("launcher", "", kMeasure + " " + L, stopped)},
               {{output("launcher", kBaselineRow, 2.0), "launcher/rank1", SIGSTOP}}});
  s.push_back({"LauncherRankStoppedInDataRunIsNamed",
               8,
               {ddp("launcher", "",
                    "run --data fashion-mnist --model resnet18 --image-size 32 --batch-size 16 --world-sizes 2 "
                    "--epochs 3 --train-limit 2048 --test-limit 200 @T " +
                        L,
                    stopped)},
               {{output("launcher", "* Iterations:", 2.0), "launcher/rank1", SIGSTOP}}});
  for (int r : {0, 1}) {
    const std::string R = std::to_string(r), target = "launcher/rank" + R;
    s.push_back({"LauncherKillRank" + R + "AtStartUp",
                 30,
                 {ddp("launcher", "", kTiny + " " + L, launcher({137}, killed(r, 9), 0, 10))},
                 {{appears(target), target, SIGKILL}}});
    s.push_back({"LauncherKillRank" + R + "AtRendezvous",
                 30,
                 {ddp("launcher", "", kTiny + " " + L, launcher({137}, killed(r, 9), 0, 10))},
                 {{listening("launcher/rank0"), target, SIGKILL}}});
    s.push_back({"LauncherKillRank" + R + "InWarmup",
                 30,
                 {ddp("launcher", "", kLongWarmup + " " + L, launcher({137}, killed(r, 9, "warm-up"), 0, 10))},
                 {{output("launcher", kHeader, 1.0), target, SIGKILL}}});
    s.push_back({"LauncherKillRank" + R + "InBaseline",
                 30,
                 {ddp("launcher", "", kLongBaseline + " " + L, launcher({137}, killed(r, 9, "baseline"), 0, 10))},
                 {{output("launcher", kHeader, 2.5), target, SIGKILL}}});
  }
  // A rank stopped after the result is written (in its teardown): the launcher gives it
  // --timeout from rank 0's exit, names it with its phase, ends it and fails; the result stays.
  // The teardown gate (engine/run/teardown.hpp) holds rank 1 in its teardown until it is
  // stopped: without it rank 1 may have exited before rank 0 says it wrote the result.
  {
    Scenario sc{"LauncherRankStoppedInTeardownIsEndedAfterTimeout",
                5,
                {ddp("launcher", "MASTER_ADDR=127.0.0.1 MASTER_PORT=@PORT DDPBENCH_TEST_TEARDOWN_GATE=@DIR/gate",
                     kTiny + " " + L + " @JSON",
                     launcher({1},
                              {"rank 1", "did not exit within --timeout 5 s of rank 0's exit",
                               "phase: the end of the process (teardown)", "stopped"},
                              1, 10))},
                {{output("launcher", "Wrote ", 0.0), "launcher/rank1", SIGSTOP}},
                ResultFile::kFresh,
                ResultState::kComplete};
    sc.setup = "mkfifo @DIR/gate";
    sc.teardown = ": <> @DIR/gate";  // lets rank 1 go should the launcher not have ended it
    s.push_back(sc);
  }
  // The launcher names the killed rank once (rank 0, which lost its peer, is ended before it
  // says anything) and says where the rows so far are.
  Expect keeps = launcher({137}, killed(1, 9), 0, 10);
  keeps.max_errors = 1;
  keeps.note_has = {"row(s) measured so far are in", ".partial"};
  s.push_back({"LauncherKillRank1InMeasurementKeepsPartial",
               30,
               {ddp("launcher", "", kMeasure + " " + L + " @JSON", keeps)},
               {{output("launcher", kBaselineRow, 2.0), "launcher/rank1", SIGKILL}},
               ResultFile::kEarlier,
               ResultState::kPartial});
  s.push_back({"LauncherSegvRank0InMeasurement",
               30,
               {ddp("launcher", "", kMeasure + " " + L, launcher({139}, killed(0, 11), 0, 10))},
               {{output("launcher", kBaselineRow, 2.0), "launcher/rank0", SIGSEGV}}});

  // --- Signals to the built-in launcher itself, in each phase: it ends, with its ranks.
  struct SpawnerSignal {
    std::string name;
    int sig;
    When when;
    std::string args;
    ResultFile json;
    ResultState result;
  };
  const std::vector<SpawnerSignal> spawner = {
      {"SpawnerSigtermAtStartUp", SIGTERM, appears("launcher/rank1"), kTiny, ResultFile::kNone, ResultState::kAny},
      {"SpawnerSigtermAtRendezvous", SIGTERM, listening("launcher/rank0"), kTiny, ResultFile::kNone, ResultState::kAny},
      {"SpawnerSigtermInWarmup", SIGTERM, output("launcher", kHeader, 1.0), kLongWarmup, ResultFile::kFresh,
       ResultState::kUntouched},
      {"SpawnerSigtermInBaseline", SIGTERM, output("launcher", kHeader, 2.5), kLongBaseline, ResultFile::kNone,
       ResultState::kAny},
      {"SpawnerSigtermInMeasurement", SIGTERM, output("launcher", kBaselineRow, 2.0), kMeasure, ResultFile::kEarlier,
       ResultState::kPartial},
      {"SpawnerSigintInMeasurement", SIGINT, output("launcher", kBaselineRow, 2.0), kMeasure, ResultFile::kFresh,
       ResultState::kPartial},
      {"SpawnerSighupInWarmup", SIGHUP, output("launcher", kHeader, 1.0), kLongWarmup, ResultFile::kNone,
       ResultState::kAny},
      {"SpawnerSigkillAtStartUp", SIGKILL, appears("launcher/rank1"), kTiny, ResultFile::kNone, ResultState::kAny},
      {"SpawnerSigkillInMeasurement", SIGKILL, output("launcher", kBaselineRow, 2.0), kMeasure, ResultFile::kFresh,
       ResultState::kPartial},
  };
  for (const auto& sp : spawner) {
    // A signal the launcher forwards ends it with 128 + that signal; SIGHUP and SIGKILL
    // kill it outright. What it prints is not pinned down, only that it is ddpbench's lines.
    Expect e = launcher({128 + sp.sig}, {}, 0, 10, /*min_errors=*/0);
    s.push_back({sp.name,
                 30,
                 {ddp("launcher", "", sp.args + " " + L + " @JSON", e)},
                 {{sp.when, "launcher", sp.sig}},
                 sp.json,
                 sp.result});
    if (sp.json == ResultFile::kNone) {
      auto& a = s.back().procs[0].args;
      a = a.substr(0, a.find(" @JSON"));
    }
  }

  // --- The built-in launcher's rendezvous port: MASTER_PORT is honoured, and a taken one said so.
  s.push_back({"LauncherHonoursMasterPort",
               30,
               {ddp("launcher", "MASTER_ADDR=127.0.0.1 MASTER_PORT=@PORT", kTiny + " --nproc-per-node 1 @JSON",
                    since_start(launcher({0}, {}, 2, 30, /*min_errors=*/0)))},
               {},
               ResultFile::kFresh,
               ResultState::kComplete});
  s.push_back({"LauncherMasterPortTaken",
               5,
               {foreign_listener(), ddp("launcher", "MASTER_PORT=@PORT", kTiny + " " + L,
                                        since_start(launcher({2}, {"already in use"}, 1, 5)), listening("listener"))},
               {}});
  add_output_guard_cases(s);
  add_reader_and_row_cases(s);
  add_rank_and_environment_cases(s);
  add_resume_and_models_cases(s);
  return s;
}

}  // namespace fault_tests
}  // namespace ddpbench
