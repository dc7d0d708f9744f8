#include "core/result/row_sections.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/util/json_util.hpp"

namespace ddpbench {
namespace {

using nlohmann::json;

bool is_int64(const json& v) {
  if (v.is_number_unsigned()) return v.get<unsigned long long>() <= std::numeric_limits<long long>::max();
  return v.is_number_integer();
}

// Whether a JSON value reads as T without loss. A section (every type below without its own
// rule) reads from an object, its unknown keys kept in its own extra.
template <typename T>
bool fits(const json& v) {
  return v.is_object();
}
template <>
bool fits<double>(const json& v) {
  return v.is_number();
}
template <>
bool fits<long long>(const json& v) {
  return is_int64(v);
}
template <>
bool fits<bool>(const json& v) {
  return v.is_boolean();
}
template <>
bool fits<std::string>(const json& v) {
  return v.is_string();
}
// An array whose every element passes `element`.
template <typename Pred>
bool array_of(const json& v, Pred element) {
  return v.is_array() && std::all_of(v.begin(), v.end(), element);
}

template <>
bool fits<std::vector<long long>>(const json& v) {
  return array_of(v, is_int64);
}
template <>
bool fits<json>(const json& v) {
  return !v.is_null();
}
template <>
bool fits<std::vector<std::string>>(const json& v) {
  return array_of(v, [](const json& x) { return x.is_string(); });
}
// NaN is written as null: a list of numbers and nulls reads with NaN for each null.
template <>
bool fits<std::vector<double>>(const json& v) {
  return array_of(v, [](const json& x) { return x.is_number() || x.is_null(); });
}
template <>
bool fits<TelemetrySeries>(const json& v) {
  if (!v.is_object()) return false;
  for (const auto& [key, x] : v.items())
    if (!fits<std::vector<double>>(x)) return false;
  return true;
}
// A list of sections: an array of objects.
template <>
bool fits<std::vector<IbPortTelemetry>>(const json& v) {
  return array_of(v, [](const json& x) { return x.is_object(); });
}
template <>
bool fits<std::vector<ConvergenceEpoch>>(const json& v) {
  return array_of(v, [](const json& x) { return x.is_object(); });
}

// The value of a JSON value that fits T.
template <typename T>
T read(const json& v) {
  return v.get<T>();
}
template <>
std::vector<double> read<std::vector<double>>(const json& v) {
  std::vector<double> out;
  out.reserve(v.size());
  for (const auto& x : v) out.push_back(x.is_number() ? x.get<double>() : std::nan(""));
  return out;
}
template <>
TelemetrySeries read<TelemetrySeries>(const json& v) {
  TelemetrySeries out;
  for (const auto& [key, x] : v.items()) out[key] = read<std::vector<double>>(x);
  return out;
}

template <typename T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

// Numbers that are not finite are written as null (what a JSON file can hold), so a list
// compares equal to the file it was read from.
json finite_or_null(const std::vector<double>& v) {
  json a = json::array();
  for (double x : v) a.push_back(std::isfinite(x) ? json(x) : json(nullptr));
  return a;
}
template <>
void put(json& j, const char* key, const std::optional<std::vector<double>>& v) {
  if (v) j[key] = finite_or_null(*v);
}
template <>
void put(json& j, const char* key, const std::optional<TelemetrySeries>& v) {
  if (!v) return;
  json o = json::object();
  for (const auto& [name, points] : *v) o[name] = finite_or_null(points);
  j[key] = std::move(o);
}

// Moves `key` out of `rest` into `v` when its value fits T. Anything else (a null of an
// older file included) leaves `v` unset and stays in `rest`, so it is written back as read.
template <typename T>
void take(json& rest, const char* key, std::optional<T>& v) {
  const auto it = rest.find(key);
  if (it == rest.end() || !fits<T>(*it)) return;
  v = read<T>(*it);
  rest.erase(it);
}

}  // namespace

void put_extra(json& j, const json& extra) {
  if (!extra.is_object()) return;
  for (auto it = extra.begin(); it != extra.end(); ++it)
    if (!j.contains(it.key())) j[it.key()] = it.value();
}

#define DDPBENCH_SECTION_PUT(type, name) put(j, #name, c.name);
#define DDPBENCH_SECTION_TAKE(type, name) take(rest, #name, c.name);

// Each section's writer (its fields with a value, then extra), reader (the fields that
// fit, the rest kept in extra) and equality (of what it writes).
#define DDPBENCH_SECTION_JSON(Type, FIELDS) \
  void to_json(json& j, const Type& c) {    \
    j = json::object();                     \
    FIELDS(DDPBENCH_SECTION_PUT)            \
    put_extra(j, c.extra);                  \
  }                                         \
  void from_json(const json& j, Type& c) {  \
    c = Type{};                             \
    if (!j.is_object()) return;             \
    json rest = j;                          \
    FIELDS(DDPBENCH_SECTION_TAKE)           \
    c.extra = std::move(rest);              \
  }                                         \
  bool Type::operator==(const Type& o) const { return json(*this) == json(o); }

DDPBENCH_SECTION_JSON(RowChecks, DDPBENCH_ROW_CHECKS_FIELDS)
DDPBENCH_SECTION_JSON(RowCompute, DDPBENCH_ROW_COMPUTE_FIELDS)
DDPBENCH_SECTION_JSON(RowCommunication, DDPBENCH_ROW_COMMUNICATION_FIELDS)
DDPBENCH_SECTION_JSON(RowBreakdown, DDPBENCH_ROW_BREAKDOWN_FIELDS)
DDPBENCH_SECTION_JSON(RowDdpOptions, DDPBENCH_ROW_DDP_OPTIONS_FIELDS)
DDPBENCH_SECTION_JSON(MetricStats, DDPBENCH_METRIC_STATS_FIELDS)
DDPBENCH_SECTION_JSON(GpuTelemetry, DDPBENCH_GPU_TELEMETRY_FIELDS)
DDPBENCH_SECTION_JSON(NetTelemetry, DDPBENCH_NET_TELEMETRY_FIELDS)
DDPBENCH_SECTION_JSON(IbPortTelemetry, DDPBENCH_IB_PORT_TELEMETRY_FIELDS)
DDPBENCH_SECTION_JSON(HostTelemetry, DDPBENCH_HOST_TELEMETRY_FIELDS)
DDPBENCH_SECTION_JSON(TelemetrySummary, DDPBENCH_TELEMETRY_SUMMARY_FIELDS)
DDPBENCH_SECTION_JSON(LossScaling, DDPBENCH_LOSS_SCALING_FIELDS)
DDPBENCH_SECTION_JSON(ProfileRecord, DDPBENCH_PROFILE_RECORD_FIELDS)
DDPBENCH_SECTION_JSON(RowTelemetry, DDPBENCH_ROW_TELEMETRY_FIELDS)
DDPBENCH_SECTION_JSON(RankTelemetry, DDPBENCH_RANK_TELEMETRY_FIELDS)
DDPBENCH_SECTION_JSON(ConvergenceEpoch, DDPBENCH_CONVERGENCE_EPOCH_FIELDS)
DDPBENCH_SECTION_JSON(TargetOutcome, DDPBENCH_CONVERGENCE_TARGET_FIELDS)
DDPBENCH_SECTION_JSON(LossCurve, DDPBENCH_LOSS_CURVE_FIELDS)
DDPBENCH_SECTION_JSON(RowConvergence, DDPBENCH_ROW_CONVERGENCE_FIELDS)

#undef DDPBENCH_SECTION_JSON

void to_json(json& j, const PhaseSeconds& p) {
  j = json::object();
  for (size_t i = 0; i < kNumBreakdownComponents; ++i)
    if (p.s[i]) j[kBreakdownComponents[i]] = *p.s[i];
}

void from_json(const json& j, PhaseSeconds& p) {
  p = PhaseSeconds{};
  if (!j.is_object()) return;
  for (size_t i = 0; i < kNumBreakdownComponents; ++i)
    if (const auto it = j.find(kBreakdownComponents[i]); it != j.end() && it->is_number()) p.s[i] = it->get<double>();
}

bool PhaseSeconds::complete() const {
  for (const auto& v : s)
    if (!v || !std::isfinite(*v)) return false;
  return true;
}

bool PhaseSeconds::empty() const {
  for (const auto& v : s)
    if (v) return false;
  return true;
}

std::optional<double> RowBreakdown::mean(Phase p) const {
  if (!mean_over_ranks) return std::nullopt;
  const auto v = (*mean_over_ranks)[p];
  return v && std::isfinite(*v) ? v : std::nullopt;
}

namespace {
long long int64_or(const json& j, const char* key, long long fallback) {
  const auto it = j.find(key);
  return it != j.end() && is_int64(*it) ? it->get<long long>() : fallback;
}
}  // namespace

bool RowBurnIn::empty() const {
  return !duration_s && !window_s && !drift_threshold_pct && per_rank.empty() && drift.empty() && !note &&
         (!extra.is_object() || extra.empty());
}

void to_json(json& j, const BurnInRank& r) {
  j = json{{"rank", r.rank},
           {"ex_per_s", r.ex_per_s},
           {"steps", r.steps},
           {"samples_kept", r.samples_kept},
           {"subsample_stride", r.subsample_stride}};
}

void to_json(json& j, const BurnInDrift& d) {
  j = json{{"rank", d.rank},
           {"first_ex_per_s", d.first_ex_per_s},
           {"last_ex_per_s", d.last_ex_per_s},
           {"change_pct", d.change_pct},
           {"resolution_pct", d.resolution_pct},
           {"flagged", d.flagged}};
}

void to_json(json& j, const RowBurnIn& c) {
  j = json::object();
  put(j, "duration_s", c.duration_s);
  put(j, "window_s", c.window_s);
  if (!c.per_rank.empty()) j["per_rank"] = c.per_rank;
  if (!c.drift.empty()) j["drift"] = c.drift;
  put(j, "drift_threshold_pct", c.drift_threshold_pct);
  put(j, "note", c.note);
  put_extra(j, c.extra);
}

bool BurnInRank::operator==(const BurnInRank& o) const { return json(*this) == json(o); }
bool BurnInDrift::operator==(const BurnInDrift& o) const { return json(*this) == json(o); }
bool RowBurnIn::operator==(const RowBurnIn& o) const { return json(*this) == json(o); }

void from_json(const json& j, RowBurnIn& c) {
  c = RowBurnIn{};
  if (!j.is_object()) return;
  json rest = j;
  take(rest, "duration_s", c.duration_s);
  take(rest, "window_s", c.window_s);
  take(rest, "drift_threshold_pct", c.drift_threshold_pct);
  take(rest, "note", c.note);
  if (const auto it = rest.find("per_rank"); it != rest.end() && it->is_array()) {
    for (const auto& x : *it) {
      if (!x.is_object()) continue;
      BurnInRank r;
      r.rank = static_cast<int>(int64_or(x, "rank", -1));
      if (const auto e = x.find("ex_per_s"); e != x.end() && e->is_array())
        for (const auto& v : *e) r.ex_per_s.push_back(v.is_number() ? v.get<double>() : std::nan(""));
      r.steps = int64_or(x, "steps", 0);
      r.samples_kept = int64_or(x, "samples_kept", 0);
      r.subsample_stride = int64_or(x, "subsample_stride", 1);
      c.per_rank.push_back(std::move(r));
    }
    rest.erase(it);
  }
  if (const auto it = rest.find("drift"); it != rest.end() && it->is_array()) {
    for (const auto& x : *it) {
      if (!x.is_object()) continue;
      BurnInDrift d;
      d.rank = static_cast<int>(int64_or(x, "rank", -1));
      d.first_ex_per_s = json_num_opt(x, "first_ex_per_s").value_or(std::nan(""));
      d.last_ex_per_s = json_num_opt(x, "last_ex_per_s").value_or(std::nan(""));
      d.change_pct = json_num_opt(x, "change_pct").value_or(std::nan(""));
      d.resolution_pct = json_num_opt(x, "resolution_pct").value_or(0);
      d.flagged = json_true(x, "flagged");
      c.drift.push_back(d);
    }
    rest.erase(it);
  }
  c.extra = std::move(rest);
}

#undef DDPBENCH_SECTION_PUT
#undef DDPBENCH_SECTION_TAKE

std::optional<bool> RowChecks::passed() const {
  if (grad_check_passed) return grad_check_passed;
  if (param_check_passed) return param_check_passed;
  return dp_check_passed;
}

std::string RowChecks::invalid_reason() const {
  if (passed() == false) return "self-check failed";
  if (fp16_skipped_steps_in_measurement.value_or(0) > 0) return "fp16 steps skipped among the timed ones";
  return "";
}

}  // namespace ddpbench
