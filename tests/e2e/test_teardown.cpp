// Every subcommand of the ddpbench binary ends the way engine/run/teardown.hpp says: exit 0
// (or its documented code), and every process it ran (the built-in launcher, each rank, each
// find-max-bs trial) wrote a complete teardown trace (DDPBENCH_TEARDOWN_TRACE) in PyTorch's
// order: the groups still registered destroyed newest first, then the store, then the CUDA
// caching allocator, then the autograd engine, and `main returns` last. The Teardown.* cases
// are what CI's torch 2.6 check runs with the CUDA-enabled build on a machine without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/testutil.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using testutil::Outcome;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";
const std::string kTinyRun = " run " + testutil::kTinyArgs + " --warmup 1 --iters 2";

using Lines = std::vector<std::string>;

// The trace's event: what comes before the first ':' ("group destroyed", "main returns 0").
std::string event_of(const std::string& line) { return line.substr(0, line.find(':')); }

// "#3" of "group created: #3 gloo, ..." (-1 when there is none).
int id_of(const std::string& line) {
  std::smatch m;
  return std::regex_search(line, m, std::regex(": #([0-9]+) ")) ? std::stoi(m[1]) : -1;
}

// What is wrong with `lines` as the trace of a process that ran `command` and exited `code`
// ("" when nothing): the order of engine/run/teardown.hpp, every group created destroyed
// once (those the teardown destroys newest first), every group and store freed where it was
// destroyed or released (last reference), no autograd device thread left running, no step
// failed, `main returns CODE` last.
std::string trace_problem(const Lines& lines, const std::string& command, int code) {
  std::string p;
  const std::string begin = "teardown: " + command + " returned " + std::to_string(code);
  if (lines.empty() || lines.back() != "main returns " + std::to_string(code))
    p += "the last line is not 'main returns " + std::to_string(code) + "'; ";
  // Steps after the teardown begins, in their order; each at most once except groups and stores.
  const std::vector<std::string> steps = {"device synchronized",
                                          "group destroyed",
                                          "store released",
                                          "allocator emptied",
                                          "autograd engine stopped",
                                          "streams flushed",
                                          "main returns " + std::to_string(code)};
  std::set<int> created, destroyed, registered, released;
  int last_teardown_group = 1 << 30;
  size_t step = 0;
  bool begun = false;
  std::map<std::string, int> seen;
  for (const auto& l : lines) {
    if (l.find("failed") != std::string::npos) p += "'" + l + "' says a step failed; ";
    // Nothing but the registry (or the caller destroying it) holds a group when it goes.
    if (event_of(l) == "group destroyed" && l.find("last reference)") == std::string::npos)
      p += "'" + l + "': the group was still held elsewhere; ";
    const std::string e = l.rfind("main returns", 0) == 0 ? l : event_of(l);
    if (l == begin) {
      if (begun) p += "the teardown began twice; ";
      begun = true;
      continue;
    }
    if (!begun) {  // the command's own part: groups and stores made, groups destroyed by it
      if (e == "group created") created.insert(id_of(l));
      else if (e == "store registered") registered.insert(id_of(l));
      else if (e == "group destroyed" && l.find("by destroy_process_group") != std::string::npos)
        destroyed.insert(id_of(l));
      else p += "'" + l + "' before the teardown began; ";
      continue;
    }
    size_t at = steps.size();
    for (size_t i = step; i < steps.size(); ++i)
      if (steps[i] == e) at = i;
    if (at == steps.size()) {
      p += "'" + l + "' out of order (after '" + steps[step] + "'); ";
      continue;
    }
    step = at;
    if (e != "group destroyed" && e != "store released" && ++seen[e] > 1) p += "'" + e + "' twice; ";
    if (e == "group destroyed") {
      const int id = id_of(l);
      if (l.find("by the teardown") == std::string::npos) p += "'" + l + "' not by the teardown; ";
      if (id >= last_teardown_group) p += "group #" + std::to_string(id) + " not newest first; ";
      last_teardown_group = id;
      if (!destroyed.insert(id).second) p += "group #" + std::to_string(id) + " destroyed twice; ";
    }
    if (e == "autograd engine stopped" &&
        (l.find("still running") != std::string::npos || l.find("not all gone") != std::string::npos))
      p += "'" + l + "': a device thread outlived the teardown; ";
    if (e == "store released") {
      if (!released.insert(id_of(l)).second) p += "store #" + std::to_string(id_of(l)) + " released twice; ";
      if (l.find("(last reference)") == std::string::npos) p += "'" + l + "': the store was still held; ";
    }
  }
  if (!begun) p += "no '" + begin + "'; ";
  for (const auto& s : steps)
    if (s != "group destroyed" && s != "store released" && !seen.count(s) && s.rfind("main returns", 0) != 0)
      p += "no '" + s + "'; ";
  if (created != destroyed) p += "the groups destroyed are not the groups created; ";
  if (registered != released) p += "the stores released are not the stores registered; ";
  return p;
}

