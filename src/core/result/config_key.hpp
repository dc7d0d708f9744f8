// "The same configuration": the one definition report, diff and check use to decide
// whether two benchmark rows measured the same thing. Torch-free.
// The rules, with why each field is there, are in docs/METHODOLOGY.md ("Same configuration").
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <vector>

#include "core/config/ddp_settings.hpp"
#include "core/result/result.hpp"

namespace ddpbench {

/// Device type of a result file: the GPU name all ranks share, "mixed: A + B" when they
/// differ, or "CPU (<cpu model>)" ("CPU" when unrecorded) for CPU runs.
std::string device_type(const ResultFile& f);

/// True when the file's ranks ran on GPUs (environment.device_type "cuda", or, in files
/// that do not record it, a non-empty environment.gpus list).
bool on_gpu(const ResultFile& f);

/// Every field of a ConfigKey, listed once, in comparison order, as
/// X(type, name, initial value, text when not set): ConfigField, ConfigKey's members, the
/// names `diff --match` and a reference's "setup" object use (config_field_name), the
/// comparison and ConfigKey::value all come from this list. "Not set" is an empty string
/// or an integer <= 0, shown as the last argument where it is not ""; a field of
/// ddp_only_fields() shows "n/a" on a no-DDP row.
/// The DDP flag settings (core/config/ddp_settings.hpp) as key fields: false on no-DDP rows.
#define DDPBENCH_CONFIG_KEY_DDP_FLAG(X, name, def, flag, label, help) X(bool, name, false, "")
// clang-format off
#define DDPBENCH_CONFIG_KEY_FIELDS(X)                                                                              \
  X(std::string, device, "", "")             /* device_type() */                                                 \
  X(std::string, model, "", "")                                                                                    \
  X(std::string, precision, "", "")          /* family: "fp32" (fp32, fp32-strict, tf32), "fp16", "bf16" */       \
  X(std::string, math, "", "n/a")            /* fp32 family on GPUs: no-tf32, cudnn-tf32, tf32, cublas-tf32,      \
                                                unrecorded (math_from_flags); "" otherwise */                      \
  X(bool, channels_last, false, "")                                                                                \
  X(std::string, frozen_backbone, "", "no")  /* the head's name when the backbone is frozen, else "" */           \
  X(std::string, backend, "", "n/a")         /* process-group backend of DDP rows ("" for no-DDP rows) */         \
  X(int, image_size, 0, "")                  /* pixels per side */                                               \
  X(std::string, scaling, "weak", "")        /* "weak" or "strong" */                                            \
  X(long long, batch_per_rank, 0, "")                                                                              \
  X(long long, global_batch, 0, "")          /* batch_per_rank * world_size */                                   \
  X(int, world_size, 1, "")                  /* ranks in the row's group */                                      \
  X(bool, ddp, true, "")                     /* DDP or the no-DDP baseline */                                     \
  X(double, bucket_cap_mb, 0, "")            /* Reducer bucket cap, MiB (DDP rows; 0 for no-DDP rows) */          \
  X(double, first_bucket_cap_mb, 0, "")      /* MiB (DDP rows; 0 for no-DDP rows) */                              \
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_CONFIG_KEY_DDP_FLAG, X) /* DDP rows; false for no-DDP rows */              \
  X(std::string, comm_hook, "", "")          /* "none" by default, "fp16", "powersgd:2", ...; "" for no-DDP rows */ \
  X(int, grad_accum, 1, "")                  /* micro-steps per optimizer step (every row; 1 when unrecorded) */  \
  X(int, num_classes, 1000, "")              /* classifier width (config.num_classes; 1000 when unrecorded) */    \
  X(long long, seq_len, 0, "n/a")            /* language models: tokens per sequence (compute.seq_len); 0 else */ \
  X(std::string, model_shape, "", "published") /* language models: "L layers, width D" (config.model_layers,   \
                                                  model_width) when reduced; "" the published shape */             \
  X(std::string, cudnn_benchmark, "", "n/a") /* GPUs: "on", "off" or "unrecorded" (environment.math); CPUs "" */  \
  X(int, threads_per_rank, 0, "unrecorded")  /* intra-op threads of every rank (environment; 0 unrecorded) */     \
  X(std::string, malloc_tuning, "", "n/a")   /* CPUs: "on", "off" or "unrecorded" (environment.malloc_tuning);    \
                                                GPUs "" (CUDA's caching allocator) */                              \
  X(std::string, strategy, "ddp", "")        /* "ddp", "zero2", "fsdp", "dp", "dp-manual" (schema 1.7) */         \
  X(bool, activation_checkpointing, false, "")                                                                     \
  X(bool, cpu_offload, false, "")            /* fsdp's shards and optimizer state on the host (--cpu-offload) */  \
  X(std::string, mode, "train", "")          /* "train" or "inference" */                                        \
  X(std::string, data, "synthetic", "")      /* "synthetic", or the dataset of a time-to-loss row */             \
  X(std::string, zero_grad, "zeros", "")     /* "set_to_none" or "zeros" (config.zero_grad_set_to_none; files    \
                                                before schema 1.8 zeroed) */
