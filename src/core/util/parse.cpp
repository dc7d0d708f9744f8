#include "core/util/parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/util/errors.hpp"

namespace ddpbench {

long long parse_int(const std::string& value, const std::string& what) {
  return parse_bounded(value, what, std::numeric_limits<long long>::min(), std::numeric_limits<long long>::max());
}

bool is_decimal(const std::string& text) {
  const size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > sign && text.find_first_not_of("0123456789", sign) == std::string::npos;
}

long long parse_bounded(const std::string& value, const std::string& what, long long lo, long long hi) {
  // Decimal only. Whole numbers beyond 64 bits are out of range, not malformed.
  if (!is_decimal(value))
    throw UsageError(fmt::format("{}='{}' is not an integer; set it to a whole number", what, value));
  const size_t sign = value[0] == '-' || value[0] == '+' ? 1 : 0;
  const size_t first = std::min(value.find_first_not_of('0', sign), value.size());
  const std::string digits = value.substr(first);  // no leading zeros; empty for 0
  bool in_range = digits.size() <= 19;             // 10^19 > 2^63: wider is out of range
  long long v = 0;
  if (in_range) {
    const unsigned long long magnitude = digits.empty() ? 0 : std::stoull(digits);
    const unsigned long long limit = value[0] == '-' ? 1ULL << 63 : (1ULL << 63) - 1;
    in_range = magnitude <= limit;
    if (in_range) v = value[0] == '-' ? static_cast<long long>(0ULL - magnitude) : static_cast<long long>(magnitude);
  }
  if (!in_range || v < lo || v > hi)
    throw UsageError(fmt::format("{}={} is out of range; set it to {}..{}", what, value, lo, hi));
  return v;
}

}  // namespace ddpbench