// Every trace file of DIR, by name.
std::map<std::string, Lines> traces_in(const fs::path& dir) {
  std::map<std::string, Lines> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path());
    Lines lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    out[e.path().filename().string()] = std::move(lines);
  }
  return out;
}

// Runs `args` with DDPBENCH_TEARDOWN_TRACE set; expects exit `code` and that every trace
// written is complete and in order (trace_problem), with exactly one trace for each of
// ranks 0..ranks-1 (<command>-rank<r>-pid<P>.txt) and at least `others` of processes that are
// no rank (<command>-pid<P>.txt: the launcher, a single-process command, find-max-bs trials).
Outcome expect_ends_in_order(const std::string& args, const std::string& command, int code, int ranks, int others,
                             const std::string& env = "") {
  TempDir d;
  const fs::path dir = d.path / "traces";
  fs::create_directories(dir);
  Outcome o = run("DDPBENCH_TEARDOWN_TRACE=" + dir.string() + " " + env + kBin + " " + args);
  EXPECT_EQ(o.code, code) << args << "\nstderr: " << o.err;
  const auto traces = traces_in(dir);
  std::map<int, int> per_rank;
  int not_ranks = 0;
  for (const auto& [name, lines] : traces) {
    std::smatch m;
    if (std::regex_match(name, m, std::regex(command + "-rank([0-9]+)-pid[0-9]+\\.txt"))) ++per_rank[std::stoi(m[1])];
    else if (std::regex_match(name, std::regex(command + "-pid[0-9]+\\.txt"))) ++not_ranks;
    else ADD_FAILURE() << "unexpected trace file " << name;
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    EXPECT_EQ(trace_problem(lines, command, code), "") << name << ":\n" << text;
  }
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(per_rank[r], 1) << "rank " << r << "'s traces";
  EXPECT_EQ(per_rank.size(), static_cast<size_t>(ranks)) << "traces of ranks that should not exist";
  EXPECT_GE(not_ranks, others) << "traces of the processes that are no rank";
  return o;
}

// The checker must reject what the teardown must not do.
TEST(Teardown, TraceCheckerRejectsOtherOrders) {
  const Lines good = {
      "store registered: #1 TCPStore server at 127.0.0.1:5000",
      "group created: #1 gloo, rank 0 of 2",
      "group created: #2 gloo, rank 0 of 2",
      "group destroyed: #1 gloo, rank 0 of 2, by destroy_process_group (x; last reference)",
      "teardown: run returned 0",
      "device synchronized: none (no CUDA device in use)",
      "group destroyed: #2 gloo, rank 0 of 2, by the teardown (x; last reference)",
      "store released: #1 TCPStore server at 127.0.0.1:5000 (last reference)",
      "allocator emptied: none (no CUDA device in use)",
      "autograd engine stopped: no device threads were started",
      "streams flushed: stdout, stderr",
      "main returns 0",
  };
  EXPECT_EQ(trace_problem(good, "run", 0), "");
  EXPECT_NE(trace_problem(good, "run", 1), "");  // another exit code
  auto store_first = good;
  std::swap(store_first[6], store_first[7]);
  EXPECT_NE(trace_problem(store_first, "run", 0), "");
  auto engine_first = good;
  std::swap(engine_first[8], engine_first[9]);
  EXPECT_NE(trace_problem(engine_first, "run", 0), "");
  auto group_left = good;
  group_left.erase(group_left.begin() + 6);
  EXPECT_NE(trace_problem(group_left, "run", 0), "");
  auto held = good;
  held[7] = "store released: #1 TCPStore server at 127.0.0.1:5000 (1 other reference(s) remain)";
  EXPECT_NE(trace_problem(held, "run", 0), "");
  auto thread_left = good;
  thread_left[9] = "autograd engine stopped: 1 device thread(s) still running after 5 s (pt_autograd_0)";
  EXPECT_NE(trace_problem(thread_left, "run", 0), "");
  auto group_held = good;
  group_held[3] = "group destroyed: #1 gloo, rank 0 of 2, by destroy_process_group (x; 1 other reference(s) remain)";
  EXPECT_NE(trace_problem(group_held, "run", 0), "");
  auto cut = good;
  cut.pop_back();
  EXPECT_NE(trace_problem(cut, "run", 0), "");
  Lines two_left = good;  // groups #2 and #3 left to the teardown: #3 must go first
  two_left.insert(two_left.begin() + 3, "group created: #3 gloo, rank 0 of 2");
  two_left.insert(two_left.begin() + 8, "group destroyed: #3 gloo, rank 0 of 2, by the teardown (x; last reference)");
  EXPECT_NE(trace_problem(two_left, "run", 0), "");  // #2 before #3: oldest first
  std::swap(two_left[7], two_left[8]);
  EXPECT_EQ(trace_problem(two_left, "run", 0), "");
}

