#include "core/analysis/check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/analysis/report_analysis.hpp"
#include "core/config/run_config.hpp"
#include "core/launch/launch_env.hpp"
#include "core/result/row_metrics.hpp"
#include "core/util/errors.hpp"
#include "core/util/json_reader.hpp"
#include "core/util/json_util.hpp"
#include "core/util/table.hpp"

namespace ddpbench {
namespace {

const std::vector<std::string> kTopKeys = {"ddpbench_reference", "description", "references"};
const std::vector<std::string> kEntryKeys = {"device", "model", "world_size", "batch_per_rank", "image_size", "setup",
                                             "metric", "value", "lower",      "upper",          "unit",       "note"};
const std::vector<std::string> kRequiredEntryKeys = {"device",     "model", "world_size", "batch_per_rank",
                                                     "image_size", "setup", "metric",     "value"};
// The setup fields are ConfigKey's, under its names.
const std::vector<ConfigField> kSetupFields = {ConfigField::precision,
                                               ConfigField::math,
                                               ConfigField::channels_last,
                                               ConfigField::frozen_backbone,
                                               ConfigField::backend,
                                               ConfigField::bucket_cap_mb,
                                               ConfigField::first_bucket_cap_mb,
#define DDPBENCH_DDP_FLAG_FIELD(X, name, def, flag, label, help) ConfigField::name,
                                               DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_FIELD, _)
#undef DDPBENCH_DDP_FLAG_FIELD
                                               ConfigField::comm_hook,
                                               ConfigField::grad_accum};
// Upper bound of a reference's grad_accum (any larger value is a typo, not a setup).
constexpr int kMaxReferenceGradAccum = 1'000'000;

// Throws when `obj` holds a key outside `allowed`: a misspelt key must not be ignored.
void only_keys(const nlohmann::json& obj, const std::vector<std::string>& allowed, const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      throw UsageError(fmt::format("{}: unknown key '{}'; allowed: {}", where, it.key(), fmt::join(allowed, ", ")));
}

std::string default_backend(const std::string& device) { return device.rfind("CPU", 0) == 0 ? "gloo" : "nccl"; }

// Typed reads of obj[key] that name the key: nlohmann's own errors do not, and its
// get<double>() reads a boolean as 0 or 1.
const std::string kSeeExample = "see docs/reference/example.json";

std::string str_at(const nlohmann::json& obj, const char* key, const std::string& where) {
  const auto& v = obj.at(key);
  if (!v.is_string())
    throw UsageError(fmt::format("{}: \"{}\" must be a string, not {}; {}", where, key, v.type_name(), kSeeExample));
  return v.get<std::string>();
}

double num_at(const nlohmann::json& obj, const char* key, const std::string& where) {
  const auto& v = obj.at(key);
  if (!v.is_number())
    throw UsageError(fmt::format("{}: \"{}\" must be a number, not {}; {}", where, key, v.type_name(), kSeeExample));
  return v.get<double>();
}

bool bool_at(const nlohmann::json& obj, const char* key, const std::string& where) {
  const auto& v = obj.at(key);
  if (!v.is_boolean())
    throw UsageError(
        fmt::format("{}: \"{}\" must be true or false, not {}; {}", where, key, v.type_name(), kSeeExample));
  return v.get<bool>();
}

template <typename T>
T int_at(const nlohmann::json& obj, const char* key, long long lo, long long hi, const std::string& where) {
  try {
    return json_int<T>(obj.at(key), key, lo, hi);
  } catch (const std::invalid_argument&) {
    throw UsageError(fmt::format("{}: \"{}\" must be a whole number in {}..{}; {}", where, key, lo, hi, kSeeExample));
  }
}

ReferenceSetup parse_setup(const nlohmann::json& s, const std::string& where) {
  if (!s.is_object())
    throw UsageError(fmt::format("{}: \"setup\" must be an object such as {{\"precision\": \"fp32-strict\"}}", where));
  std::vector<std::string> names;
  for (auto f : kSetupFields) names.push_back(config_field_name(f));
  only_keys(s, names, where + ".setup");
  const std::string at = where + ".setup";
  ReferenceSetup r;
  if (!s.contains("precision") || !s["precision"].is_string())
    throw UsageError(fmt::format("{}: \"precision\" (fp32, fp32-strict, tf32, fp16 or bf16) is required", at));
  r.precision = s["precision"].get<std::string>();
  try {
    math_of_precision_name(r.precision);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}: {}", at, e.what()));
  }
  if (s.contains("math")) {
    r.math = str_at(s, "math", at);
    static const std::vector<std::string> ok = {"no-tf32", "cudnn-tf32", "tf32", "cublas-tf32", ""};
    if (std::find(ok.begin(), ok.end(), *r.math) == ok.end())
      throw UsageError(fmt::format("{}: math '{}' is not one of no-tf32, cudnn-tf32, tf32, cublas-tf32", at, *r.math));
  }
  if (s.contains("channels_last")) r.channels_last = bool_at(s, "channels_last", at);
  if (s.contains("frozen_backbone")) {
    const auto& f = s["frozen_backbone"];
    if (f.is_boolean() && !f.get<bool>()) r.frozen_backbone = "";
    else if (f.is_string() && !f.get<std::string>().empty()) r.frozen_backbone = f.get<std::string>();
    else throw UsageError(fmt::format("{}: frozen_backbone must be false or the head's name (e.g. \"mlp4096\")", at));
  }
  if (s.contains("backend")) {
    r.backend = str_at(s, "backend", at);
    if (r.backend != "auto" && r.backend != "nccl" && r.backend != "gloo")
      throw UsageError(fmt::format("{}: backend '{}' is not one of auto, nccl, gloo", at, r.backend));
  }
  for (const char* key : {"bucket_cap_mb", "first_bucket_cap_mb"}) {
    if (!s.contains(key)) continue;
    const double mb = num_at(s, key, at);
    if (!(mb > 0 && mb <= kMaxBucketCapMb))
      throw UsageError(fmt::format("{}: {} {} must be a size in (0, {}] MiB, as `run --{}` takes", at, key, mb,
                                   kMaxBucketCapMb, key[0] == 'b' ? "bucket-cap-mb" : "first-bucket-cap-mb"));
    (key[0] == 'b' ? r.bucket_cap_mb : r.first_bucket_cap_mb) = mb;
  }
#define DDPBENCH_READ_DDP_FLAG(X, name, def, flag, label, help) \
  if (s.contains(#name)) r.name = bool_at(s, #name, at);
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_READ_DDP_FLAG, _)
#undef DDPBENCH_READ_DDP_FLAG
  if (s.contains("comm_hook")) {
    r.comm_hook = str_at(s, "comm_hook", at);
    if (r.comm_hook.empty())
      throw UsageError(
          fmt::format("{}: comm_hook must name a hook as `run --comm-hook` takes (\"none\", \"fp16\", "
                      "\"powersgd:2\", ...)",
                      at));
  }
  if (s.contains("grad_accum")) r.grad_accum = int_at<int>(s, "grad_accum", 1, kMaxReferenceGradAccum, at);
  return r;
}

ReferenceEntry parse_entry(const nlohmann::json& e, const std::string& where) {
  if (!e.is_object()) throw UsageError(fmt::format("{}: an entry must be an object", where));
  only_keys(e, kEntryKeys, where);
  for (const auto& k : kRequiredEntryKeys)
    if (!e.contains(k) || e[k].is_null())
      throw UsageError(
          fmt::format("{}: missing \"{}\"; each entry pins {}", where, k, fmt::join(kRequiredEntryKeys, ", ")));
  ReferenceEntry r;
  r.device = str_at(e, "device", where);
  r.model = str_at(e, "model", where);
  if (r.device.empty() || r.model.empty())
    throw UsageError(fmt::format("{}: \"device\" and \"model\" must not be empty (\"*\" is any device)", where));
  // The ranges `run` accepts: an entry outside them could never match a row.
  r.world_size = int_at<int>(e, "world_size", 1, kMaxWorldSize, where);
  r.batch_per_rank = int_at<long long>(e, "batch_per_rank", 1, kMaxBatchSize, where);
  r.image_size = int_at<int>(e, "image_size", 32, kMaxImageSize, where);
  r.setup = parse_setup(e.at("setup"), where);
  r.metric = str_at(e, "metric", where);
  r.value = num_at(e, "value", where);
  if (e.contains("lower") && !e["lower"].is_null()) r.lower = num_at(e, "lower", where);
  if (e.contains("upper") && !e["upper"].is_null()) r.upper = num_at(e, "upper", where);
  if (e.contains("unit")) r.unit = str_at(e, "unit", where);
  if (e.contains("note")) r.note = str_at(e, "note", where);
  if (std::find(check_metrics().begin(), check_metrics().end(), r.metric) == check_metrics().end())
    throw UsageError(
        fmt::format("{}: unknown metric '{}'; use one of {}", where, r.metric, fmt::join(check_metrics(), ", ")));
  if (!(r.value > 0) || !std::isfinite(r.value))
    throw UsageError(fmt::format("{}: value {} must be a positive number", where, r.value));
  if (r.lower && !(*r.lower <= 0 && *r.lower >= -1))
    throw UsageError(
        fmt::format("{}: lower {} must be a fraction in [-1, 0] (e.g. -0.05 for 5% below)", where, *r.lower));
  if (r.upper && !(*r.upper >= 0 && std::isfinite(*r.upper)))
    throw UsageError(fmt::format("{}: upper {} must be a fraction >= 0 (e.g. 0.1 for 10% above)", where, *r.upper));
  if (!r.lower && !r.upper)
    throw UsageError(fmt::format("{}: neither lower nor upper is set, so the entry could never fail; set one", where));
  return r;
}

}  // namespace