// clang-format on

/// The fields of a ConfigKey (DDPBENCH_CONFIG_KEY_FIELDS), in comparison order.
enum class ConfigField {
#define DDPBENCH_CONFIG_FIELD_ENUM(type, name, init, unset) name,
  DDPBENCH_CONFIG_KEY_FIELDS(DDPBENCH_CONFIG_FIELD_ENUM)
#undef DDPBENCH_CONFIG_FIELD_ENUM
};
#define DDPBENCH_CONFIG_FIELD_COUNT(type, name, init, unset) +1
inline constexpr size_t kConfigFieldCount = 0 DDPBENCH_CONFIG_KEY_FIELDS(DDPBENCH_CONFIG_FIELD_COUNT);
#undef DDPBENCH_CONFIG_FIELD_COUNT

/// A set of ConfigFields (bit i = field i).
using FieldSet = std::bitset<kConfigFieldCount>;

/// Every field.
FieldSet all_fields();
/// The set of the given fields.
FieldSet fields(std::initializer_list<ConfigField> fs);
/// What a DDP row has and a no-DDP row does not: backend, bucket caps, the DDP flag settings
/// (broadcast_buffers, gradient_as_bucket_view, static_graph, ...), comm_hook.
FieldSet ddp_only_fields();
/// The DDP knobs a user tunes without changing the model or the data (the report's
/// "optimization impact" compares rows that differ only in these): bucket_cap_mb,
/// first_bucket_cap_mb, the DDP flag settings, comm_hook and grad_accum.
FieldSet ddp_knob_fields();

/// The field's name as `diff --match` and reference files spell it ("batch_per_rank").
const char* config_field_name(ConfigField f);
/// All field names, in comparison order.
std::vector<std::string> config_field_names();
/// Parses a comma list of field names ("model,world_size"); "all" is every field. Throws
/// UsageError naming an unknown name and listing the valid ones (`flag` names the option).
FieldSet parse_field_list(const std::string& list, const std::string& flag = "--match");

/// fp32-family math on a GPU, from the TF32 flags recorded in environment.math:
/// "no-tf32" (both off: `--precision fp32-strict`; "fp32" before the rename),
/// "cudnn-tf32" (PyTorch's default: cuDNN may use TF32, cuBLAS not; `--precision fp32`),
/// "tf32" (both on), "cublas-tf32" (cuBLAS only). Absent flags give "unrecorded".
std::string math_from_flags(std::optional<bool> cudnn_tf32, std::optional<bool> cublas_tf32);

/// The math `ddpbench run --precision <name>` sets on a GPU (the meaning since the
/// rename): fp32 -> "cudnn-tf32", fp32-strict -> "no-tf32", tf32 -> "tf32"; "" for
/// autocast precisions (fp16, bf16), whose convolutions and matmuls do not run in fp32.
/// Throws UsageError for a name that is not a precision.
std::string math_of_precision_name(const std::string& name);

/// The precision family of a `--precision` name: "fp32" for fp32, fp32-strict and tf32;
/// the name itself otherwise.
std::string precision_family(const std::string& name);

/// batch_per_rank * world_size, or 0 when that overflows (a foreign file's absurd values).
long long global_batch_of(long long batch_per_rank, int world_size);

