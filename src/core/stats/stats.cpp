#include "core/stats/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace ddpbench {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of an empty sample set");
  if (!(q >= 0.0 && q <= 100.0)) throw std::invalid_argument("percentile q must be in [0, 100]");
  const double h = (static_cast<double>(sorted.size()) - 1.0) * q / 100.0;
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return percentile_sorted(samples, q);
}

double t95(int dof) {
  if (dof < 1) throw std::invalid_argument("Student's t needs at least 1 degree of freedom");
  // t_{0.975, dof} for dof = 1..30 (NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.2).
  static const double table[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                   2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                   2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof <= 30) return table[dof - 1];
  // Cornish-Fisher expansion of the t quantile around the normal one (Abramowitz & Stegun
  // 26.7.5), z = 1.959964: accurate to 1e-4 for dof > 30.
  const double z = 1.959963985, z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, n = dof;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
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
  return t95(static_cast<int>(samples.size()) - 1) * stddev(samples) / std::sqrt(static_cast<double>(samples.size()));
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
  s.mean_s = mean(samples_s);  // throws on no sample
  s.stddev_s = stddev(samples_s);
  std::sort(samples_s.begin(), samples_s.end());
  s.p5_s = percentile_sorted(samples_s, 5);
  s.p50_s = percentile_sorted(samples_s, 50);
  s.p75_s = percentile_sorted(samples_s, 75);
  s.p90_s = percentile_sorted(samples_s, 90);
  s.p95_s = percentile_sorted(samples_s, 95);
  s.min_s = samples_s.front();
  s.max_s = samples_s.back();
  const std::vector<double> iters = iteration_means(per_rank_s);
  s.iterations = static_cast<int>(iters.size());
  s.ci95_s = ci95_halfwidth(iters);
  const double m = mean(iters);
  s.cv = m > 0 ? stddev(iters) / m : 0.0;
  s.ex_per_s_per_gpu = s.p50_s > 0 ? static_cast<double>(batch_per_rank) / s.p50_s : 0.0;
  s.ex_per_s_total = s.ex_per_s_per_gpu * world_size;
  return s;
}

}  // namespace ddpbench