const std::vector<std::string>& check_metrics() {
  static const std::vector<std::string> m = [] {
    std::vector<std::string> keys = row_metric_keys(kCheckable);
    keys.push_back("weak_scaling_efficiency");
    keys.push_back("ddp_overhead");
    return keys;
  }();
  return m;
}

ConfigKey ReferenceEntry::expected(const ConfigKey& row) const {
  ConfigKey k = row;
  if (device != "*") k.device = device;
  k.model = model;
  k.world_size = world_size;
  k.batch_per_rank = batch_per_rank;
  k.global_batch = global_batch_of(batch_per_rank, world_size);
  k.image_size = image_size;
  k.scaling = "weak";
  k.ddp = true;
  k.precision = precision_family(setup.precision);
  const bool gpu_row = row.device.rfind("CPU", 0) != 0;
  // The math exists for the fp32 family on GPUs only (ConfigKey::of).
  k.math = gpu_row && k.precision == "fp32" ? setup.math.value_or(math_of_precision_name(setup.precision)) : "";
  k.channels_last = setup.channels_last;
  k.frozen_backbone = setup.frozen_backbone;
  k.backend = setup.backend == "auto" ? default_backend(row.device) : setup.backend;
  k.bucket_cap_mb = setup.bucket_cap_mb;
  k.first_bucket_cap_mb = setup.first_bucket_cap_mb;
#define DDPBENCH_COPY_DDP_FLAG(X, name, def, flag, label, help) k.name = setup.name;
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_COPY_DDP_FLAG, _)
#undef DDPBENCH_COPY_DDP_FLAG
  k.comm_hook = setup.comm_hook;
  k.grad_accum = setup.grad_accum;
  return k;
}

