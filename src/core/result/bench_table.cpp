#include "core/result/bench_table.hpp"

#include "core/result/config_key.hpp"
#include "core/result/row_metrics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cmath>

namespace ddpbench {

std::string group_label(int nodes, int ranks, char unit) { return fmt::format("{}M/{}{}", nodes, ranks, unit); }

std::string table_header() {
  std::string out = fmt::format("{:22}", "");
  for (int i = 0; i < 4; ++i) out += fmt::format("{:>14}{:>10}", "sec/iter", "ex/sec");
  return out;
}

std::string table_row(const BenchResult& row, const std::string& units) {
  std::string out = fmt::format("{:4} {} -- {:>8}:", row.world_size, units, row.label);
  const double ps[4] = {row.summary.p50_s, row.summary.p75_s, row.summary.p90_s, row.summary.p95_s};
  const int qs[4] = {50, 75, 90, 95};
  for (int i = 0; i < 4; ++i) {
    const double v = ps[i];
    // Examples per rank per optimizer step: the micro-batch times the micro-steps.
    const double batch = static_cast<double>(row.batch_per_rank) * std::max(1, row.grad_accum);
    const long long ex = v > 0 ? static_cast<long long>(batch / v) : 0;
    out += fmt::format("  p{:02}:  {:1.3f}s  {:6}/s", qs[i], v, ex);
  }
  return out;
}

std::string row_settings(const BenchResult& row) {
  // The report's wording: the row's knobs read as a configuration key does (ddp_options).
  return ConfigKey::of(ResultFile{}, row).knob_label();
}

std::string table_row_breakdown(const BenchResult& row) {
  if (!row.breakdown.mean_over_ranks) return "";
  const auto ms = [&](Phase p) { return 1000.0 * (*row.breakdown.mean_over_ranks)[p].value_or(NAN); };
  std::string out = fmt::format("{:6}ms/step: forward {:.1f} | backward compute {:.1f}", "", ms(Phase::forward),
                                ms(Phase::backward_compute));
  if (row.ddp)
    out += fmt::format(" | comm {:.1f} (hidden {:.1f}, exposed {:.1f})", ms(Phase::backward_comm), ms(Phase::overlap),
                       ms(Phase::exposed_comm));
  out += fmt::format(" | optimizer {:.1f} | other {:.1f} | step {:.1f}", ms(Phase::optimizer), ms(Phase::other),
                     ms(Phase::step));
  return out;
}

std::string table_row_extras(const BenchResult& row) {
  const Summary& s = row.summary;
  std::string out =
      fmt::format("  n {:3}  ci ±{:.1f}%", s.iterations, s.mean_s > 0 ? 100.0 * s.ci95_s / s.mean_s : 0.0);
  if (const std::string settings = row_settings(row); !settings.empty()) out += "  [" + settings + "]";
  if (row.stopping.mode == "auto" && row.stopping.reason != "target_ci")
    out += fmt::format(" (stopped at {}, not at the {}% target)", row.stopping.reason, row.stopping.target_ci_pct);
  if (const auto passed = row.checks.passed()) out += *passed ? "  check ok" : "  check FAILED";
  for (const auto& m : row_metrics())
    if (m.run_label)
      if (const auto v = m.of(row)) out += fmt::format("  {} {}", m.run_label, m.format(Value(*v)));
  return out;
}

std::vector<std::string> table_row_warnings(const BenchResult& row) {
  std::vector<std::string> out;
  for (const auto& w : row.warnings) out.push_back(fmt::format("{:6}! {}: {}", "", w.code, w.message));
  return out;
}

std::string with_thousands(long long v) {
  std::string digits = std::to_string(v < 0 ? -static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace ddpbench
