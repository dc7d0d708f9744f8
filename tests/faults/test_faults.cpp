// The fault-and-bad-input suite: one table of scenarios, each a set of real
// ddpbench processes (the built-in launcher, or ranks started by hand with a torchrun-style
// environment, or a foreign listener on the rendezvous port), faults injected from the
// outside when a phase is observed (a process appears, the store's port starts to listen,
// a line shows up on stdout, or a fixed delay), and what must follow: each process's exit
// code, its one "ddpbench: error: " line on stderr (never glog lines or C++ traces), how
// long it took to exit (bounded by --timeout plus a few seconds, so a hang is a failure,
// not a ctest timeout), that no process of the case is left behind, and what became of
// the result file.
//
// The binary under test is $DDPBENCH_UNDER_TEST when set, else the one this build made,
// so the same suite measures an older binary ("before" matrix, scripts/fault-matrix.sh).
// With $DDPBENCH_FAULT_MATRIX set, every case appends one JSON line to that file: each
// process's exit code and seconds to exit, stray processes, and whether the case passed.
//
// Bad command lines and bad launcher environments that are checked before a rank starts
// are mostly in tests/e2e/test_cli.cpp's BadInput table (flags); this table adds the
// launcher environments and the few flags that table does not have.
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

extern char** environ;

namespace ddpbench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testutil::slurp;
using testutil::TempDir;

std::string binary_under_test() {
  const char* e = std::getenv("DDPBENCH_UNDER_TEST");
  return e && *e ? std::string(e) : std::string(DDPBENCH_BINARY);
}

/// "--overwrite" when the binary has it (an existing --json file is refused without it),
/// "" for binaries from before the flag, which overwrite without being asked.
const std::string& overwrite_flag() {
  static const std::string flag = [] {
    const auto o = testutil::run(binary_under_test() + " run --help");
    return o.out.find("--overwrite") != std::string::npos ? std::string("--overwrite") : std::string();
  }();
  return flag;
}

// ----------------------------------------------------------------------------- the table

/// When something happens: a start or a fault.
struct When {
  enum Kind {
    kAt,         ///< `delay_s` after the case started
    kAppears,    ///< `delay_s` after process `role` exists (a launcher's rank: once seen in /proc)
    kListening,  ///< `delay_s` after the port in `role`'s MASTER_PORT listens (TCP LISTEN)
    kOutput,     ///< `delay_s` after `role`'s stdout contains `text` (a launcher's rank: its launcher's)
  } kind = kAt;
  std::string role, text;
  double delay_s = 0;
};
When at(double d) { return {When::kAt, "", "", d}; }
When appears(const std::string& role, double d = 0) { return {When::kAppears, role, "", d}; }
When listening(const std::string& role, double d = 0) { return {When::kListening, role, "", d}; }
When output(const std::string& role, const std::string& text, double d = 0) { return {When::kOutput, role, text, d}; }

/// What must become of one process.
struct Expect {
  std::vector<int> codes;               ///< allowed exit codes (128 + signal when killed)
  std::vector<std::string> line_has;    ///< one stderr error line contains all of these
  double per_timeout = 0, plus_s = 10;  ///< exits within per_timeout * --timeout + plus_s ...
  bool since_start = false;             ///< ... of its own start (default: of the first fault, if any)
  int min_errors = 1, max_errors = 1;   ///< "ddpbench: error: " lines on stderr
  int max_notes = 1;                    ///< "ddpbench: note: " lines
  std::vector<std::string> note_has;    ///< one note line contains all of these
  bool stdout_empty = false;
};
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

/// One process the case starts.
struct Proc {
  std::string role;
  std::string env;   ///< "K=V K=V"; @PORT is the case's port
  std::string args;  ///< ddpbench's arguments; @T: --timeout, @JSON: --json <file>, @PORT, @DIR, @SRC
  When start = at(0);
  Expect expect;
  bool listener = false;  ///< a foreign (non-ddpbench) listener on @PORT that never answers
  bool victim = false;    ///< not checked; ended by the harness once the checked ones exited
};

/// One signal, sent when `when` happens to `target`: a role, or "<role>/rankN" for rank N
/// of a built-in launcher started as <role>.
struct Fault {
  When when;
  std::string target;
  int sig;
};