std::vector<ReferenceEntry> parse_reference(const std::string& text, const std::string& source) {
  const nlohmann::json j = parse_json_bounded(text, source, "see docs/reference/example.json");
  if (!j.is_object())
    throw UsageError(fmt::format("{}: not a reference file (an object); see docs/reference/example.json", source));
  only_keys(j, kTopKeys, source);
  if (j.contains("description") && !j["description"].is_string())
    throw UsageError(fmt::format("{}: \"description\" must be a string, not {}; {}", source,
                                 j["description"].type_name(), kSeeExample));
  if (!j.contains("ddpbench_reference") || !j["ddpbench_reference"].is_string())
    throw UsageError(fmt::format("{}: no \"ddpbench_reference\": \"{}.0\" version; see docs/reference/example.json",
                                 source, kReferenceMajor));
  const std::string version = j["ddpbench_reference"].get<std::string>();
  // MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH, digits only.
  int major = -1;
  bool well_formed = !version.empty() && version.size() <= 32 && version.front() != '.' && version.back() != '.' &&
                     version.find("..") == std::string::npos &&
                     version.find_first_not_of("0123456789.") == std::string::npos &&
                     std::count(version.begin(), version.end(), '.') <= 2;
  if (well_formed) {
    const std::string digits = version.substr(0, version.find('.'));
    major = digits.size() > 9 ? std::numeric_limits<int>::max() : std::stoi(digits);  // no int overflow
  }
  if (!well_formed)
    throw UsageError(fmt::format("{}: reference format '{}' is not a version such as \"{}.0\"; {}", source, version,
                                 kReferenceMajor, kSeeExample));
  if (major == 1)
    throw UsageError(
        fmt::format("{}: reference format {} lets entries match rows they were not measured on; give each "
                    "entry batch_per_rank, image_size and setup and set \"ddpbench_reference\": \"2.0\" "
                    "(see docs/reference/example.json)",
                    source, version));
  if (major != kReferenceMajor)
    throw UsageError(fmt::format("{}: reference format '{}' is not readable by this ddpbench (reads {}.x)", source,
                                 version, kReferenceMajor));
  if (!j.contains("references") || !j["references"].is_array())
    throw UsageError(fmt::format("{}: no \"references\" list; see docs/reference/example.json", source));
  std::vector<ReferenceEntry> out;
  for (size_t i = 0; i < j["references"].size(); ++i)
    out.push_back(parse_entry(j["references"][i], fmt::format("{}: references[{}]", source, i)));
  return out;
}