/// What a row measured, beyond the numbers: two rows are "the same configuration" exactly
/// when their keys are equal. Built from the row and its file, never from the precision
/// name alone: an old file's "fp32" with both TF32 flags off equals a new "fp32-strict".
struct ConfigKey {
#define DDPBENCH_CONFIG_FIELD_MEMBER(type, name, init, unset) type name = init;
  DDPBENCH_CONFIG_KEY_FIELDS(DDPBENCH_CONFIG_FIELD_MEMBER)
#undef DDPBENCH_CONFIG_FIELD_MEMBER
  /// Not compared: what the file's torch does by default ("set_to_none" from torch 2.0,
  /// torch/optim/optimizer.py), so a label names zero_grad only where a job was changed
  /// (unrecorded: zero_grad itself, so files before schema 1.8 are not labelled).
  std::string torch_zero_grad_default = "zeros";

  /// The key of row `r` of file `f`. The DDP settings come from the row's ddp_options
  /// (schema 1.5: one file's rows may differ in them), else the file's config (older files);
  /// settings neither records take Python DDP's (and `ddpbench run`'s) defaults: bucket caps
  /// 25 and 1 MiB, broadcast_buffers true, gradient_as_bucket_view, static_graph and
  /// find_unused_parameters false, comm hook "none"; grad_accum is the row's (1 when absent);
  /// no channels_last, no frozen backbone; math on GPUs comes from environment.math
  /// (math_from_flags).
  static ConfigKey of(const ResultFile& f, const BenchResult& r);

  /// The field's value for display ("fp32", "224", "true", "25").
  std::string value(ConfigField fld) const;

  /// The precision with the math that ran: "fp32-strict" (no TF32), "fp32 (cuDNN TF32)"
  /// (PyTorch's default), "tf32" (both), "fp32 (cuBLAS TF32)", "fp32 (TF32 unrecorded)",
  /// "bf16", "fp16"; the precision alone on CPUs.
  std::string precision_label() const;

  /// Precision with what changes the computation, for titles: "fp32-strict",
  /// "fp32 (cuDNN TF32)", "tf32", "bf16", then ", channels_last", ", frozen backbone +
  /// mlp4096", ", gloo" (a backend other than the device's default), ", bucket cap 50 MiB",
  /// ", first bucket 2 MiB", ", no buffer broadcast", ", gradient as bucket view", ", static
  /// graph", ", find unused parameters", ", comm hook fp16", ", grad accum 4" (DDP knobs other
  /// than the defaults: knob_label), ", 10 classes", ", cuDNN benchmark off", ", malloc
  /// untuned", ", zero2", ", activation checkpointing", ", inference", ", fashion-mnist"
  /// (other than run's defaults).
  /// What one example is, for titles: "224x224 images", or a language model's "1024-token sequences".
  std::string input_label() const;
  /// The input's size in a row's description: "224 px", or "1024-token sequences".
  std::string input_size() const;
  std::string setup_label() const;

  /// The DDP knobs (ddp_knob_fields) that differ from Python DDP's defaults, comma-separated
  /// in field order ("bucket cap 1 MiB, comm hook fp16"); "" when all are at their defaults.
  /// grad_accum is named for no-DDP rows too; the other knobs only for DDP rows.
  std::string knob_label() const;

  /// This key with every DDP knob (ddp_knob_fields) at Python DDP's default: the "plain"
  /// run a tuned one is compared with. A no-DDP key keeps its DDP fields empty (grad_accum 1).
  ConfigKey with_default_knobs() const;

  /// One line naming the whole row: "resnet50, fp32-strict, batch 32/rank, 224 px, weak,
  /// DDP on 1 rank, NVIDIA H100 80GB HBM3".
  std::string describe() const;
};

bool operator==(const ConfigKey& a, const ConfigKey& b);
bool operator!=(const ConfigKey& a, const ConfigKey& b);
/// Lexicographic in ConfigField order (so maps of keys iterate by device, then model, ...).
bool operator<(const ConfigKey& a, const ConfigKey& b);

/// True when `a` and `b` agree on every field in `on`.
bool same_on(const ConfigKey& a, const ConfigKey& b, const FieldSet& on);

/// One field where two keys differ.
struct FieldDifference {
  ConfigField field;
  std::string a, b;  ///< values for display
};

/// The fields in `among` where `a` and `b` differ, in field order.
std::vector<FieldDifference> differences(const ConfigKey& a, const ConfigKey& b, const FieldSet& among = all_fields());

/// "precision: fp32 -> bf16; batch_per_rank: 32 -> 64" (empty for no differences).
std::string describe_differences(const std::vector<FieldDifference>& d);

}  // namespace ddpbench
