#include "core/result/config_key.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <set>
#include <tuple>
#include <utility>

#include "core/config/run_config.hpp"
#include "core/util/errors.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench {
namespace {

constexpr std::array<const char*, kConfigFieldCount> kNames = {
#define DDPBENCH_CONFIG_FIELD_NAME(type, name, init, unset) #name,
    DDPBENCH_CONFIG_KEY_FIELDS(DDPBENCH_CONFIG_FIELD_NAME)
#undef DDPBENCH_CONFIG_FIELD_NAME
};

// Defaults of `ddpbench run` and of torch.nn.parallel.DistributedDataParallel
// (torch/nn/parallel/distributed.py: bucket_cap_mb=25, dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB,
// broadcast_buffers=True, gradient_as_bucket_view=False, static_graph=False,
// find_unused_parameters=False, no comm hook) for rows and files that do not record a setting.
// (kDefaultFirstBucketCapMb: core/config/run_config.hpp).
constexpr double kDefaultBucketCapMb = 25.0;
constexpr const char* kDefaultCommHook = "none";

std::optional<bool> opt_bool(const nlohmann::json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

double num_or(const nlohmann::json& obj, const char* key, double fallback) {
  return json_num_opt(obj, key).value_or(fallback);
}

// An integer setting for the key; `fallback` when absent, not a number or outside int's range
// (a foreign file's value must not be undefined behaviour).
int int_or(const nlohmann::json& obj, const char* key, int fallback) {
  const double v = num_or(obj, key, fallback);
  return v >= -2147483648.0 && v <= 2147483647.0 ? static_cast<int>(v) : fallback;
}

// The backend `ddpbench run --backend auto` picks on the device.
std::string default_backend(const std::string& device) { return device.rfind("CPU", 0) == 0 ? "gloo" : "nccl"; }

std::string num(double v) { return fmt::format("{}", v); }  // shortest round-trip form: exact

// The key's fields as a tuple of references, in ConfigField order.
auto tie(const ConfigKey& k) {
#define DDPBENCH_CONFIG_FIELD_TIE(type, name, init, unset) std::tie(k.name),
  return std::tuple_cat(DDPBENCH_CONFIG_KEY_FIELDS(DDPBENCH_CONFIG_FIELD_TIE) std::tuple<>());
#undef DDPBENCH_CONFIG_FIELD_TIE
}

// A field's display text (ConfigKey::value): exact, so equal texts mean equal values.
std::string text(const std::string& v, const char* unset) { return v.empty() && *unset ? unset : v; }
std::string text(bool v, const char*) { return v ? "true" : "false"; }
std::string text(long long v, const char* unset) { return v <= 0 && *unset ? unset : std::to_string(v); }
std::string text(int v, const char* unset) { return text(static_cast<long long>(v), unset); }
std::string text(double v, const char*) { return num(v); }

}  // namespace

std::string device_type(const ResultFile& f) {
  std::set<std::string> names;
  if (f.environment.contains("gpus") && f.environment["gpus"].is_array())
    for (const auto& g : f.environment["gpus"])
      if (const std::string name = json_str_or(g, "name"); !name.empty()) names.insert(name);
  if (names.empty()) {
    const std::string cpu = json_str_or(f.environment, "cpu_model");
    return cpu.empty() ? "CPU" : "CPU (" + cpu + ")";
  }
  if (names.size() == 1) return *names.begin();
  return "mixed: " + fmt::format("{}", fmt::join(names, " + "));
}

bool on_gpu(const ResultFile& f) {
  const std::string dt = json_str_or(f.environment, "device_type");
  if (!dt.empty()) return dt == "cuda";
  return f.environment.contains("gpus") && f.environment["gpus"].is_array() && !f.environment["gpus"].empty();
}

FieldSet all_fields() { return FieldSet().set(); }

FieldSet fields(std::initializer_list<ConfigField> fs) {
  FieldSet s;
  for (auto f : fs) s.set(static_cast<size_t>(f));
  return s;
}

#define DDPBENCH_DDP_FLAG_FIELD(X, name, def, flag, label, help) ConfigField::name,

FieldSet ddp_only_fields() {
  return fields({ConfigField::backend, ConfigField::bucket_cap_mb, ConfigField::first_bucket_cap_mb,
                 DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_FIELD, _) ConfigField::comm_hook});
}

FieldSet ddp_knob_fields() {
  return fields({ConfigField::bucket_cap_mb, ConfigField::first_bucket_cap_mb,
                 DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_FIELD, _) ConfigField::comm_hook,
                 ConfigField::grad_accum});
}
#undef DDPBENCH_DDP_FLAG_FIELD

