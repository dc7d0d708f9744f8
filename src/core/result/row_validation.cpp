#include "core/result/row_validation.hpp"

#include <cstdio>

#include <fmt/format.h>

#include <cmath>

#include "core/result/row_warnings.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {

namespace {

bool in_range(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

// Whether stored `got` is `want` within kDerivedTolerance.
bool agrees(double got, double want) {
  return std::isfinite(got) && std::fabs(got - want) <= kDerivedTolerance * std::fabs(want);
}

}  // namespace

std::string row_problem(const BenchResult& r) {
  if (r.world_size < 1 || r.world_size > kMaxRowWorldSize)
    return fmt::format("world_size is {}, not a rank count in 1..{}", r.world_size, kMaxRowWorldSize);
  if (r.nodes < 1 || r.nodes > r.world_size)
    return fmt::format("nodes is {}, not in 1..world_size ({})", r.nodes, r.world_size);
  if (r.batch_per_rank < 1 || r.batch_per_rank > kMaxRowBatch)
    return fmt::format("batch_per_rank is {}, not in 1..{}", r.batch_per_rank, kMaxRowBatch);
  if (r.grad_accum < 1) return fmt::format("grad_accum is {}, not 1 or more", r.grad_accum);
  const Summary& s = r.summary;
  if (!in_range(s.p50_s, kMinRowStepS, kMaxRowStepS))
    return fmt::format("summary.p50_s is {:.4g} s, not a step time in {:g}..{:g} s", s.p50_s, kMinRowStepS,
                       kMaxRowStepS);
  if (!in_range(s.mean_s, 0, kMaxRowStepS))
    return fmt::format("summary.mean_s is {:.4g} s, not a step time in 0..{:g} s", s.mean_s, kMaxRowStepS);
  // The order statistics of one sample: min <= p5 <= p50 <= p75 <= p90 <= p95 <= max, the mean
  // between min and max, no time negative. 0 is "absent" (p5 before schema 1.10, files that
  // lack a field); a relative slack of 1e-9 covers the decimal round trip of JSON.
  const auto le = [](double a, double b) { return a <= b + 1e-9 * std::max(std::fabs(a), std::fabs(b)); };
  const std::pair<const char*, double> order[] = {{"min_s", s.min_s}, {"p5_s", s.p5_s},   {"p50_s", s.p50_s},
                                                  {"p75_s", s.p75_s}, {"p90_s", s.p90_s}, {"p95_s", s.p95_s},
                                                  {"max_s", s.max_s}};
  const std::pair<const char*, double>* prev = nullptr;
  for (const auto& o : order) {
    if (!std::isfinite(o.second) || o.second < 0)
      return fmt::format("summary.{} is {:.4g} s, not a time (negative or not a number)", o.first, o.second);
    if (o.second == 0) continue;
    if (prev && !le(prev->second, o.second))
      return fmt::format("summary.{} is {:.4g} s, below {} {:.4g} s: percentiles out of order (edited or corrupted)",
                         o.first, o.second, prev->first, prev->second);
    prev = &o;
  }
  if (s.min_s > 0 && s.max_s > 0 && s.mean_s > 0 && !(le(s.min_s, s.mean_s) && le(s.mean_s, s.max_s)))
    return fmt::format("summary.mean_s is {:.4g} s, outside min_s..max_s ({:.4g}..{:.4g} s) (edited or corrupted)",
                       s.mean_s, s.min_s, s.max_s);
  if (!std::isfinite(s.cv) || s.cv < 0) return fmt::format("summary.cv is {:.4g}, not a coefficient of variation", s.cv);
  // The breakdown: no part negative, and forward + backward compute + exposed comm + optimizer
  // + other = step (docs/result-schema.md), within 1% of the step.
  if (r.breakdown.mean_over_ranks) {
    const std::optional<double> step = r.breakdown.mean(Phase::step);
    const double slack = 0.01 * step.value_or(0) + 1e-6;
    for (size_t i = 0; i < kNumBreakdownComponents; ++i)
      if (const auto v = r.breakdown.mean(static_cast<Phase>(i)); v && *v < -slack)
        return fmt::format("breakdown.mean_over_ranks.{} is {:.4g} s, a negative time (edited or corrupted)",
                           kBreakdownComponents[i], *v);
    const Phase parts[] = {Phase::forward, Phase::backward_compute, Phase::exposed_comm, Phase::optimizer, Phase::other};
    double sum = 0;
    bool all = step.has_value();
    for (Phase p : parts) {
      const auto v = r.breakdown.mean(p);
      all = all && v.has_value();
      sum += v.value_or(0);
    }
    if (all && std::fabs(sum - *step) > slack)
      return fmt::format("breakdown parts sum to {:.4g} s, not the step's {:.4g} s (forward + backward compute + "
                         "exposed comm + optimizer + other = step; edited or corrupted)",
                         sum, *step);
  }
  const double per_gpu = static_cast<double>(r.batch_per_rank) * r.grad_accum / s.p50_s;
  if (!agrees(s.ex_per_s_per_gpu, per_gpu))
    return fmt::format(
        "summary.ex_per_s_per_gpu is {:.4g}, but batch_per_rank x grad_accum / p50_s is {:.4g} (edited or corrupted)",
        s.ex_per_s_per_gpu, per_gpu);
  const double total = per_gpu * r.world_size;
  if (!agrees(s.ex_per_s_total, total))
    return fmt::format(
        "summary.ex_per_s_total is {:.4g}, but world_size x ex_per_s_per_gpu is {:.4g} (edited or "
        "corrupted)",
        s.ex_per_s_total, total);
  return "";
}

std::vector<std::string> drop_invalid_rows(ResultFile& file, const std::string& source) {
  std::vector<std::string> lines;
  std::vector<BenchResult> kept;
  const size_t had = file.results.size();
  for (size_t i = 0; i < had; ++i) {
    BenchResult& r = file.results[i];
    const std::string problem = row_problem(r);
    if (problem.empty()) {
      kept.push_back(std::move(r));
      continue;
    }
    std::string name = r.model;
    if (!r.label.empty()) name += " " + r.label;
    lines.push_back(fmt::format("{} row {} ({}): {}; it is left out", source, i + 1, name, problem));
  }
  file.results = std::move(kept);
  if (had > 0 && file.results.empty())
    throw UsageError(fmt::format(
        "{}: none of its {} row{} can be used ({}); pass a file written by ddpbench run "
        "--json",
        source, had, had == 1 ? "" : "s",
        lines.front().substr(source.size() + 1, lines.front().rfind("; it is left out") - source.size() - 1)));
  complete_row_warnings(file);
  return lines;
}

ResultFile load_result(const std::string& path) {
  ResultFile f = read_result_file(path);
  for (const std::string& line : drop_invalid_rows(f, path))
    std::fprintf(stderr, "ddpbench: warning: %s\n", line.c_str());
  const std::string warning = incomplete_warning(path, f);
  if (!warning.empty()) std::fprintf(stderr, "ddpbench: warning: %s\n", warning.c_str());
  return f;
}

}  // namespace ddpbench
