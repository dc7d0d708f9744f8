#include "core/bench_table.hpp"

#include <fmt/format.h>

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
    const long long ex = v > 0 ? static_cast<long long>(static_cast<double>(row.batch_per_rank) / v) : 0;
    out += fmt::format("  p{:02}:  {:1.3f}s  {:6}/s", qs[i], v, ex);
  }
  return out;
}

std::string table_row_extras(const BenchResult& row) {
  const Summary& s = row.summary;
  std::string out = fmt::format("  n {:3}  ci ±{:.1f}%", s.iterations, s.mean_s > 0 ? 100.0 * s.ci95_s / s.mean_s : 0.0);
  if (row.stopping.mode == "auto" && row.stopping.reason != "target_ci")
    out += fmt::format(" (stopped at {}, not at the {}% target)", row.stopping.reason, row.stopping.target_ci_pct);
  if (row.checks.contains("grad_check_passed") && row.checks["grad_check_passed"].is_boolean())
    out += row.checks["grad_check_passed"].get<bool>() ? "  check ok" : "  check FAILED";
  const auto peak = row.telemetry.find("peak_memory_bytes_max_over_ranks");
  if (peak != row.telemetry.end() && peak->is_number() && peak->get<double>() > 0)
    out += fmt::format("  peak {:.2f} GiB", peak->get<double>() / (1024.0 * 1024.0 * 1024.0));
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
