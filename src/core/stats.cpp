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

std::vector<double> iteration_means(const std::vector<std::vector<double>>& per_rank) {
  std::vector<double> out;
  if (per_rank.empty()) return out;
  const size_t n = per_rank.front().size();
  const bool equal = std::all_of(per_rank.begin(), per_rank.end(), [n](const auto& v) { return v.size() == n; });
  if (!equal) {
    for (const auto& v : per_rank) out.insert(out.end(), v.begin(), v.end());
    return out;
  }
  out.assign(n, 0.0);
  for (const auto& v : per_rank)
    for (size_t i = 0; i < n; ++i) out[i] += v[i];
  for (auto& x : out) x /= static_cast<double>(per_rank.size());
  return out;
}

Summary summarize(const std::vector<std::vector<double>>& per_rank_s, long long batch_per_rank, int world_size) {
  std::vector<double> samples_s;
  for (const auto& v : per_rank_s) samples_s.insert(samples_s.end(), v.begin(), v.end());
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
  s.ci95_s = ci95_halfwidth(iteration_means(per_rank_s));
  s.ex_per_s_per_gpu = s.p50_s > 0 ? static_cast<double>(batch_per_rank) / s.p50_s : 0.0;
  s.ex_per_s_total = s.ex_per_s_per_gpu * world_size;
  return s;
}

}  // namespace ddpbench