// The measured DDP row closest to what `ref` asked for (fewest differing fields, the first on a
// tie): "resnet50, fp32, batch 32/rank, ... (differs: batch_per_rank: 64 -> 32)"; "" when the
// result has no DDP row.
static std::string nearest_row(const ResultFile& result, const ReferenceEntry& ref) {
  std::string best;
  size_t fewest = std::numeric_limits<size_t>::max();
  for (const auto& r : result.results) {
    if (!r.ddp) continue;
    const ConfigKey k = ConfigKey::of(result, r);
    const auto d = differences(ref.expected(k), k);
    if (d.size() < fewest) {
      fewest = d.size();
      best = fmt::format("{} (differs: {})", k.describe(), describe_differences(d));
    }
  }
  return best;
}

std::vector<CheckRow> check_against(const ResultFile& result, const std::vector<ReferenceEntry>& refs, int& skipped) {
  const std::string device = device_type(result);
  skipped = 0;
  std::optional<Report> report;  // for the efficiency metric, built on first use
  std::vector<CheckRow> out;
  for (const auto& ref : refs) {
    if (ref.device != "*" && ref.device != device) {
      ++skipped;
      continue;
    }
    CheckRow row;
    row.ref = ref;
    if (ref.lower) row.lo = ref.value * (1 + *ref.lower);
    if (ref.upper) row.hi = ref.value * (1 + *ref.upper);
    // The report's weak-scaling table for the metrics it derives (efficiency, DDP overhead).
    const bool from_table = ref.metric == "weak_scaling_efficiency" || ref.metric == "ddp_overhead";
    if (from_table) {
      if (!report) {
        try {
          report = build_report({{"result", result}}, ReportOptions{});
        } catch (const UsageError&) {
          report = Report{};
        }
      }
      for (const auto& t : report->weak)
        for (const auto& w : t.rows) {
          ConfigKey k = t.key;  // the table's configuration at this row's group size
          k.world_size = w.world_size;
          k.global_batch = global_batch_of(k.batch_per_rank, w.world_size);
          if (k == ref.expected(k)) {
            row.row = k;
            row.measured = ref.metric == "ddp_overhead" ? w.ddp_overhead : std::optional<double>(w.efficiency);
            if (w.facts.self_check_passed == false) row.invalid = "self-check failed";
            if (const RowWarning* x = undermining_warning(w.facts.warnings, ref.metric)) row.untrusted = x->code;
          }
        }
    } else {
      for (const auto& r : result.results) {
        const ConfigKey k = ConfigKey::of(result, r);
        if (k != ref.expected(k)) continue;
        row.row = k;
        row.measured = find_row_metric(ref.metric)->of(r);  // parse_entry admitted only check_metrics()
        // A row the run itself declared invalid passes nothing, whatever its numbers.
        row.invalid = r.checks.invalid_reason();
        if (const RowWarning* x = undermining_warning(r.warnings, ref.metric)) row.untrusted = x->code;
      }
    }
    if (!row.row) row.nearest = nearest_row(result, ref);
    const double m = row.measured.value_or(0.0);
    const bool in_range = (!row.lo || *row.lo <= m) && (!row.hi || m <= *row.hi) && std::isfinite(m);
    if (!row.measured) row.status = "MISSING";
    else if (!row.invalid.empty()) row.status = "FAIL (" + row.invalid + ")";
    else if (!in_range) row.status = "FAIL";  // NaN or inf fails
    else row.status = row.untrusted.empty() ? "PASS" : "WARN (" + row.untrusted + ")";
    out.push_back(std::move(row));
  }
  return out;
}

