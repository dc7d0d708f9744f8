// Safe reads of integers from JSON. nlohmann's get<int>() on a floating-point or
// out-of-range value is undefined behaviour (found by fuzz/fuzz_result_reader), so
// every integer read from a file goes through these. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace ddpbench {

/// The integer value of `j`, if it is an integer (a float with no fraction is accepted)
/// in [lo, hi]. Throws std::invalid_argument naming `what` otherwise.
template <typename T = long long>
T json_int(const nlohmann::json& j, const std::string& what, long long lo = std::numeric_limits<T>::min(),
           long long hi = std::numeric_limits<T>::max()) {
  long double v = 0;
  if (j.is_number_integer() && !j.is_number_unsigned()) v = static_cast<long double>(j.get<long long>());
  else if (j.is_number_unsigned()) v = static_cast<long double>(j.get<unsigned long long>());
  else if (j.is_number_float()) v = static_cast<long double>(j.get<double>());
  else throw std::invalid_argument(what + " is not a number");
  if (!(v >= static_cast<long double>(lo) && v <= static_cast<long double>(hi)) || v != static_cast<long long>(v))
    throw std::invalid_argument(what + " is not an integer in range");
  return static_cast<T>(static_cast<long long>(v));
}

/// `obj[key]` read with json_int, or `fallback` when the key is absent or null.
template <typename T = long long>
T json_int_or(const nlohmann::json& obj, const char* key, T fallback) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return fallback;
  return json_int<T>(obj[key], key);
}

}  // namespace ddpbench
