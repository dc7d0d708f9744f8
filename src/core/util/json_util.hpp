// Safe reads of integers from JSON. nlohmann's get<int>() on a floating-point or
// out-of-range value is undefined behaviour (found by fuzz/fuzz_result_reader), so
// every integer read from a file goes through these. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ddpbench {

/// The integer value of `j`, if it is an integer (a float with no fraction is accepted)
/// in [lo, hi]. Throws std::invalid_argument naming `what` otherwise.
template <typename T = long long>
T json_int(const nlohmann::json& j, const std::string& what, long long lo = std::numeric_limits<T>::min(),
           long long hi = std::numeric_limits<T>::max()) {
  static_assert(std::is_signed_v<T>, "json_int reads signed integers (the default bounds assume it)");
  long double v = 0;
  if (j.is_number_integer() && !j.is_number_unsigned()) v = static_cast<long double>(j.get<long long>());
  else if (j.is_number_unsigned()) v = static_cast<long double>(j.get<unsigned long long>());
  else if (j.is_number_float()) v = static_cast<long double>(j.get<double>());
  else throw std::invalid_argument(what + " is not a number");
  if (!(v >= static_cast<long double>(lo) && v <= static_cast<long double>(hi)) || v != static_cast<long long>(v))
    throw std::invalid_argument(what + " is not an integer in range");
  return static_cast<T>(static_cast<long long>(v));
}

/// `obj[key]` as a finite double. Throws std::invalid_argument naming `key` when it is
/// missing ("KEY is missing"), not a number ("KEY is a string, not a number") or not finite.
inline double json_num(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw std::invalid_argument(std::string(key) + " is missing");
  if (!it->is_number()) throw std::invalid_argument(std::string(key) + " is a " + it->type_name() + ", not a number");
  return it->get<double>();
}

/// `obj[key]` read with json_num, or `fallback` when the key is absent or null.
inline double json_num_or(const nlohmann::json& obj, const char* key, double fallback) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  return json_num(obj, key);
}

/// `obj[key]` as a string, or `fallback` when the key is absent or null. Throws
/// std::invalid_argument naming `key` when it holds another type.
inline std::string json_string_or(const nlohmann::json& obj, const char* key, const std::string& fallback) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw std::invalid_argument(std::string(key) + " is a " + it->type_name() + ", not a string");
  return it->get<std::string>();
}

/// `obj[key]` as a string; throws std::invalid_argument naming `key` when it is missing or
/// holds another type.
inline std::string json_string(const nlohmann::json& obj, const char* key) {
  if (obj.find(key) == obj.end()) throw std::invalid_argument(std::string(key) + " is missing");
  return json_string_or(obj, key, "");
}

/// `obj[key]` as a boolean, or `fallback` when absent or null; throws std::invalid_argument
/// naming `key` when it holds another type.
inline bool json_bool_or(const nlohmann::json& obj, const char* key, bool fallback) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw std::invalid_argument(std::string(key) + " is a " + it->type_name() + ", not a boolean");
  return it->get<bool>();
}

/// `obj[key]` read with json_int, or `fallback` when the key is absent or null.
template <typename T = long long>
T json_int_or(const nlohmann::json& obj, const char* key, T fallback) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return fallback;
  return json_int<T>(obj[key], key);
}

/// `obj[key]` when `obj` is an object holding a string there, else `fallback` (never throws:
/// for display of fields a foreign file may hold in any shape).
inline std::string json_str_or(const nlohmann::json& obj, const char* key, const std::string& fallback = "") {
  if (!obj.is_object()) return fallback;
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

/// True when `obj` is an object holding the boolean true at `key` (never throws).
inline bool json_true(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return false;
  const auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

/// `obj[key]` when `obj` is an object holding a number there, else nullopt (never throws).
inline std::optional<double> json_num_opt(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

/// `obj[key]` if it is a JSON object, an empty object if absent or null; throws
/// std::invalid_argument naming `key` for any other type (sections a reader indexes).
inline nlohmann::json json_object_or_empty(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nlohmann::json::object();
  if (!it->is_object()) throw std::invalid_argument(std::string(key) + " is not an object");
  return *it;
}

}  // namespace ddpbench
