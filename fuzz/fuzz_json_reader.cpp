// libFuzzer target: the bounded JSON reader's depth and size limits (core/util/json_reader).
// For any input: the counting pass accepts exactly the texts nlohmann accepts; a text it
// passes within the limits parses, and its DOM is no deeper and has no more values than
// counted; a text beyond either limit is refused with a UsageError before a DOM is built.
// Small limits here (32 levels, 64 KiB) so that the fuzzer reaches both sides of each.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/util/errors.hpp"
#include "core/util/json_reader.hpp"

namespace {

// Depth and value count of a DOM, without recursion.
std::pair<int, long long> measure(const nlohmann::json& root) {
  int depth = 0;
  long long values = 0;
  std::vector<std::pair<const nlohmann::json*, int>> todo{{&root, 0}};
  while (!todo.empty()) {
    const auto [j, d] = todo.back();
    todo.pop_back();
    ++values;
    if (!j->is_structured()) continue;
    depth = std::max(depth, d + 1);
    for (const auto& c : *j) todo.emplace_back(&c, d + 1);
  }
  return {depth, values};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ddpbench;
  constexpr int kDepth = 32;
  constexpr long long kBytes = 64 << 10;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool valid = nlohmann::json::accept(text);
  JsonShape shape;
  bool counted = true;
  try {
    shape = json_shape(text, "fuzz", "fix");
  } catch (const UsageError&) {
    counted = false;
  }
  if (counted != valid) std::abort();
  const bool within = counted && shape.max_depth <= kDepth && shape.dom_bytes <= kBytes;
  try {
    const nlohmann::json j = parse_json_bounded(text, "fuzz", "fix", kDepth, kBytes);
    if (!within) std::abort();
    const auto [depth, values] = measure(j);
    if (depth != shape.max_depth || values > shape.values) std::abort();
  } catch (const UsageError&) {
    if (within) std::abort();
  }
  return 0;
}
