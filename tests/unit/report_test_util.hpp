// Helpers the `ddpbench report` unit tests (tests/unit/test_report*.cpp) share: loading the
// fixtures, the report's options, finding tables and notes.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>

#include "common/testutil.hpp"
#include "core/render/plots.hpp"
#include "core/render/report_tables.hpp"
#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"

namespace ddpbench::report_tests {

using ::testing::HasSubstr;

inline const std::string kDir = DDPBENCH_SOURCE_DIR "/tests/";

inline std::vector<NamedResult> load(const std::vector<std::string>& names) {
  std::vector<NamedResult> out;
  for (const auto& n : names) out.push_back({"fixtures/" + n, read_result_file(kDir + "fixtures/" + n)});
  return out;
}

inline std::vector<NamedResult> all_fixtures() {
  return load({"weak_cpu.json", "strong_cpu.json", "gpu_a100.json", "gpu_h100.json"});
}

inline ReportOptions cost_opts() {
  ReportOptions o;
  o.gpu_hour_usd = 2.0;
  o.epochs = 2;
  o.dataset_size = 100000;
  return o;
}

// report_tables without the executive summary, the definitions and the appendix's commands: the
// measured tables and the files table, in print order.
inline std::vector<Table> measured_tables(const Report& r) {
  std::vector<Table> out;
  for (auto& t : report_tables(r))
    if (t.kind != "headline" && t.kind != "summary" && t.kind != "findings" && t.kind != "recommendations" &&
        t.kind != "commands" && t.kind != "definitions")
      out.push_back(std::move(t));
  return out;
}

inline const Table& table_of_kind(const std::vector<Table>& ts, const std::string& kind, size_t nth = 0) {
  for (const auto& t : ts)
    if (t.kind == kind && nth-- == 0) return t;
  throw std::logic_error("no table of kind " + kind);
}

inline size_t count_of(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace ddpbench::report_tests
