#include "core/launch/progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace ddpbench {

ProgressMode progress_mode(bool quiet, bool terminal) {
  if (quiet) return ProgressMode::kQuiet;
  return terminal ? ProgressMode::kTerminal : ProgressMode::kLines;
}

std::string format_eta(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(std::ceil(std::min(seconds, 1e9)));
  if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

namespace {
// "the no-DDP baseline of ..." reads better without the article in a status line.
std::string strip_article(const std::string& label) { return label.rfind("the ", 0) == 0 ? label.substr(4) : label; }
// ANSI "erase the whole line" after a carriage return.
constexpr const char* kClearLine = "\r\x1b[2K";
}  // namespace

Progress::Progress(std::ostream& out, ProgressMode mode, int rows, Clock clock)
    : out_(out), mode_(mode), rows_(rows), clock_(std::move(clock)) {
  if (!clock_)
    clock_ = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

Progress::~Progress() { clear(); }

double Progress::now() const { return clock_(); }

void Progress::row_started(int i, int n, const std::string& label, int iters, double duration_s) {
  if (active_) row_finished();
  row_ = i;
  n_ = n;
  label_ = strip_article(label);
  iters_ = iters;
  duration_s_ = duration_s;
  active_ = true;
  measuring_ = false;
  k_ = 0;
  row_start_ = now();
  if (first_start_ < 0) first_start_ = row_start_;
  if (mode_ == ProgressMode::kLines) {
    const std::string what = duration_s > 0 ? fmt::format("burn-in {} s", duration_s)
                             : iters > 0    ? fmt::format("{} iterations", iters)
                                            : std::string("iterations: auto");
    out_ << fmt::format("[{}/{}] {} ({}) ...\n", i, n, label_, what);
    out_.flush();
  } else {
    draw(true);
  }
}

void Progress::next_row(const std::string& label, int iters, double duration_s) {
  row_started(row_ + 1, std::max(rows_, row_ + 1), label, iters, duration_s);
}

void Progress::iteration(int k, int total) {
  if (!active_) return;
  const double t = now();
  if (!measuring_ || k == 0) {
    measuring_ = true;
    measure_start_ = t;
  }
  k_ = k;
  if (total > 0) iters_ = total;
  last_iter_ = t;
  draw(false);
}

void Progress::row_finished() {
  if (!active_) return;
  active_ = false;
  ++finished_;
  last_end_ = now();
  clear();
}

void Progress::suspend() { clear(); }

void Progress::resume() {
  if (active_) draw(true);
}

double Progress::eta_s() const {
  const double t = now();
  const double mean_row = finished_ > 0 ? (last_end_ - first_start_) / finished_ : -1;
  if (!active_) {
    if (mean_row < 0) return -1;
    return mean_row * std::max(0, rows_ - row_);
  }
  const double elapsed = t - row_start_;
  double left = -1;  // the current row's time left
  if (duration_s_ > 0 && measuring_) {
    left = std::max(0.0, duration_s_ - (t - measure_start_));
  } else if (iters_ > 0 && measuring_ && k_ > 0) {
    left = (last_iter_ - measure_start_) / k_ * (iters_ - k_) - (t - last_iter_);
    left = std::max(0.0, left);
  } else if (mean_row >= 0) {
    left = std::max(0.0, mean_row - elapsed);
  }
  if (left < 0) return -1;
  const double per_row = mean_row >= 0 ? mean_row : elapsed + left;
  return left + per_row * std::max(0, std::max(n_, rows_) - row_);
}

std::string Progress::status_line() const {
  std::string s = fmt::format("row {}/{} · {}", row_, n_, label_);
  if (!measuring_) {
    s += " · warm-up";
  } else if (duration_s_ > 0) {
    s += fmt::format(" · iter {} · {:.0f}/{:.0f} s", k_, std::min(duration_s_, last_iter_ - measure_start_),
                     duration_s_);
  } else if (iters_ > 0) {
    s += fmt::format(" · iter {}/{}", k_, iters_);
  } else {
    s += fmt::format(" · iter {}", k_);
  }
  return s + " · ETA " + format_eta(eta_s());
}

void Progress::draw(bool force) {
  if (mode_ != ProgressMode::kTerminal || !active_) return;
  const double t = now();
  if (!force && t - last_draw_ < kRedrawS) return;
  last_draw_ = t;
  out_ << kClearLine << status_line();
  out_.flush();
  drawn_ = true;
}

void Progress::clear() {
  if (mode_ != ProgressMode::kTerminal || !drawn_) return;
  out_ << kClearLine;
  out_.flush();
  drawn_ = false;
}

}  // namespace ddpbench
