#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ddpbench {

double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) throw std::invalid_argument("percentile of an empty sample set");
  if (!(q >= 0.0 && q <= 100.0)) throw std::invalid_argument("percentile q must be in [0, 100]");
  std::sort(samples.begin(), samples.end());
  const double h = (static_cast<double>(samples.size()) - 1.0) * q / 100.0;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  return samples[lo] + (h - static_cast<double>(lo)) * (samples[hi] - samples[lo]);
}

double mean(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("mean of an empty sample set");
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double stddev(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0.0;
  const double m = mean(samples);
  double ss = 0.0;
  for (double x : samples) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(samples.size() - 1));
}

double ci95_halfwidth(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0.0;
  return 1.96 * stddev(samples) / std::sqrt(static_cast<double>(samples.size()));
}

Summary summarize(const std::vector<double>& samples_s, long long batch_per_rank, int world_size) {
  Summary s;
  s.n = static_cast<int>(samples_s.size());
  s.p50_s = percentile(samples_s, 50);
  s.p75_s = percentile(samples_s, 75);
  s.p90_s = percentile(samples_s, 90);
  s.p95_s = percentile(samples_s, 95);
  s.min_s = *std::min_element(samples_s.begin(), samples_s.end());
  s.max_s = *std::max_element(samples_s.begin(), samples_s.end());
  s.mean_s = mean(samples_s);
  s.stddev_s = stddev(samples_s);
  s.ci95_s = ci95_halfwidth(samples_s);
  s.ex_per_s_per_gpu = s.p50_s > 0 ? static_cast<double>(batch_per_rank) / s.p50_s : 0.0;
  s.ex_per_s_total = s.ex_per_s_per_gpu * world_size;
  return s;
}

}  // namespace ddpbench
