#include "core/result/row_validation.hpp"

#include <fmt/format.h>

#include <cmath>

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
  return lines;
}

}  // namespace ddpbench