enum class ResultFile {
  kNone,     ///< no --json
  kFresh,    ///< --json to a path that does not exist yet
  kEarlier,  ///< --json to a file holding an earlier result (and --overwrite, where the binary has it)
};
enum class ResultState {
  kAny,
  kUntouched,  ///< PATH absent (kFresh) or unchanged (kEarlier)
  kPartial,    ///< kUntouched, and PATH.partial holds the rows so far, "complete": false
  kComplete,   ///< PATH holds the sweep's rows and the rendezvous port the case chose
};

struct Scenario {
  std::string name;
  double timeout_s;
  std::vector<Proc> procs;
  std::vector<Fault> faults;
  ResultFile json = ResultFile::kNone;
  ResultState result = ResultState::kAny;
  /// Shell commands run before the processes start and after the case (always), with @DIR
  /// (the case's directory) and @SRC (the source tree) replaced: a fifo, a link, a read-only
  /// file, a full file system (a small tmpfs, so `needs_root`).
  std::string setup = "", teardown = "";
  std::string after = "";  ///< a shell test that must succeed once the processes ended (e.g. a path is absent)
  bool needs_root = false;
};

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
Proc foreign_listener() {
  Proc p;
  p.role = "listener";
  p.env = "MASTER_PORT=@PORT";
  p.listener = true;
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

// ------------------------------------------------------------------------ the harness

/// A process seen in /proc that carries this case's marker.
struct Seen {
  pid_t pid, ppid;
  std::map<std::string, std::string> env;  ///< RANK, MASTER_PORT, DDPBENCH_LOCAL_SPAWNER
};

std::vector<Seen> marked_processes(const std::string& marker) {
  std::vector<Seen> out;
  for (const auto& d : fs::directory_iterator("/proc", fs::directory_options::skip_permission_denied)) {
    const std::string name = d.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream in(d.path() / "environ", std::ios::binary);
    if (!in) continue;
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (raw.find(marker) == std::string::npos) continue;
    Seen s{static_cast<pid_t>(std::stol(name)), 0, {}};
    bool marked = false;
    for (size_t p = 0; p < raw.size();) {
      size_t e = raw.find('\0', p);
      if (e == std::string::npos) e = raw.size();
      const std::string kv = raw.substr(p, e - p);
      if (kv == marker) marked = true;
      for (const char* k : {"RANK", "MASTER_PORT", "DDPBENCH_LOCAL_SPAWNER"})
        if (kv.rfind(std::string(k) + "=", 0) == 0) s.env[k] = kv.substr(std::strlen(k) + 1);
      p = e + 1;
    }
    if (!marked) continue;
    const std::string stat = slurp(d.path() / "stat");
    const size_t rp = stat.rfind(')');
    if (rp == std::string::npos) continue;
    std::istringstream ss(stat.substr(rp + 2));
    char state = 0;
    ss >> state >> s.ppid;
    if (state == 'Z' || state == 'X') continue;
    out.push_back(s);
  }
  return out;
}

bool port_listening(int port) {
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream ss(line);
      std::string slot, local, remote, st;
      ss >> slot >> local >> remote >> st;
      const size_t colon = local.rfind(':');
      if (st == "0A" && colon != std::string::npos && std::stoi(local.substr(colon + 1), nullptr, 16) == port)
        return true;
    }
  }
  return false;
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream ss(s);
  for (std::string t; ss >> t;) v.push_back(t);
  return v;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

/// The environment of every started process: this one's, less every variable a launcher
/// or ddpbench reads (a CI job under Slurm, a developer's MASTER_PORT), plus one thread per
/// rank, the case's marker and the process's own variables.
std::vector<std::string> child_env(const std::string& marker, const std::vector<std::string>& own) {
  static const std::vector<std::string> scrub_prefixes = {
      "RANK=",         "WORLD_SIZE=",  "LOCAL_RANK=", "LOCAL_WORLD_SIZE=",
      "MASTER_ADDR=",  "MASTER_PORT=", "GROUP_RANK=", "ROLE_",
      "TORCHELASTIC_", "SLURM_",       "OMPI_",       "PMIX_",
      "PMI_",          "MPI_LOCAL",    "DDPBENCH_",   "OMP_NUM_THREADS="};
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    if (std::none_of(scrub_prefixes.begin(), scrub_prefixes.end(),
                     [&](const std::string& p) { return kv.rfind(p, 0) == 0; }))
      env.push_back(kv);
  }
  // One thread per process, unless the case sets OMP_NUM_THREADS itself (a variable given
  // twice would be read as its first value, by getenv and the OpenMP runtime alike).
  if (std::none_of(own.begin(), own.end(), [](const std::string& kv) { return kv.rfind("OMP_NUM_THREADS=", 0) == 0; }))
    env.push_back("OMP_NUM_THREADS=1");
  env.push_back(marker);
  for (const auto& kv : own) env.push_back(kv);
  return env;
}