const char* config_field_name(ConfigField f) { return kNames[static_cast<size_t>(f)]; }

std::vector<std::string> config_field_names() { return {kNames.begin(), kNames.end()}; }

FieldSet parse_field_list(const std::string& list, const std::string& flag) {
  FieldSet out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (name == "all") {
      out.set();
      continue;
    }
    size_t i = 0;
    while (i < kNames.size() && name != kNames[i]) ++i;
    if (i == kNames.size())
      throw UsageError(fmt::format("{} '{}': unknown field '{}'; use a comma list of {} (or all)", flag, list, name,
                                   fmt::join(kNames, ", ")));
    out.set(i);
  }
  return out;
}

std::string math_from_flags(std::optional<bool> cudnn_tf32, std::optional<bool> cublas_tf32) {
  if (!cudnn_tf32 || !cublas_tf32) return "unrecorded";
  if (*cudnn_tf32 && *cublas_tf32) return "tf32";
  if (*cudnn_tf32) return "cudnn-tf32";
  if (*cublas_tf32) return "cublas-tf32";
  return "no-tf32";
}

std::string math_of_precision_name(const std::string& name) {
  if (name == "fp32") return "cudnn-tf32";
  if (name == "fp32-strict") return "no-tf32";
  if (name == "tf32") return "tf32";
  if (name == "fp16" || name == "bf16") return "";
  throw UsageError(fmt::format("precision '{}' is not one of fp32, fp32-strict, tf32, fp16, bf16", name));
}

std::string precision_family(const std::string& name) {
  return name == "fp32" || name == "fp32-strict" || name == "tf32" ? "fp32" : name;
}

long long global_batch_of(long long batch_per_rank, int world_size) {
  long long g = 0;
  return __builtin_mul_overflow(batch_per_rank, static_cast<long long>(world_size), &g) ? 0 : g;
}

