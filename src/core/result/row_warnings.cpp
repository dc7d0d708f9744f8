#include "core/result/row_warnings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/launch/launch_env.hpp"
#include "core/util/errors.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench {

std::vector<double> row_iteration_series(const BenchResult& r) {
  if (!r.iteration_means_s.empty()) return r.iteration_means_s;
  std::vector<std::vector<double>> per_rank;
  for (const auto& rk : r.ranks)
    if (!rk.samples_s.empty()) per_rank.push_back(rk.samples_s);
  if (per_rank.empty()) return {};
  return iteration_means(per_rank);
}

double row_cv(const BenchResult& r) {
  const std::vector<double> s = row_iteration_series(r);
  if (s.size() >= 2) {
    const double m = mean(s);
    return m > 0 ? stddev(s) / m : 0.0;
  }
  return r.summary.cv;
}

double row_ci_fraction(const BenchResult& r) {
  const std::vector<double> s = row_iteration_series(r);
  if (s.size() >= 2) {
    const double m = mean(s);
    return m > 0 ? ci95_halfwidth(s) / m : 0.0;
  }
  return r.summary.mean_s > 0 ? r.summary.ci95_s / r.summary.mean_s : 0.0;
}

int row_iterations(const BenchResult& r) {
  if (r.summary.iterations > 0) return r.summary.iterations;
  const std::vector<double> s = row_iteration_series(r);
  if (!s.empty()) return static_cast<int>(s.size());
  int most = 0;
  for (const auto& rk : r.ranks) {
    most = std::max(most, static_cast<int>(rk.samples_s.size()));
    if (rk.step) most = std::max(most, rk.step->n);
  }
  return most;
}

std::vector<RowWarning> timing_warnings(const BenchResult& r, const std::string& rerun_hint) {
  std::vector<RowWarning> out;
  const double cv = row_cv(r);
  if (cv > kNoisyCv)
    out.push_back({"noisy", fmt::format("per-iteration times vary by {:.1f}% (cv > {:.0f}%); the percentiles may "
                                        "move between launches",
                                        100 * cv, 100 * kNoisyCv)});
  const int n = row_iterations(r);
  if (n > 0 && n < kMinItersForP95)
    out.push_back({"few_samples", fmt::format("{} iterations: fewer than {} leave less than one expected sample "
                                              "above p95; {}",
                                              n, kMinItersForP95, rerun_hint)});
  return out;
}

std::optional<RowWarning> oversubscribed_warning(int world_size, int threads_per_rank,
                                                 const std::vector<RankCpus>& placements) {
  if (threads_per_rank <= 0) return std::nullopt;
  std::map<std::string, std::pair<int, std::set<int>>> per_host;  // host -> (threads, union of masks)
  std::string over;
  for (int r = 0; r < world_size && r < static_cast<int>(placements.size()); ++r) {
    const RankCpus& pl = placements[static_cast<size_t>(r)];
    auto& h = per_host[pl.host];
    h.first += threads_per_rank;
    std::vector<int> mask;
    try {
      mask = parse_cpu_list(pl.cpus);
    } catch (const UsageError&) {
    }
    h.second.insert(mask.begin(), mask.end());
    if (over.empty() && !mask.empty() && threads_per_rank > static_cast<int>(mask.size()))
      over = fmt::format("rank {} runs {} threads on {} CPUs", r, threads_per_rank, mask.size());
  }
  for (const auto& [host, h] : per_host)
    if (over.empty() && !h.second.empty() && h.first > static_cast<int>(h.second.size()))
      over = fmt::format("{} threads of this group's ranks on {} share {} CPUs", h.first, host, h.second.size());
  if (over.empty()) return std::nullopt;
  return RowWarning{"oversubscribed", fmt::format("{}; ranks compete for cores", over)};
}

int complete_row_warnings(ResultFile& file) {
  if (file.kind != "run") return 0;
  const nlohmann::json& env = file.environment;
  const bool cpu = json_str_or(env, "device_type") == "cpu" ||
                   (json_str_or(env, "device_type").empty() &&
                    !(env.is_object() && env.contains("gpus") && env["gpus"].is_array() && !env["gpus"].empty()));
  std::vector<RankCpus> placements;
  if (env.is_object() && env.contains("ranks") && env["ranks"].is_array())
    for (const auto& p : env["ranks"])
      placements.push_back({json_str_or(p, "host"), json_str_or(p, "cpus")});
  const auto threads = json_num_opt(env, "threads_per_rank");
  const std::string note = " (recomputed from the row's data)";
  int added = 0;
  for (auto& row : file.results) {
    const auto has = [&](const std::string& code) {
      return std::any_of(row.warnings.begin(), row.warnings.end(), [&](const RowWarning& w) { return w.code == code; });
    };
    std::vector<RowWarning> implied = timing_warnings(row);
    if (cpu && threads && *threads >= 1 && *threads <= 1e6)
      if (auto w = oversubscribed_warning(row.world_size, static_cast<int>(*threads), placements)) implied.push_back(*w);
    for (auto& w : implied)
      if (!has(w.code)) {
        w.message += note;
        row.warnings.push_back(std::move(w));
        ++added;
      }
  }
  return added;
}

}  // namespace ddpbench
