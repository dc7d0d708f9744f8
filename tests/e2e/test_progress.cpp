// Progress output and the --duration burn-in of `ddpbench run`, through the binary on 2
// real ranks. About 30 s in all on 2 cores.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <regex>
#include <string>
#include <vector>

#include "common/testutil.hpp"
#include "core/result/result.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using testutil::Outcome;
using testutil::run;
using testutil::TempDir;

const std::string kBin = DDPBENCH_BINARY;
const std::string kTiny = " run --nproc-per-node 2 " + testutil::kTinyArgs + " --warmup 1";
// Burn-in compares the window's ex/s with the samples within 8%: resnet18's steps (~0.1 s)
// keep the gaps between steps a small share; the run lasts --duration whatever the model.
const std::string kBurnIn = " run --nproc-per-node 2 --model resnet18 --image-size 32 --batch-size 2 --warmup 1";

// The "[i/n] ..." lines of `err`, in order.
std::vector<std::string> progress_lines(const std::string& err) {
  static const std::regex line(R"(^\[\d+/\d+\] .*\.\.\.$)");
  std::vector<std::string> out;
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    const std::string l = err.substr(start, end - start);
    if (std::regex_match(l, line)) out.push_back(l);
    start = end + 1;
  }
  return out;
}

// Not a terminal (stderr is a file here): one line per row, at its start, numbered up to
// the planned rows (the result file's rows_planned); --quiet: none.
TEST(Progress, OneLinePerRowWhenNotATerminalAndNoneWithQuiet) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const Outcome o = run(kBin + kTiny + " --iters 3 --json " + json);
  ASSERT_EQ(o.code, 0) << o.err;
  const ResultFile f = read_result_file(json);
  ASSERT_EQ(f.rows_planned, 3);  // no-DDP, ddp1, ddp2
  EXPECT_EQ(progress_lines(o.err),
            (std::vector<std::string>{"[1/3] no-DDP baseline of squeezenet1_0 at batch 2 (3 iterations) ...",
                                      "[2/3] DDP group squeezenet1_0/ddp1 (3 iterations) ...",
                                      "[3/3] DDP group squeezenet1_0/ddp2 (3 iterations) ..."}))
      << o.err;
  EXPECT_EQ(o.err.find('\r'), std::string::npos) << "no terminal: no live line";

  const Outcome q = run(kBin + kTiny + " --iters 3 --world-sizes 2 --quiet");
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_THAT(q.out, HasSubstr(testutil::kTinyModel));  // the table still prints
  EXPECT_EQ(progress_lines(q.err), std::vector<std::string>{}) << q.err;
  EXPECT_EQ(q.err, "") << "--quiet and no error: nothing on stderr";
}

// The live line on a terminal is covered by tests/unit/test_progress.cpp: under the
// built-in spawner rank 0's stderr is a pipe the spawner forwards line by line (core/launch/spawn),
// so a rank never sees a terminal there and prints the per-row lines.

// --duration 5s on 2 ranks: each row's series runs >= 5 s of wall time and stops within a
// few steps after; every rank stops at the same step; the one 5 s window's ex/s agrees
// with the samples (steps * batch / their summed time, the time between steps aside).
TEST(Progress, BurnInWindowsAgreeWithTheSamples) {
  TempDir d;
  const auto json = (d.path / "r.json").string();
  const auto t0 = std::chrono::steady_clock::now();
  // --per-rank-series all: every rank keeps the samples the windows are checked against.
  const Outcome o = run(kBin + kBurnIn + " --world-sizes 2 --duration 5s --per-rank-series all --json " + json);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_GE(wall, 10.0) << "two rows of 5 s each";
  EXPECT_EQ(progress_lines(o.err),
            (std::vector<std::string>{"[1/2] no-DDP baseline of resnet18 at batch 2 (burn-in 5 s) ...",
                                      "[2/2] DDP group resnet18/ddp2 (burn-in 5 s) ..."}))
      << o.err;
  const ResultFile f = read_result_file(json);
  ASSERT_EQ(f.results.size(), 2u);
  for (const auto& r : f.results) {
    SCOPED_TRACE(r.label);
    EXPECT_EQ(r.stopping.mode, "duration");
    EXPECT_EQ(r.stopping.reason, "duration");
    const auto& b = r.burn_in;
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(b.duration_s, 5.0);
    EXPECT_EQ(b.window_s, 5.0);  // floor(5 / 5) = 1 window
    EXPECT_EQ(b.drift_threshold_pct, 5.0);
    ASSERT_EQ(b.per_rank.size(), static_cast<size_t>(r.world_size));
    ASSERT_EQ(b.drift.size(), static_cast<size_t>(r.world_size));
    ASSERT_EQ(r.ranks.size(), static_cast<size_t>(r.world_size));
    const long long steps = b.per_rank[0].steps;
    ASSERT_GT(steps, 5);
    for (size_t k = 0; k < r.ranks.size(); ++k) {
      const BurnInRank& pr = b.per_rank[k];
      EXPECT_EQ(pr.rank, static_cast<int>(k));
      EXPECT_EQ(pr.steps, steps) << "every rank stops at the same step";
      EXPECT_EQ(pr.subsample_stride, 1);
      EXPECT_EQ(pr.samples_kept, steps);
      const auto& s = r.ranks[k].samples_s;
      ASSERT_EQ(static_cast<long long>(s.size()), steps);
      const double sum = std::accumulate(s.begin(), s.end(), 0.0);
      const double longest = *std::max_element(s.begin(), s.end());
      const std::vector<double>& ex = pr.ex_per_s;
      ASSERT_EQ(ex.size(), 1u);
      // One window [0, T], T the last step's end: ex/s = steps * batch / T, so T follows.
      const double span = static_cast<double>(steps) * r.batch_per_rank / ex[0];
      EXPECT_GE(span, 5.0) << "measured for at least D";
      EXPECT_LT(span, 5.0 + 3 * longest + 0.5) << "stopped within a few steps of D";
      EXPECT_LE(sum, span * 1.0001) << "the steps lie inside the span";
      EXPECT_NEAR(ex[0], static_cast<double>(steps) * r.batch_per_rank / sum, 0.08 * ex[0])
          << "window ex/s vs samples: the time between steps is a few % at most";
      const BurnInDrift& dr = b.drift[k];
      EXPECT_EQ(dr.rank, static_cast<int>(k));
      EXPECT_DOUBLE_EQ(dr.first_ex_per_s, ex[0]);
      EXPECT_DOUBLE_EQ(dr.change_pct, 0.0);  // one window
      EXPECT_FALSE(dr.flagged);
    }
  }
}

}  // namespace
}  // namespace ddpbench