ConfigKey ConfigKey::of(const ResultFile& f, const BenchResult& r) {
  ConfigKey k;
  k.device = device_type(f);
  k.model = r.model;
  k.precision = precision_family(r.precision);
  // TF32 exists only on GPUs, and under autocast (fp16/bf16) convolutions and matmuls run
  // in the low precision whatever the flags say: the flags define the math of fp32 alone.
  if (k.precision == "fp32" && on_gpu(f)) {
    const nlohmann::json math =
        f.environment.is_object() && f.environment.contains("math") ? f.environment["math"] : nlohmann::json::object();
    k.math = math_from_flags(opt_bool(math, "cudnn_allow_tf32"), opt_bool(math, "cublas_allow_tf32"));
  }
  k.channels_last = json_true(f.config, "channels_last");
  if (json_true(f.config, "freeze_backbone")) k.frozen_backbone = json_str_or(f.config, "head", "head");
  k.image_size = r.image_size;
  k.scaling = r.scaling;
  k.batch_per_rank = r.batch_per_rank;
  k.global_batch = r.global_batch > 0 ? r.global_batch : global_batch_of(r.batch_per_rank, r.world_size);
  k.world_size = r.world_size;
  k.ddp = r.ddp;
  // A no-DDP row neither communicates nor buckets: the DDP settings stay at their "not
  // applicable" values, so the baseline of two runs that differ only in them is one configuration.
  if (r.ddp) {
    k.backend = json_str_or(f.environment, "backend");
    // The row's own settings first (schema 1.5: a list-valued sweep gives the rows of one
    // file different values, and the file's config holds the list), then the file's config
    // (older files), then the defaults.
    const RowDdpOptions& o = r.ddp_options;
    const auto setting_num = [&](const std::optional<double>& v, const char* key, double fallback) {
      return v.value_or(num_or(f.config, key, fallback));
    };
    const auto setting_bool = [&](const std::optional<bool>& v, const char* key, bool fallback) {
      return v.value_or(opt_bool(f.config, key).value_or(fallback));
    };
    k.bucket_cap_mb = setting_num(o.bucket_cap_mb, "bucket_cap_mb", kDefaultBucketCapMb);
    k.first_bucket_cap_mb = setting_num(o.first_bucket_cap_mb, "first_bucket_cap_mb", kDefaultFirstBucketCapMb);
#define DDPBENCH_READ_DDP_FLAG(X, name, def, flag, label, help) k.name = setting_bool(o.name, #name, def);
    DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_READ_DDP_FLAG, _)
#undef DDPBENCH_READ_DDP_FLAG
    k.comm_hook = o.comm_hook.value_or(json_str_or(f.config, "comm_hook", kDefaultCommHook));
    if (k.comm_hook.empty()) k.comm_hook = kDefaultCommHook;
  }
  // Every row accumulates (the no-DDP baseline of a --grad-accum K row runs K micro-steps too).
  k.grad_accum = r.grad_accum >= 1 ? r.grad_accum : 1;
  // What else changes a step's time: the classifier's width, cuDNN autotuning (GPUs),
  // threads per rank, and on CPUs glibc's malloc thresholds (docs/METHODOLOGY.md, "ddpbench
  // and Python DDP": untuned, page faults dominate a step).
  k.num_classes = int_or(f.config, "num_classes", 1000);
  // Language-model rows: the sequence length and a reduced shape change what a step computes.
  k.seq_len = r.compute.seq_len.value_or(0);
  if (k.seq_len > 0) {
    const int layers = int_or(f.config, "model_layers", 0), width = int_or(f.config, "model_width", 0);
    if (layers > 0 || width > 0)
      k.model_shape = fmt::format("{} layers, width {}", layers > 0 ? std::to_string(layers) : "published",
                                  width > 0 ? std::to_string(width) : "published");
  }
  const auto on_off = [](std::optional<bool> v) { return v ? (*v ? "on" : "off") : "unrecorded"; };
  const nlohmann::json env = f.environment.is_object() ? f.environment : nlohmann::json::object();
  if (on_gpu(f)) {
    k.cudnn_benchmark = on_off(opt_bool(env.contains("math") ? env["math"] : nlohmann::json(), "cudnn_benchmark"));
  } else {
    k.malloc_tuning =
        on_off(opt_bool(env.contains("malloc_tuning") ? env["malloc_tuning"] : nlohmann::json(), "applied"));
  }
  k.threads_per_rank = int_or(env, "threads_per_rank", 0);
  // Schema 1.7: how the row trains (strategy, recomputation), whether it trains at all
  // (inference), and on what (a time-to-loss row's dataset).
  k.strategy = r.strategy.empty() ? "ddp" : r.strategy;
  k.activation_checkpointing = r.activation_checkpointing;
  k.cpu_offload = r.cpu_offload;
  k.mode = r.mode.empty() ? "train" : r.mode;
  k.data = r.convergence.dataset.value_or("synthetic");
  // Schema 1.8: the step's zero_grad, resolved (earlier files zeroed in place on every torch).
  const std::optional<bool> set_to_none = opt_bool(f.config, "zero_grad_set_to_none");
  k.zero_grad = set_to_none.value_or(false) ? "set_to_none" : "zeros";
  const std::string torch = json_str_or(f.environment, "torch");  // "2.6.0", "1.13.0", "2.11.0+cu130"
  int major = 0;
  for (size_t i = 0; i < torch.size() && i < 4 && std::isdigit(static_cast<unsigned char>(torch[i])); ++i)
    major = major * 10 + (torch[i] - '0');
  // An unrecorded value is compared but not named in labels (every earlier file would say it).
  k.torch_zero_grad_default = !set_to_none ? k.zero_grad : major >= 2 ? "set_to_none" : "zeros";
  return k;
}

std::string ConfigKey::value(ConfigField fld) const {
  if (!ddp && ddp_only_fields().test(static_cast<size_t>(fld))) return "n/a";
  switch (fld) {
#define DDPBENCH_CONFIG_FIELD_TEXT(type, name, init, unset) \
  case ConfigField::name: return text(name, unset);
    DDPBENCH_CONFIG_KEY_FIELDS(DDPBENCH_CONFIG_FIELD_TEXT)
#undef DDPBENCH_CONFIG_FIELD_TEXT
  }
  return "";
}

std::string ConfigKey::precision_label() const {
  if (precision != "fp32") return precision;
  if (math == "no-tf32") return "fp32-strict";
  if (math == "cudnn-tf32") return "fp32 (cuDNN TF32)";
  if (math == "tf32") return "tf32";
  if (math == "cublas-tf32") return "fp32 (cuBLAS TF32)";
  if (math == "unrecorded") return "fp32 (TF32 unrecorded)";
  return precision;
}

