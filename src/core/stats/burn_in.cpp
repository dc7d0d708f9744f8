#include "core/stats/burn_in.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ddpbench {

int burn_in_windows(double duration_s) {
  if (!std::isfinite(duration_s) || duration_s <= 0)
    throw std::invalid_argument("burn_in_windows: duration must be > 0");
  const double w = std::floor(duration_s / kMinBurnInWindowS);
  return static_cast<int>(std::clamp(w, 1.0, static_cast<double>(kMaxBurnInWindows)));
}

std::vector<double> window_throughput(const std::vector<StepEnd>& steps, double duration_s, int windows) {
  if (windows < 1) throw std::invalid_argument("window_throughput: windows must be >= 1");
  if (!std::isfinite(duration_s) || duration_s <= 0)
    throw std::invalid_argument("window_throughput: duration must be > 0");
  const double w = duration_s / windows;
  std::vector<double> examples(static_cast<size_t>(windows), 0.0);
  double t_end = duration_s;
  for (const auto& s : steps) {
    const auto j =
        std::clamp(static_cast<long long>(std::floor(s.end_s / w)), 0LL, static_cast<long long>(windows - 1));
    examples[static_cast<size_t>(j)] += s.examples;
    t_end = std::max(t_end, s.end_s);
  }
  std::vector<double> out(examples.size());
  for (size_t j = 0; j < out.size(); ++j) {
    const double len = j + 1 == out.size() ? t_end - static_cast<double>(j) * w : w;
    out[j] = examples[j] / len;
  }
  return out;
}

Drift throughput_drift(const std::vector<double>& ex_per_s, double threshold_pct, double step_ex_per_s) {
  if (ex_per_s.empty()) throw std::invalid_argument("throughput_drift: no window");
  Drift d;
  d.first_ex_per_s = ex_per_s.front();
  d.last_ex_per_s = ex_per_s.back();
  if (ex_per_s.size() > 1 && d.first_ex_per_s > 0)
    d.change_pct = 100.0 * (d.last_ex_per_s - d.first_ex_per_s) / d.first_ex_per_s;
  if (ex_per_s.size() > 1 && d.first_ex_per_s > 0) d.resolution_pct = 100.0 * 2.0 * step_ex_per_s / d.first_ex_per_s;
  d.flagged = d.change_pct < -(threshold_pct + d.resolution_pct);
  return d;
}

std::size_t subsample_stride(std::size_t n, std::size_t max) {
  if (max == 0) throw std::invalid_argument("subsample_stride: max must be > 0");
  return n <= max ? 1 : (n + max - 1) / max;
}

std::vector<double> subsample(const std::vector<double>& v, std::size_t stride) {
  if (stride <= 1) return v;
  std::vector<double> out;
  out.reserve(v.size() / stride + 1);
  for (size_t i = 0; i < v.size(); i += stride) out.push_back(v[i]);
  return out;
}

}  // namespace ddpbench