std::string metric_text(const std::string& metric, double v) {
  const RowMetric* m = find_row_metric(metric);
  return (m ? m->format : fmtcol::percent())(Value(v));
}

std::string allowed_range_text(const CheckRow& r) {
  return fmt::format("[{}, {}]", r.lo ? metric_text(r.ref.metric, *r.lo) : "-inf",
                     r.hi ? metric_text(r.ref.metric, *r.hi) : "+inf");
}

std::string render_check_text(const std::vector<CheckRow>& rows, const std::string& device, int skipped) {
  Table head;
  head.kind = "check";
  head.title = fmt::format("Reference check on {}", device);
  // One table per configuration (consecutive entries that pin the same one), titled by it.
  std::vector<Table> tables = {head};
  auto col = [](std::string key, std::string header) {
    return Column{std::move(key), std::move(header), "", fmtcol::plain()};
  };
  int pass = 0, fail = 0, warn = 0, missing = 0;
  std::vector<std::string> nearest;
  for (const auto& r : rows) {
    const std::string unit = r.ref.unit.empty() ? "" : " " + r.ref.unit;
    // The row compared, or (MISSING) what the entry asked for, named by its configuration.
    ConfigKey on_device;
    on_device.device = device;
    ConfigKey shown = r.row ? *r.row : r.ref.expected(on_device);
    const std::string config =
        fmt::format("{}, {}, batch {}/rank, {}, {} rank{}", shown.model, shown.setup_label(), shown.batch_per_rank,
                    shown.input_size(), shown.world_size, shown.world_size == 1 ? "" : "s");
    if (tables.size() == 1 || tables.back().title != config) {
      Table t;
      t.kind = "check";
      t.title = config;
      t.columns = {col("metric", "metric"), col("measured", "measured"), col("reference", "reference"),
                   col("range", "allowed range"), col("status", "status")};
      tables.push_back(std::move(t));
    }
    tables.back().rows.push_back({r.ref.metric,
                                  r.measured ? Value(metric_text(r.ref.metric, *r.measured)) : Value(std::string("-")),
                                  metric_text(r.ref.metric, r.ref.value) + unit, allowed_range_text(r), r.status});
    if (r.status == "PASS") ++pass;
    else if (r.status.rfind("FAIL", 0) == 0) ++fail;
    else if (r.status.rfind("WARN", 0) == 0) ++warn;
    else ++missing;
    if (!r.nearest.empty())
      nearest.push_back(
          fmt::format("MISSING {} ({} ranks): nearest measured row: {}", shown.model, shown.world_size, r.nearest));
  }
  Table sum;
  sum.kind = "check";
  sum.title = fmt::format("{} passed, {} failed, {} warned, {} missing; {} reference entr{} for other devices skipped",
                          pass, fail, warn, missing, skipped, skipped == 1 ? "y" : "ies");
  if (warn > 0)
    sum.notes.push_back(
        "WARN: the value is in range, but a warning of its row makes it untrustworthy (named in brackets: "
        "few_samples and noisy void p95; oversubscribed, negative_ddp_overhead, throughput_drift and gpu_throttled "
        "void every number from step times); it does not pass: measure again (more --iters, a quiet machine)");
  if (missing > 0)
    sum.notes.push_back(
        "MISSING: the result has no weak-scaling DDP row of exactly that configuration (model, batch, "
        "image size, ranks and setup, as listed), or that row does not carry the metric (exposed_comm needs "
        "run --breakdown)");
  for (auto& n : nearest) sum.notes.push_back(std::move(n));
  if (rows.empty())
    sum.notes.push_back(
        fmt::format("FAIL: no reference entry is for {}; nothing was checked (device names must match "
                    "exactly, as `ddpbench report` prints them)",
                    device));
  tables.push_back(std::move(sum));
  return render_tables(tables, TableFormat::text, kCheckTextWidth);
}

}  // namespace ddpbench