std::string ConfigKey::setup_label() const {
  std::string label = precision_label();
  if (channels_last) label += ", channels_last";
  if (!frozen_backbone.empty()) label += ", frozen backbone + " + frozen_backbone;
  if (ddp) {
    // (A key without a device, as the comparison across devices keeps them, names no backend.)
    if (!backend.empty() && !device.empty() && backend != default_backend(device)) label += ", " + backend;
  }
  if (const std::string knobs = knob_label(); !knobs.empty()) label += ", " + knobs;
  if (num_classes != 1000) label += fmt::format(", {} classes", num_classes);
  if (seq_len > 0) label += fmt::format(", seq {}", seq_len);
  if (!model_shape.empty()) label += ", " + model_shape;
  if (cudnn_benchmark == "off") label += ", cuDNN benchmark off";
  if (malloc_tuning == "off") label += ", malloc untuned";
  if (strategy != "ddp") label += ", " + strategy;
  if (activation_checkpointing) label += ", activation checkpointing";
  if (cpu_offload) label += ", CPU offload";
  if (mode != "train") label += ", " + mode;
  if (data != "synthetic") label += ", " + data;
  if (mode == "train" && zero_grad != torch_zero_grad_default) label += ", zero_grad " + zero_grad;
  return label;
}

std::string ConfigKey::knob_label() const {
  std::vector<std::string> parts;
  if (ddp) {
    if (bucket_cap_mb != kDefaultBucketCapMb) parts.push_back("bucket cap " + num(bucket_cap_mb) + " MiB");
    if (first_bucket_cap_mb != kDefaultFirstBucketCapMb)
      parts.push_back("first bucket " + num(first_bucket_cap_mb) + " MiB");
#define DDPBENCH_DDP_FLAG_LABEL(X, name, def, flag, label, help) \
  if (name != def) parts.push_back(label);
    DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_LABEL, _)
#undef DDPBENCH_DDP_FLAG_LABEL
    if (comm_hook != kDefaultCommHook) parts.push_back("comm hook " + comm_hook);
  }
  if (grad_accum != 1) parts.push_back(fmt::format("grad accum {}", grad_accum));
  return fmt::format("{}", fmt::join(parts, ", "));
}

ConfigKey ConfigKey::with_default_knobs() const {
  ConfigKey k = *this;
  if (k.ddp) {
    k.bucket_cap_mb = kDefaultBucketCapMb;
    k.first_bucket_cap_mb = kDefaultFirstBucketCapMb;
#define DDPBENCH_DEFAULT_DDP_FLAG(X, name, def, flag, label, help) k.name = def;
    DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DEFAULT_DDP_FLAG, _)
#undef DDPBENCH_DEFAULT_DDP_FLAG
    k.comm_hook = kDefaultCommHook;
  }
  k.grad_accum = 1;
  return k;
}

std::string ConfigKey::input_label() const {
  return seq_len > 0 ? fmt::format("{}-token sequences", seq_len) : fmt::format("{}x{} images", image_size, image_size);
}

std::string ConfigKey::input_size() const {
  return seq_len > 0 ? fmt::format("{}-token sequences", seq_len) : fmt::format("{} px", image_size);
}

std::string ConfigKey::describe() const {
  const bool gpu = device.rfind("CPU", 0) != 0;
  return fmt::format(
      "{}, {}, batch {}/{}, {}, {} scaling, {}, {}", model, setup_label(), batch_per_rank, gpu ? "GPU" : "rank",
      input_size(), scaling,
      ddp ? fmt::format("DDP on {} {}{}", world_size, gpu ? "GPU" : "rank", world_size == 1 ? "" : "s") : "no DDP",
      device);
}

bool operator==(const ConfigKey& a, const ConfigKey& b) { return tie(a) == tie(b); }
bool operator!=(const ConfigKey& a, const ConfigKey& b) { return !(a == b); }
bool operator<(const ConfigKey& a, const ConfigKey& b) { return tie(a) < tie(b); }

std::vector<FieldDifference> differences(const ConfigKey& a, const ConfigKey& b, const FieldSet& among) {
  // value() is exact (numbers print in their shortest round-trip form), so equal values
  // mean equal fields.
  std::vector<FieldDifference> out;
  for (size_t i = 0; i < kConfigFieldCount; ++i) {
    if (!among.test(i)) continue;
    const auto f = static_cast<ConfigField>(i);
    std::string va = a.value(f), vb = b.value(f);
    if (va != vb) out.push_back({f, std::move(va), std::move(vb)});
  }
  return out;
}

bool same_on(const ConfigKey& a, const ConfigKey& b, const FieldSet& on) { return differences(a, b, on).empty(); }

std::string describe_differences(const std::vector<FieldDifference>& d) {
  std::string out;
  for (const auto& x : d)
    out += fmt::format("{}{}: {} -> {}", out.empty() ? "" : "; ", config_field_name(x.field), x.a, x.b);
  return out;
}

}  // namespace ddpbench