/// Starts argv[0] (a path) in its own process group, stdin /dev/null, stdout and stderr to
/// files, no core dumps, default signal actions (a shell's background job ignores SIGINT).
pid_t start_process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& out,
                    const fs::path& err) {
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  const std::string o = out.string(), r = err.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    const int fo = ::open(o.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int fe = ::open(r.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || fo < 0 || fe < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(fo, 1);
    ::dup2(fe, 2);
    struct rlimit no_core {
      0, 0
    };
    ::setrlimit(RLIMIT_CORE, &no_core);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
  }
  return pid;
}

/// A foreign listener on 127.0.0.1:`port`, in a child process of its own: it accepts
/// every connection and reads what comes, but never answers, as `python3 -m http.server`
/// does to the store's binary requests (it waits for a request line that never ends).
pid_t start_silent_listener(int port) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 64) != 0) ::_exit(1);
  std::vector<pollfd> fds{{fd, POLLIN, 0}};
  char buf[4096];
  for (;;) {
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (i == 0) {
        const int c = ::accept(fd, nullptr, nullptr);
        if (c >= 0) fds.push_back({c, POLLIN, 0});
      } else if (::read(fds[i].fd, buf, sizeof buf) <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores it
      }
    }
  }
}

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

/// One process of a running case: started by the case (`spec` set) or a rank its
/// launcher started (seen in /proc).
struct Live {
  const Proc* spec = nullptr;
  std::string role;
  pid_t pid = -1;
  bool started = false, exited = false, hung = false;
  int code = -1;
  Clock::time_point start, end;
  fs::path out, err;
  std::map<std::string, std::string> env;  ///< MASTER_PORT etc. (a launcher's rank: as seen)
};

struct Outcome {
  std::vector<Live> procs;  ///< the case's processes in table order, then launchers' ranks
  std::vector<std::string> failures;
  int stray = 0;
  std::optional<Clock::time_point> first_fault;
  Clock::time_point t0;
};

std::vector<std::string> stderr_lines(const fs::path& p) {
  std::vector<std::string> v;
  std::istringstream ss(slurp(p));
  for (std::string l; std::getline(ss, l);)
    if (!l.empty()) v.push_back(l);
  return v;
}

class Runner {
 public:
  Runner(const Scenario& sc, const fs::path& dir) : sc_(sc), dir_(dir) {
    static int counter = 0;
    marker_ = "DDPBENCH_FAULT_CASE=" + sc.name + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
    port_ = find_free_port();
    json_ = dir / "r.json";
    if (sc.json == ResultFile::kEarlier) std::ofstream(json_) << kEarlier;
  }

