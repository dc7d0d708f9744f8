#include "core/config/comm_hook_spec.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/util/errors.hpp"
#include "core/util/parse.hpp"

namespace ddpbench {

namespace {

constexpr int kMaxPowerSgdRank = 1024;

[[noreturn]] void unknown(const std::string& text) {
  throw UsageError(fmt::format(
      "--comm-hook '{}' is unknown; use none, allreduce, fp16, bf16, powersgd[:RANK], hierarchical or topk:RATIO",
      text));
}

}  // namespace

std::string CommHookSpec::name() const {
  if (kind == "powersgd") return fmt::format("powersgd:{}", powersgd_rank);
  // fmt's "{}" for a double is the shortest text that reads back to the same value.
  if (kind == "topk") return fmt::format("topk:{}", topk_ratio);
  return kind;
}

CommHookSpec parse_comm_hook(const std::string& text) {
  CommHookSpec spec;
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  const bool has_arg = colon != std::string::npos;
  const std::string arg = has_arg ? text.substr(colon + 1) : "";

  if (kind == "none" || kind == "allreduce" || kind == "fp16" || kind == "bf16" || kind == "hierarchical") {
    if (has_arg) unknown(text);
    spec.kind = kind;
    return spec;
  }
  if (kind == "powersgd") {
    spec.kind = kind;
    if (!has_arg) return spec;
    // Digits only: no sign, no spaces; a value too long for an int is out of range too.
    const bool digits = is_decimal(arg) && arg[0] != '+' && arg[0] != '-';
    if (!digits || arg.size() > 5 || std::stoi(arg) < 1 || std::stoi(arg) > kMaxPowerSgdRank)
      throw UsageError(
          fmt::format("--comm-hook '{}': the PowerSGD rank must be a whole number in 1..{}, "
                      "e.g. powersgd:4",
                      text, kMaxPowerSgdRank));
    spec.powersgd_rank = std::stoi(arg);
    return spec;
  }
  if (kind == "topk") {
    spec.kind = kind;
    double ratio = 0;
    const char* end = arg.data() + arg.size();
    const auto [ptr, ec] = std::from_chars(arg.data(), end, ratio);
    if (!has_arg || arg.empty() || ec != std::errc() || ptr != end || !std::isfinite(ratio) || ratio <= 0 || ratio > 1)
      throw UsageError(
          fmt::format("--comm-hook '{}': top-k needs the fraction of elements to send, a number in "
                      "(0, 1], e.g. topk:0.01",
                      text));
    spec.topk_ratio = ratio;
    return spec;
  }
  unknown(text);
}

}  // namespace ddpbench
