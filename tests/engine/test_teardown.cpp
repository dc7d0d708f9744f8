// The end of a rank (engine/run/teardown.hpp) with real ranks over Gloo on 127.0.0.1: each
// rank of tests/engine/teardown_worker.cpp makes three groups, destroys the second itself and
// leaves the others to the teardown. Its trace must be the order PyTorch documents for
// torch.distributed.destroy_process_group (torch/distributed/distributed_c10d.py: the groups
// still registered shut down newest first, then the store), then the CUDA caching allocator,
// then the autograd engine; and what the trace claims must have happened: the rank has fewer
// threads after the teardown (Gloo's worker threads joined) and rank 0's store port refuses
// connections (its TCPStore server is gone).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/gloo_skip.hpp"
#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"

namespace fs = std::filesystem;

namespace ddpbench {
namespace {

using testutil::TempDir;

struct Rank {
  std::vector<std::string> trace;  ///< DDPBENCH_TEARDOWN_TRACE's file of this rank, line by line
  nlohmann::json result;           ///< the worker's rank<r>.json
};

struct Job {
  int rc = -1;
  std::vector<Rank> ranks;
};

// Starts `n` teardown_worker ranks in `mode` with DDPBENCH_TEARDOWN_TRACE set, and reads what
// each left: its one trace file (teardown-worker-rank<r>-pid<P>.txt) and its result.
Job run_job(const std::string& mode, int n) {
  TempDir d;
  SpawnOptions o;
  o.nproc = n;
  o.argv = {DDPBENCH_TEARDOWN_WORKER_PATH, mode, d.path.string()};
  o.extra_env = {{"OMP_NUM_THREADS", "1"}, {"DDPBENCH_TEARDOWN_TRACE", d.path.string()}};
  Job job;
  job.rc = spawn_local_ranks(o);
  for (int r = 0; r < n; ++r) {
    Rank rank;
    const std::regex name("teardown-worker-rank" + std::to_string(r) + "-pid[0-9]+\\.txt");
    int files = 0;
    for (const auto& e : fs::directory_iterator(d.path)) {
      if (!std::regex_match(e.path().filename().string(), name)) continue;
      ++files;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);) rank.trace.push_back(line);
    }
    EXPECT_EQ(files, 1) << "rank " << r << " wrote " << files << " trace file(s)";
    std::ifstream in(d.path / ("rank" + std::to_string(r) + ".json"));
    EXPECT_TRUE(in.good()) << "rank " << r << " wrote no result";
    if (in.good()) in >> rank.result;
    job.ranks.push_back(std::move(rank));
  }
  return job;
}

// The trace of rank `rank` of `world`, written by hand from PyTorch's order, one regular
// expression per line. How a group is shut down depends on the torch (compat::shutdown), so
// only "last reference" is fixed there: nothing but the registry held it.
std::vector<std::string> expected_trace(int rank, int world, int code) {
  const std::string me = "gloo, rank " + std::to_string(rank) + " of " + std::to_string(world);
  const std::string freed = R"( \([^;]*; last reference\))";
  const std::string c = std::to_string(code);
  return {
      std::string("store registered: #1 TCPStore ") + (rank == 0 ? "server at" : "client of") +
          R"( 127\.0\.0\.1:[0-9]+)",
      "group created: #1 " + me,
      "group created: #2 " + me,
      "group created: #3 " + me,
      "group destroyed: #2 " + me + ", by destroy_process_group" + freed,  // the worker's own
      "teardown: teardown-worker returned " + c,
      R"(device synchronized: none \(no CUDA device in use\))",
      "group destroyed: #3 " + me + ", by the teardown" + freed,  // newest first
      "group destroyed: #1 " + me + ", by the teardown" + freed,
      R"(store released: #1 TCPStore .* \(last reference\))",  // after every group
      R"(allocator emptied: none \(no CUDA device in use\))",
      // Every device thread gone (torch 2.6's CUDA build starts pt_autograd_0 even without a GPU).
      R"(autograd engine stopped: (no device thread.*|[0-9]+ device thread\(s\) exited.*))",
      "streams flushed: stdout, stderr",
      "main returns " + c,
  };
}

