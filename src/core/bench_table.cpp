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
