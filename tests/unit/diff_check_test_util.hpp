// Helpers the `ddpbench diff` and `ddpbench check` unit tests (tests/unit/test_diff.cpp,
// test_check.cpp, test_config_key.cpp) share: the fixtures and result files they read.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/analysis/check.hpp"
#include "core/analysis/diff.hpp"
#include "core/result/config_key.hpp"
#include "core/util/errors.hpp"

namespace ddpbench::diff_check_tests {

using ::testing::HasSubstr;
using ::testing::Not;

inline const std::string kFix = DDPBENCH_SOURCE_DIR "/tests/fixtures/";
inline const std::string kResults = DDPBENCH_SOURCE_DIR "/docs/results/";

inline ResultFile h100(const std::string& name) { return read_result_file(kResults + name); }

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    start = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

inline size_t longest_line(const std::string& text) {
  size_t n = 0;
  for (const auto& l : lines_of(text)) n = std::max(n, l.size());
  return n;
}

inline size_t lines_starting(const std::string& text, const std::string& prefix) {
  size_t n = 0;
  for (const auto& l : lines_of(text)) n += l.rfind(prefix, 0) == 0;
  return n;
}

inline const std::string kEntry =
    R"({"device": "*", "model": "resnet50", "batch_per_rank": 32, "image_size": 224, "world_size": 1, "metric": "p50_s",
        "value": 0.05, "lower": -0.1, "upper": 0.1, )";

inline std::vector<ReferenceEntry> one(const std::string& rest) {
  return parse_reference(R"({"ddpbench_reference": "2.0", "references": [)" + kEntry + rest + "]}", "r.json");
}

}  // namespace ddpbench::diff_check_tests