// Line by line against expected_trace; "" when every line matches.
std::string trace_mismatch(const std::vector<std::string>& trace, const std::vector<std::string>& expected) {
  std::string out;
  for (size_t i = 0; i < std::max(trace.size(), expected.size()); ++i) {
    const std::string got = i < trace.size() ? trace[i] : "(missing)";
    const std::string want = i < expected.size() ? expected[i] : "(nothing)";
    if (i >= trace.size() || i >= expected.size() || !std::regex_match(got, std::regex(want)))
      out += "line " + std::to_string(i + 1) + ": '" + got + "' does not match '" + want + "'\n";
  }
  return out;
}

void expect_torn_down_in_order(const Job& job, int world, int code) {
  ASSERT_EQ(job.ranks.size(), static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    const Rank& rank = job.ranks[static_cast<size_t>(r)];
    std::string all;
    for (const auto& l : rank.trace) all += l + "\n";
    EXPECT_EQ(trace_mismatch(rank.trace, expected_trace(r, world, code)), "") << "rank " << r << "'s trace:\n" << all;
    ASSERT_TRUE(rank.result.is_object()) << "rank " << r;
    // Independent of the trace: Gloo's worker threads of groups #1 and #3 were joined.
    EXPECT_LT(rank.result.at("threads_after").get<int>(), rank.result.at("threads_before").get<int>())
        << "rank " << r << ": the teardown ended no thread";
  }
  // Rank 0 served the store: nothing listens on its port once the store was released.
  EXPECT_TRUE(job.ranks[0].result.value("store_port_refused", false));
}

TEST(Teardown, RanksEndInTheOrderDestroyProcessGroupDocuments) {
  DDPBENCH_SKIP_WITHOUT_GLOO();
  const Job job = run_job("ok", 2);
  EXPECT_EQ(job.rc, 0);
  expect_torn_down_in_order(job, 2, 0);
}

TEST(Teardown, AFailedRankIsTornDownInTheSameOrder) {
  DDPBENCH_SKIP_WITHOUT_GLOO();
  const Job job = run_job("fail", 2);
  EXPECT_EQ(job.rc, 1);
  expect_torn_down_in_order(job, 2, 1);
}

// The checker itself: the same trace with the store released before the last group, or with
// the groups oldest first, must not pass.
TEST(Teardown, TheExpectedOrderRejectsAnotherOrder) {
  const std::vector<std::string> good = {
      "store registered: #1 TCPStore server at 127.0.0.1:5000",
      "group created: #1 gloo, rank 0 of 2",
      "group created: #2 gloo, rank 0 of 2",
      "group created: #3 gloo, rank 0 of 2",
      "group destroyed: #2 gloo, rank 0 of 2, by destroy_process_group (x; last reference)",
      "teardown: teardown-worker returned 0",
      "device synchronized: none (no CUDA device in use)",
      "group destroyed: #3 gloo, rank 0 of 2, by the teardown (x; last reference)",
      "group destroyed: #1 gloo, rank 0 of 2, by the teardown (x; last reference)",
      "store released: #1 TCPStore server at 127.0.0.1:5000 (last reference)",
      "allocator emptied: none (no CUDA device in use)",
      "autograd engine stopped: no device threads were started",
      "streams flushed: stdout, stderr",
      "main returns 0",
  };
  const auto expected = expected_trace(0, 2, 0);
  EXPECT_EQ(trace_mismatch(good, expected), "");
  auto oldest_first = good;
  std::swap(oldest_first[7], oldest_first[8]);
  EXPECT_NE(trace_mismatch(oldest_first, expected), "");
  auto store_early = good;
  std::swap(store_early[8], store_early[9]);
  EXPECT_NE(trace_mismatch(store_early, expected), "");
  auto still_held = good;
  still_held[9] = "store released: #1 TCPStore server at 127.0.0.1:5000 (1 other reference(s) remain)";
  EXPECT_NE(trace_mismatch(still_held, expected), "");
  auto engine_first = good;
  std::swap(engine_first[10], engine_first[11]);
  EXPECT_NE(trace_mismatch(engine_first, expected), "");
  auto exited = good;
  exited[11] = "autograd engine stopped: 1 device thread(s) exited (pt_autograd_0)";
  EXPECT_EQ(trace_mismatch(exited, expected), "");
  auto still_running = good;
  still_running[11] = "autograd engine stopped: 1 device thread(s) still running after 5 s (pt_autograd_0)";
  EXPECT_NE(trace_mismatch(still_running, expected), "");
}

}  // namespace
}  // namespace ddpbench