TEST(Teardown, EverySubcommandExitsZeroRun) { expect_ends_in_order(kTinyRun, "run", 0, 2, 1); }

TEST(Teardown, EverySubcommandExitsZeroRunInference) {
  expect_ends_in_order(kTinyRun + " --mode inference", "run", 0, 2, 1);
}

TEST(Teardown, EverySubcommandExitsZeroRunZero2AndFsdp) {
  expect_ends_in_order(kTinyRun + " --strategy zero2,fsdp", "run", 0, 2, 1);
}

TEST(Teardown, EverySubcommandExitsZeroRunCommHook) {
  expect_ends_in_order(kTinyRun + " --comm-hook powersgd:1", "run", 0, 2, 1);
}

TEST(Teardown, EverySubcommandExitsZeroRunBreakdown) {
  expect_ends_in_order(kTinyRun + " --breakdown --world-sizes 2", "run", 0, 2, 1);
}

TEST(Teardown, EverySubcommandExitsZeroRunProfile) {
  TempDir d;
  expect_ends_in_order(kTinyRun + " --world-sizes 2 --profile-iters 1 --profile " + (d.path / "p").string(), "run", 0,
                       2, 1);
}

TEST(Teardown, EverySubcommandExitsZeroComm) {
  expect_ends_in_order("comm --nproc-per-node 2 --collectives allreduce,barrier -b 1K -e 4K -f 4 -w 1 -n 2", "comm", 0,
                       2, 1);
}

TEST(Teardown, EverySubcommandExitsZeroFindMaxBs) {
  // Each CPU trial is a child process (its own main and teardown): the parent and every trial.
  expect_ends_in_order(
      "find-max-bs --model squeezenet1_0 --image-size 32 --num-classes 10 --memory-limit 96M "
      "--max-batch 4 --steps 1",
      "find-max-bs", 0, 0, 2);
}

TEST(Teardown, EverySubcommandExitsZeroEnvAndModels) {
  expect_ends_in_order("env", "env", 0, 0, 1);
  expect_ends_in_order("models", "models", 0, 0, 1);
}

TEST(Teardown, EverySubcommandExitsZeroReportDiffCheckPredict) {
  expect_ends_in_order("report " + kFix + "weak_cpu.json", "report", 0, 0, 1);
  expect_ends_in_order("diff " + kFix + "weak_cpu.json " + kFix + "weak_cpu.json", "diff", 0, 0, 1);
  expect_ends_in_order("check " + kFix + "gpu_h100.json --reference " + kFix + "reference_h100_pass.json", "check", 0,
                       0, 1);
  expect_ends_in_order("predict " + kFix + "predict_run.json --comm " + kFix + "predict_comm.json --world-sizes 8",
                       "predict", 0, 0, 1);
}

// dataparallel is GPU-only: without a GPU it says so and exits 2, after the same teardown.
TEST(Teardown, DataparallelEndsInOrderWithOrWithoutAGpu) {
  const bool gpu = fs::exists("/dev/nvidia0");
  expect_ends_in_order("dataparallel --model squeezenet1_0 --image-size 32 --batch-size 2 --warmup 1 --iters 2",
                       "dataparallel", gpu ? 0 : 2, 0, 1);
}

// Bad input (exit 2, said by the launcher before any rank starts) ends in the same order.
TEST(Teardown, FailuresEndInOrderToo) { expect_ends_in_order("run --iters 0", "run", 2, 0, 1); }

}  // namespace
}  // namespace ddpbench
