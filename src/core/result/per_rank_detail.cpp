#include "core/result/per_rank_detail.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "core/stats/stats.hpp"

namespace ddpbench {
namespace {

std::optional<double> mean_step(const RankSamples& rs) {
  if (rs.step) return rs.step->mean_s;
  if (rs.samples_s.empty()) return std::nullopt;
  return mean(rs.samples_s);
}

}  // namespace

std::vector<int> ranks_kept_in_full(const BenchResult& row) {
  std::set<size_t> keep;
  for (size_t r = 0; r < row.ranks.size(); ++r)
    if (const TelemetrySummary* s = sampled_telemetry(row.ranks[r]); s && s->flags && !s->flags->empty())
      keep.insert(r);
  // The slowest rank by mean step (the last on ties): the one a reader looks at first.
  std::optional<std::pair<double, size_t>> slowest;
  for (size_t r = 0; r < row.ranks.size(); ++r)
    if (const auto v = mean_step(row.ranks[r]); v && (!slowest || *v >= slowest->first))
      slowest = std::make_pair(*v, r);
  if (slowest) keep.insert(slowest->second);
  std::vector<int> out;
  for (size_t r : keep) out.push_back(row.ranks[r].rank);
  std::sort(out.begin(), out.end());
  return out;
}

void keep_per_rank_detail(BenchResult& row, bool keep_all) {
  std::vector<std::vector<double>> per_rank;
  for (auto& rs : row.ranks) {
    if (rs.samples_s.empty()) continue;
    per_rank.push_back(rs.samples_s);
    std::vector<double> sorted = rs.samples_s;
    std::sort(sorted.begin(), sorted.end());
    rs.step = RankStepSummary{static_cast<int>(sorted.size()), mean(sorted), percentile_sorted(sorted, 50),
                              percentile_sorted(sorted, 95), sorted.back()};
  }
  row.iteration_means_s = iteration_means(per_rank);
  if (keep_all) return;
  const std::vector<int> kept = ranks_kept_in_full(row);
  for (auto& rs : row.ranks) {
    if (std::binary_search(kept.begin(), kept.end(), rs.rank)) continue;
    rs.samples_s.clear();
    if (auto& s = rs.telemetry.sampled) s->series.reset();
  }
  row.ranks_kept_in_full = kept;
}

}  // namespace ddpbench
