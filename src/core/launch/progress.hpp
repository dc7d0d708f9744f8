// Progress of `ddpbench run` on rank 0: which row of the sweep runs, its iteration, and an
// estimate of the time left. Torch-free; clock and stream are injectable for the tests.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ddpbench {

/// How progress is shown.
///   kTerminal  stderr is a terminal: one live line, redrawn in place with '\r' at most
///              every Progress::kRedrawS seconds, e.g.
///              "row 3/12 · DDP group resnet18/ddp2 · iter 14/20 · ETA 1:23"
///   kLines     not a terminal (a log file, a pipe): one line per row when it starts,
///              e.g. "[3/12] DDP group resnet18/ddp2 (20 iterations) ..."
///   kQuiet     --quiet: nothing
enum class ProgressMode { kTerminal, kLines, kQuiet };

/// The mode for `quiet` (--quiet) and whether the progress stream is a terminal.
ProgressMode progress_mode(bool quiet, bool terminal);

/// "1:23" (m:ss) below an hour, "2:05:07" (h:mm:ss) from an hour on; "?" for a negative or
/// non-finite number of seconds. Seconds are rounded up (an ETA never reads 0:00 early).
std::string format_eta(double seconds);

/// The live progress of one sweep, kept by rank 0 (other ranks hold none). Not thread-safe:
/// the sweep's thread calls everything.
///
/// ETA (eta_s): with m the mean wall time per finished row (time from the first row's
/// start to the last row's end, divided by the finished rows: set-up, gathers and waits
/// between rows included), the current row's time left plus m for every row after it.
/// The current row's time left is, in this order: with --duration the burn-in time not yet
/// measured; with a known iteration count the iterations left times the current row's
/// time per measured iteration so far; else m minus the row's elapsed time (at least 0).
/// Before any row finished, the current row's projected total (elapsed + time left) stands
/// in for m once it is known. Unknown ("ETA ?") until a row finished or the current row
/// measured an iteration of a known count (or its --duration).
class Progress {
 public:
  /// Monotonic clock in seconds (any origin).
  using Clock = std::function<double()>;
  /// Minimum seconds between two redraws of the terminal line (at most 4 per second).
  static constexpr double kRedrawS = 0.25;

  /// `rows`: the rows the sweep plans (planned_rows of core/config/run_config). `clock` defaults
  /// to std::chrono::steady_clock.
  Progress(std::ostream& out, ProgressMode mode, int rows, Clock clock = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Row `i` of `n` (1-based) starts its warm-up. `iters`: measured iterations planned,
  /// <= 0 when unknown (--iters auto); `duration_s` > 0: a --duration burn-in of that many s.
  void row_started(int i, int n, const std::string& label, int iters, double duration_s = 0);
  /// The next row (numbered after the last started one, of the rows given at construction).
  void next_row(const std::string& label, int iters, double duration_s = 0);
  /// `k` measured iterations done of `total` (<= 0: unknown). k = 0 marks the start of the
  /// measured iterations (after the warm-up). Redraws at most every kRedrawS seconds.
  void iteration(int k, int total);
  /// The current row ends (its measured series and this rank's part of it are done).
  void row_finished();

  /// Clears the terminal line so that a table line can print; resume() redraws it.
  /// Nothing in the other modes.
  void suspend();
  void resume();

  /// Seconds left by the estimate above; negative when unknown.
  double eta_s() const;
  /// The terminal line as it would be drawn now (without '\r').
  std::string status_line() const;
  /// Rows started so far.
  int rows_started() const { return row_; }

 private:
  void draw(bool force);
  void clear();
  double now() const;

  std::ostream& out_;
  ProgressMode mode_;
  int rows_;
  Clock clock_;
  // Current row.
  int row_ = 0, n_ = 0;
  std::string label_;
  int iters_ = 0;
  double duration_s_ = 0;
  bool active_ = false, measuring_ = false;
  int k_ = 0;
  double row_start_ = 0, measure_start_ = 0, last_iter_ = 0;
  // Finished rows.
  int finished_ = 0;
  double first_start_ = -1, last_end_ = 0;
  // Terminal line.
  bool drawn_ = false;
  double last_draw_ = -1e300;
};

}  // namespace ddpbench