  Outcome run() {
    Outcome o;
    o.t0 = Clock::now();
    for (const auto& p : sc_.procs) {
      Live l;
      l.spec = &p;
      l.role = p.role;
      l.out = dir_ / (p.role + ".out");
      l.err = dir_ / (p.role + ".err");
      for (const auto& kv : split_ws(subst(p.env))) {
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) l.env[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      o.procs.push_back(l);
    }
    std::vector<bool> fired(sc_.faults.size(), false);
    std::map<std::string, Clock::time_point> since;  // role -> when its trigger condition first held
    const double hard_base = 3 * sc_.timeout_s + 30;
    int tick = 0;
    for (;; ++tick) {
      const auto now = Clock::now();
      // Exits of the processes the case started.
      for (auto& l : o.procs) {
        if (!l.spec || !l.started || l.exited) continue;
        int st = 0;
        if (::waitpid(l.pid, &st, WNOHANG) == l.pid) {
          l.exited = true;
          l.end = Clock::now();
          l.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
      }
      // Ranks of launchers, as /proc shows them (every tick while a trigger waits for one).
      const bool want_scan = tick % 5 == 0 || waiting_for_rank(o, fired);
      if (want_scan) scan(o);
      // Starts.
      for (auto& l : o.procs)
        if (l.spec && !l.started && due(l.spec->start, o, since, "start:" + l.role)) start(l);
      // Faults.
      for (size_t i = 0; i < sc_.faults.size(); ++i) {
        if (fired[i]) continue;
        const Fault& f = sc_.faults[i];
        if (!due(f.when, o, since, "fault:" + std::to_string(i))) continue;
        Live* t = find(o, f.target);
        if (!t || t->exited) continue;
        ::kill(t->pid, f.sig);
        fired[i] = true;
        if (!o.first_fault) o.first_fault = Clock::now();
      }
      // Hard deadline: a process that outlives it is hung; kill its group.
      for (auto& l : o.procs) {
        if (!l.spec || !l.started || l.exited || l.hung || l.spec->victim) continue;
        double limit = hard_base;
        if (o.first_fault) limit = std::max(limit, secs(*o.first_fault - l.start) + bound(l.spec->expect) + 15);
        if (secs(now - l.start) > limit) {
          ::kill(-l.pid, SIGKILL);
          ::kill(l.pid, SIGKILL);
          l.hung = true;
        }
      }
      // Done when every checked process exited and nothing else can start.
      bool busy = false;
      for (const auto& l : o.procs) {
        if (!l.spec || l.spec->victim) continue;
        if (l.started && !l.exited) busy = true;
        if (!l.started && !can_never_start(l, o) && secs(now - o.t0) < hard_base) busy = true;
      }
      if (!busy) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (size_t i = 0; i < sc_.faults.size(); ++i)
      if (!fired[i])
        o.failures.push_back("fault " + std::to_string(i) + " (signal " + std::to_string(sc_.faults[i].sig) + " to " +
                             sc_.faults[i].target + ") was never sent: its phase was not reached");
    for (const auto& l : o.procs)
      if (l.spec && !l.spec->victim && !l.started) o.failures.push_back(l.role + " was never started");
    // Victims (the stopped rank, the foreign listener) end now; then what is left is stray.
    for (auto& l : o.procs) {
      if (!l.spec || !l.spec->victim || !l.started || l.exited) continue;
      ::kill(-l.pid, SIGKILL);
      ::kill(l.pid, SIGKILL);
      ::kill(l.pid, SIGCONT);
      int st = 0;
      ::waitpid(l.pid, &st, 0);
      l.exited = true;
      l.end = Clock::now();
      l.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    const auto settle = Clock::now() + std::chrono::seconds(5);
    std::vector<Seen> left;
    for (;;) {
      scan(o);
      left = marked_processes(marker_);
      if (left.empty() || Clock::now() > settle) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    o.stray = static_cast<int>(left.size());
    for (const auto& s : left) {
      ::kill(s.pid, SIGKILL);
      ::kill(s.pid, SIGCONT);
    }
    for (int i = 0; i < 100 && !marked_processes(marker_).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    check(o);
    return o;
  }

  int port() const { return port_; }
  /// A setup or teardown command with @DIR and @SRC replaced.
  std::string shell(const std::string& cmd) const { return subst(cmd); }
  /// Seconds a process may take to exit, from its start or the case's first fault.
  double bound(const Expect& e) const { return e.per_timeout * sc_.timeout_s + e.plus_s; }
  const fs::path& json() const { return json_; }
  static constexpr const char* kEarlier = "{\"earlier\": \"result\"}\n";

 private:
  const Scenario& sc_;
  fs::path dir_, json_;
  std::string marker_;
  int port_ = 0;

  std::string subst(const std::string& s) const {
    std::string r = replace_all(s, "@PORT", std::to_string(port_));
    r = replace_all(r, "@DIR", dir_.string());
    r = replace_all(r, "@SRC", DDPBENCH_SOURCE_DIR);
    r = replace_all(r, "@T", "--timeout " + std::to_string(static_cast<int>(sc_.timeout_s)));
    // An earlier result is replaced only with --overwrite, once a run completes.
    const std::string ow = sc_.json == ResultFile::kEarlier && !overwrite_flag().empty() ? " " + overwrite_flag() : "";
    return replace_all(r, "@JSON", "--json " + json_.string() + ow);
  }

  void start(Live& l) {
    std::vector<std::string> argv, own;
    for (const auto& [k, v] : l.env) own.push_back(k + "=" + v);
    l.start = Clock::now();
    l.started = true;
    if (l.spec->listener) {
      l.pid = start_silent_listener(port_);
      return;
    }
    argv = {binary_under_test()};
    for (const auto& a : split_ws(subst(l.spec->args))) argv.push_back(a);
    l.pid = start_process(argv, child_env(marker_, own), l.out, l.err);
  }

  static Live* find(Outcome& o, const std::string& role) {
    for (auto& l : o.procs)
      if (l.role == role && l.started) return &l;
    return nullptr;
  }

  // A launcher's ranks: marked processes whose parent is a process the case started.
  void scan(Outcome& o) {
    const auto seen = marked_processes(marker_);
    const auto now = Clock::now();
    std::set<pid_t> alive;
    for (const auto& s : seen) alive.insert(s.pid);
    for (const auto& s : seen) {
      if (!s.env.count("DDPBENCH_LOCAL_SPAWNER") || !s.env.count("RANK")) continue;
      const Live* parent = nullptr;
      for (const auto& l : o.procs)
        if (l.spec && l.started && l.pid == s.ppid) parent = &l;
      if (!parent) continue;
      bool known = false;
      for (const auto& l : o.procs) known = known || (!l.spec && l.pid == s.pid);
      if (known) continue;
      Live l;
      l.role = parent->role + "/rank" + s.env.at("RANK");
      l.pid = s.pid;
      l.started = true;
      l.start = now;
      l.env = s.env;
      o.procs.push_back(l);
    }
    for (auto& l : o.procs)
      if (!l.spec && !l.exited && !alive.count(l.pid)) {
        l.exited = true;
        l.end = now;
      }
  }

  bool waiting_for_rank(const Outcome& o, const std::vector<bool>& fired) const {
    auto unseen = [&](const std::string& role) {
      if (role.find('/') == std::string::npos) return false;
      for (const auto& l : o.procs)
        if (l.role == role) return false;
      return true;
    };
    for (size_t i = 0; i < sc_.faults.size(); ++i)
      if (!fired[i] && (unseen(sc_.faults[i].when.role) || unseen(sc_.faults[i].target))) return true;
    return false;
  }

  bool condition(const When& w, Outcome& o) {
    switch (w.kind) {
      case When::kAt: return true;
      case When::kAppears: {
        const Live* l = find(o, w.role);
        return l && !l->exited;
      }
      case When::kListening: {
        const Live* l = find(o, w.role);
        if (!l || l->exited || !l->env.count("MASTER_PORT")) return false;
        return port_listening(std::atoi(l->env.at("MASTER_PORT").c_str()));
      }
      case When::kOutput: {
        const std::string role = w.role.substr(0, w.role.find('/'));
        const Live* l = find(o, role);
        return l && slurp(l->out).find(w.text) != std::string::npos;
      }
    }
    return false;
  }

  // True once `w`'s condition has held for its delay (kAt: since the case started).
  bool due(const When& w, Outcome& o, std::map<std::string, Clock::time_point>& since, const std::string& key) {
    const auto now = Clock::now();
    if (w.kind == When::kAt) return secs(now - o.t0) >= w.delay_s;
    if (!since.count(key)) {
      if (!condition(w, o)) return false;
      since[key] = now;
    }
    return secs(now - since[key]) >= w.delay_s;
  }

  // A process whose start waits for another that has exited (or that never started) will not start.
  bool can_never_start(const Live& l, const Outcome& o) const {
    const When& w = l.spec->start;
    if (w.kind == When::kAt) return false;
    const std::string role = w.role.substr(0, w.role.find('/'));
    for (const auto& p : o.procs)
      if (p.role == role) return p.exited;
    return true;
  }

  void check(Outcome& o) const {
    static const std::regex clean(R"(^(\[rank [0-9]+\] )?ddpbench: (error|note|warning): .*)");
    // run's progress on stderr when it is not a terminal, one line per row (core/launch/progress):
    // ddpbench's own, not an error; skipped here so the error line stays the one counted.
    static const std::regex progress(R"(^(\[rank [0-9]+\] )?\[[0-9]+/[0-9]+\] .*)");
    auto& f = o.failures;
    for (const auto& l : o.procs) {
      if (!l.spec || l.spec->victim || !l.started) continue;
      const Expect& e = l.spec->expect;
      const std::string who = l.role + ": ";
      if (l.hung) {
        f.push_back(who + "hung, killed at " + num(secs(l.end - l.start)) + " s");
        continue;
      }
      if (std::find(e.codes.begin(), e.codes.end(), l.code) == e.codes.end())
        f.push_back(who + "exit code " + std::to_string(l.code) + ", expected " + join(e.codes));
      const auto lines = stderr_lines(l.err);
      int errors = 0, notes = 0;
      bool found = e.line_has.empty(), note_found = e.note_has.empty();
      for (const auto& line : lines) {
        if (std::regex_match(line, progress)) continue;
        if (!std::regex_match(line, clean)) {
          f.push_back(who + "stderr line that is not ddpbench's error or note: " + line.substr(0, 300));
          break;
        }
        if (line.find("ddpbench: error: ") != std::string::npos) {
          ++errors;
          found = found || std::all_of(e.line_has.begin(), e.line_has.end(),
                                       [&](const std::string& h) { return line.find(h) != std::string::npos; });
        } else {
          ++notes;
          note_found = note_found || std::all_of(e.note_has.begin(), e.note_has.end(), [&](const std::string& h) {
                         return line.find(h) != std::string::npos;
                       });
        }
      }
      if (errors < e.min_errors || errors > e.max_errors)
        f.push_back(who + std::to_string(errors) + " error line(s) on stderr, expected " +
                    std::to_string(e.min_errors) +
                    (e.max_errors != e.min_errors ? ".." + std::to_string(e.max_errors) : ""));
      if (notes > e.max_notes) f.push_back(who + std::to_string(notes) + " note line(s) on stderr");
      if (!note_found) {
        std::string want;
        for (const auto& h : e.note_has) want += (want.empty() ? "'" : ", '") + h + "'";
        f.push_back(who + "no note line contains " + want);
      }
      if (!found) {
        std::string want;
        for (const auto& h : e.line_has) want += (want.empty() ? "'" : ", '") + h + "'";
        f.push_back(who + "no error line contains " + want);
      }
      const auto from = (!e.since_start && o.first_fault) ? *o.first_fault : l.start;
      const double took = secs(l.end - from);
      if (took > bound(e))
        f.push_back(who + "exited " + num(took) + " s after its " + (from == l.start ? "start" : "fault") + ", bound " +
                    num(bound(e)) + " s");
      if (e.stdout_empty && !slurp(l.out).empty()) f.push_back(who + "wrote to stdout: " + slurp(l.out).substr(0, 200));
    }
    if (o.stray > 0) f.push_back(std::to_string(o.stray) + " process(es) of the case still running 5 s after the end");
    check_result(f);
  }

  void check_result(std::vector<std::string>& f) const {
    if (sc_.result == ResultState::kAny) return;
    const bool exists = fs::exists(json_);
    if (sc_.result == ResultState::kComplete) {
      try {
        const auto j = nlohmann::json::parse(slurp(json_));
        if (j.at("results").empty()) f.push_back("result file: no rows");
        const auto& rdzv = j.at("environment").at("rendezvous");
        if (rdzv.at("master_port") != port_)
          f.push_back("result file: rendezvous on port " + rdzv.at("master_port").dump() + ", MASTER_PORT was " +
                      std::to_string(port_));
      } catch (const std::exception& ex) {
        f.push_back(std::string("result file: not a complete result (") + ex.what() + ")");
      }
      return;
    }
    if (sc_.json == ResultFile::kFresh && exists) f.push_back("result file: written by a run that did not finish");
    if (sc_.json == ResultFile::kEarlier && slurp(json_) != kEarlier)
      f.push_back("result file: the earlier result was overwritten by a run that did not finish");
    if (sc_.result == ResultState::kPartial) {
      const fs::path partial = json_.string() + ".partial";
      if (!fs::exists(partial)) {
        f.push_back("result file: no " + partial.filename().string() + " with the rows measured before the fault");
        return;
      }
      try {
        const auto j = nlohmann::json::parse(slurp(partial));
        if (j.value("complete", true) != false) f.push_back("result file: .partial does not say \"complete\": false");
        if (j.value("results", nlohmann::json::array()).empty()) f.push_back("result file: .partial has no rows");
      } catch (const std::exception& ex) {
        f.push_back(std::string(".partial is not JSON: ") + ex.what());
      }
    }
  }

  static std::string num(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", x);
    return b;
  }
  static std::string join(const std::vector<int>& v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : " or ") + std::to_string(x);
    return s;
  }
};

void append_matrix_line(const Scenario& sc, const Outcome& o, const Runner& runner) {
  const char* path = std::getenv("DDPBENCH_FAULT_MATRIX");
  if (!path || !*path) return;
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& l : o.procs) {
    if (!l.started) continue;
    nlohmann::json p;
    p["role"] = l.role;
    p["code"] = l.spec ? nlohmann::json(l.code) : nlohmann::json(nullptr);  // a launcher's rank: its launcher reaps it
    p["seconds"] = l.exited ? nlohmann::json(std::round(secs(l.end - l.start) * 10) / 10) : nlohmann::json(nullptr);
    p["after_fault"] = l.exited && o.first_fault && l.end > *o.first_fault
                           ? nlohmann::json(std::round(secs(l.end - *o.first_fault) * 10) / 10)
                           : nlohmann::json(nullptr);
    p["hung"] = l.hung;
    if (l.spec && !l.spec->victim && l.exited) {  // what the time bound was checked against
      const Expect& e = l.spec->expect;
      const bool from_fault = !e.since_start && o.first_fault;
      p["bound_s"] = runner.bound(e);
      p["measured_s"] = std::round(secs(l.end - (from_fault ? *o.first_fault : l.start)) * 10) / 10;
    }
    p["victim"] = l.spec ? l.spec->victim : false;
    if (l.spec && !l.spec->listener) {
      const auto lines = stderr_lines(l.err);
      p["stderr_lines"] = lines.size();
      p["first_line"] = lines.empty() ? "" : lines.front().substr(0, 300);
      std::string error_line;  // the first of ddpbench's own error lines, if any
      for (const auto& x : lines)
        if (error_line.empty() && x.find("ddpbench: error: ") != std::string::npos) error_line = x.substr(0, 300);
      p["error_line"] = error_line;
    }
    procs.push_back(p);
  }
  nlohmann::json line = {{"case", sc.name},           {"binary", fs::path(binary_under_test()).filename().string()},
                         {"timeout_s", sc.timeout_s}, {"procs", procs},
                         {"stray", o.stray},          {"passed", o.failures.empty()},
                         {"failures", o.failures}};
  std::ofstream(path, std::ios::app) << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

/// Failure messages name the case, not the struct's bytes.
void PrintTo(const Scenario& sc, std::ostream* os) { *os << sc.name; }

class Faults : public ::testing::TestWithParam<Scenario> {};

TEST_P(Faults, EndsAsExpected) {
  const Scenario& sc = GetParam();
  if (sc.needs_root && ::geteuid() != 0) GTEST_SKIP() << "needs root (it mounts a small tmpfs)";
  TempDir dir;
  Runner runner(sc, dir.path);
  struct Teardown {
    const Runner& r;
    const std::string& cmd;
    ~Teardown() {
      if (!cmd.empty()) (void)std::system(r.shell(cmd).c_str());
    }
  } teardown{runner, sc.teardown};
  if (!sc.setup.empty()) ASSERT_EQ(std::system(runner.shell(sc.setup).c_str()), 0) << runner.shell(sc.setup);
  Outcome o = runner.run();
  if (!sc.after.empty() && std::system(runner.shell(sc.after).c_str()) != 0)
    o.failures.push_back("after the case, '" + sc.after + "' failed");
  append_matrix_line(sc, o, runner);
  for (const auto& f : o.failures) ADD_FAILURE() << f;
  if (!o.failures.empty()) {
    std::string log;
    for (const auto& l : o.procs) {
      if (!l.spec || l.spec->listener) continue;
      log += "--- " + l.role + " (exit " + std::to_string(l.code) + ", " + std::to_string(secs(l.end - l.start)) +
             " s) stderr:\n" + slurp(l.err).substr(0, 3000);
    }
    std::cerr << log;
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Faults, ::testing::ValuesIn(scenarios()), testutil::ParamName());

}  // namespace
}  // namespace ddpbench
