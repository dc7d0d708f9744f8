// Configuration of `ddpbench run` and its validation. Torch-free, so the local
// spawner can reject bad input once, before any rank starts.
#pragma once

#include <nlohmann/json.hpp>

#include "core/config/ddp_settings.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddpbench {

// Bounds of `ddpbench run`'s numbers (validate): values past them are typos or would
// overflow on their way into libtorch, so they are one-line errors before any rank starts.
inline constexpr long long kMaxBatchSize = 1LL << 24;              ///< examples per rank (16777216)
inline constexpr int kMaxImageSize = 16384;                        ///< pixels per side
inline constexpr int kMaxNumClasses = 1'000'000;                   ///< classifier width
inline constexpr int kMaxSeqLen = 1'048'576;                       ///< --seq-len, tokens
inline constexpr int kMaxIters = 100'000'000;                      ///< --iters, --warmup, --min-iters, --max-iters
inline constexpr double kDefaultFirstBucketCapMb = 1.0;            ///< dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB)
inline constexpr double kMaxBucketCapMb = 65536;                   ///< --bucket-cap-mb, --first-bucket-cap-mb (MiB)
inline constexpr double kMaxTimeoutS = 86400;                      ///< --timeout: one day
inline constexpr long long kMaxDatasetSize = 1'000'000'000'000LL;  ///< --dataset-size (examples per epoch)
inline constexpr int kMaxNprocPerNode = 4096;                      ///< --nproc-per-node
inline constexpr int kMaxGradAccum = 1024;                         ///< --grad-accum: micro-steps per optimizer step
inline constexpr int kMaxVariants = 256;              ///< DDP settings swept in one launch (product of the lists)
inline constexpr int kMaxProfileIters = 100;          ///< --profile-iters
inline constexpr int kMaxSampleMs = 60'000;           ///< --sample-ms: telemetry period, ms
inline constexpr double kMaxDurationS = 7 * 86400.0;  ///< --duration: a week

/// Everything `ddpbench run` measures with. Units in the names (_s, _mb).
struct RunConfig {
  std::vector<std::string> models;  ///< models benchmarked in order (torchvision names)
  long long batch_size = 32;        ///< examples per rank per iteration (weak scaling)
  std::string scaling = "weak";     ///< "weak": batch_size per rank; "strong": global_batch_size split over ranks
  long long global_batch_size = 0;  ///< strong scaling: examples per step over a group of N ranks (B/N each)
  int image_size = 224;             ///< square input side, pixels
  int num_classes = 1000;
  /// Language models: tokens per sequence (an example is one sequence; tokens = batch x seq_len).
  int seq_len = 1024;
  /// Language models: transformer blocks and model width instead of the published shape's
  /// (0: the published shape). For tests and small machines.
  int model_layers = 0;
  int model_width = 0;
  /// Which of `models` are language models (AdamW, token batches): set by `run` and `validate`
  /// from the engine's model registry, where the models are checked; the config records the
  /// optimizer from it.
  std::vector<std::string> language_models;
  int warmup = 5;                ///< untimed iterations before each measured series
  int iters = 20;                ///< measured iterations per series (fixed mode)
  bool iters_auto = false;       ///< --iters auto: measure until the CI of the mean is within target_ci_pct
  double target_ci_pct = 1.0;    ///< auto: 95% CI half-width of the mean step time, % of the mean
  int min_iters = 20;            ///< auto: never stop before this many (20: p95 has a sample above it)
  int max_iters = 1000;          ///< auto: stop here even if the CI is wider than the target
  double max_time_s = 120.0;     ///< auto: stop a series once its measured iterations add up to this many s
  std::vector<int> world_sizes;  ///< DDP group sizes; empty: default_world_sizes(world)
  /// DDP bucket_cap_mb values swept (MiB, as PyTorch: x * 1024 * 1024 bytes); one row each.
  std::vector<double> bucket_caps_mb{25.0};
  /// --first-bucket-cap-mb: the first bucket's cap (MiB); unset: DDP's own rule (ddp_variants).
  std::optional<double> first_bucket_cap_mb;
  /// The first bucket's cap is the bucket cap: DDP was given bucket_cap_mb (--bucket-cap-mb) and
  /// the linked torch's DDP caps the first bucket at an explicit bucket_cap_mb (torch 2.x; `run`
  /// sets it from the engine's ddp_explicit_cap_caps_first_bucket()). False: 1 MiB.
  bool bucket_cap_caps_first_bucket = false;
  /// The DDP flag settings (core/config/ddp_settings.hpp): broadcast_buffers,
  /// gradient_as_bucket_view, static_graph, find_unused_parameters, ... at DDP's defaults.
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_MEMBER, _)
  /// Communication hooks swept (--comm-hook; core/config/comm_hook_spec.hpp names), one row each.
  std::vector<std::string> comm_hooks{"none"};
  /// Micro-steps per optimizer step swept (--grad-accum K: K-1 under no_sync, then one
  /// synchronised); a no-DDP baseline runs per distinct (batch, K).
  std::vector<int> grad_accums{1};
  /// Training strategies swept (--strategy ddp,zero2,fsdp), one row each per world size:
  /// "ddp" (the Reducer, once per DDP variant), "zero2" and "fsdp" (sharded data parallel,
  /// engine/dist/sharded.hpp; they ignore the DDP knobs and need grad_accum 1, no fp16).
  std::vector<std::string> strategies{"ddp"};
  /// --activation-checkpointing: every row recomputes each model unit's forward in its
  /// backward instead of keeping its activations (engine/train/checkpoint.hpp).
  bool activation_checkpointing = false;
  /// --cpu-offload: fsdp rows keep their parameter, gradient and momentum shards on the host
  /// between uses and step SGD there (engine/dist/sharded.hpp); GPU runs with fsdp only.
  bool cpu_offload = false;
  std::string profile_dir;       ///< --profile DIR: one trace per rank and row; empty: none
  int profile_iters = 3;         ///< iterations traced after each measured series
  bool print_breakdown = false;  ///< --breakdown: print the step breakdown under each row
  std::string backend = "auto";  ///< "auto", "nccl" or "gloo"
  double timeout_s = 300.0;      ///< store and collective timeout
  double grad_check_tol = 1e-5;  ///< self-check: max |g_r - g_0| allowed, relative to max |g|
  std::string json_path;         ///< result file; empty: none
  long long seed = 0;            ///< base seed, >= 0: models from seed, rank r's data from seed + 1000 + r
  std::string device = "auto";   ///< "auto", "cpu" or "cuda"
  /// fp32 (PyTorch's default math: cuDNN may use TF32) | fp32-strict (TF32 off) | tf32 |
  /// fp16 | bf16 (fp16/bf16: autocast mixed precision)
  std::string precision = "fp32";
  bool channels_last = false;   ///< NHWC memory format for inputs and 4-D parameters
  bool cudnn_benchmark = true;  ///< cuDNN autotuning
  /// Optimizer.zero_grad(set_to_none=...) of the step; unset: the linked torch's default
  /// (True from torch 2.0, False before), which `run` resolves before recording its config.
  std::optional<bool> zero_grad_set_to_none;
  bool freeze_backbone = false;      ///< train only a classifier head (fixed feature extractor)
  std::string head = "mlp4096";      ///< the head trained with freeze_backbone
  long long dataset_size = 1281167;  ///< examples per epoch, for per-epoch communication (ImageNet-1k)
  int sample_ms = 100;               ///< --sample-ms: telemetry sampling period during measured iterations, ms
  /// --per-rank-series: whose raw step samples and telemetry series a row keeps: "flagged"
  /// (core/result/per_rank_detail ranks_kept_in_full) or "all".
  std::string per_rank_series = "flagged";
  /// --instruments-off: the instruments switched off (core/config/instruments.hpp, canonical
  /// order); empty: every one on.
  std::vector<std::string> instruments_off;
  double min_util_pct = 80.0;         ///< --min-util: a GPU whose mean SM utilization is below this is flagged
  double straggler_threshold = 0.95;  ///< --straggler-threshold: a rank whose relative score is below it is named
  bool quiet = false;                 ///< --quiet: no progress output
  double duration_s = 0;              ///< --duration: burn-in, each row's measured series runs this long; 0: off
  // Real data and time-to-loss (engine/bench/time_to_loss.hpp; docs/METHODOLOGY.md "Real data and time-to-loss").
  std::string data = "synthetic";  ///< --data: "synthetic" (the step benchmark) | "fashion-mnist" (time-to-loss)
  std::string data_dir =
      "/usr/share/datasets/fashion-mnist";  ///< --data-dir: the four IDX .gz files (Debian's dataset-fashion-mnist)
  int epochs = 1;  ///< --epochs: most epochs trained per group (stops early once a target is reached)
  std::optional<double> target_loss;      ///< --target-loss: mean cross-entropy on the test split, nats
  std::optional<double> target_accuracy;  ///< --target-accuracy: top-1 accuracy on the test split, fraction in (0, 1]
  int loader_workers = 2;     ///< --loader-workers: batch-building threads per rank (0: built in the step's thread)
  long long train_limit = 0;  ///< --train-limit N: first N training examples only; 0: all
  long long test_limit = 0;   ///< --test-limit N: first N test examples only; 0: all
  double lr = 0.01;           ///< --lr: SGD learning rate of time-to-loss runs (momentum 0.9, weight decay 1e-4)
  /// --mode: "train" (DDP training steps) or "inference" (forward only under no_grad, the
  /// model in eval mode, --precision's autocast; no DDP, no communication: every rank of a
  /// group infers its own batch at the same time; one row per world size).
  std::string mode = "train";
};

// Bounds of the time-to-loss options (validate).
inline constexpr int kMaxTrainEpochs = 10'000;  ///< --epochs
inline constexpr int kMaxLoaderWorkers = 64;    ///< --loader-workers

/// One combination of the list-valued DDP settings: what one DDP row of a group ran with.
struct DdpVariant {
  double bucket_cap_mb = 25.0;
  double first_bucket_cap_mb = 1.0;  ///< MiB: as DDP computes it for this bucket cap (ddp_variants)
  std::string comm_hook = "none";    ///< canonical name (CommHookSpec::name)
  int grad_accum = 1;
};

/// The first bucket's cap (MiB) DDP uses with bucket cap `bucket_cap_mb`: --first-bucket-cap-mb
/// where given, else DDP's rule (torch/nn/parallel/distributed.py, _ddp_init_helper): the bucket
/// cap itself when cfg.bucket_cap_caps_first_bucket, else dist._DEFAULT_FIRST_BUCKET_BYTES.
double first_bucket_cap_mb(const RunConfig& cfg, double bucket_cap_mb);

/// Every combination of cfg.bucket_caps_mb x cfg.comm_hooks x cfg.grad_accums, in flag order
/// (bucket caps outermost, grad_accum innermost). E.g. caps {1, 25}, hooks {none, fp16} -> 4.
/// Each variant's first-bucket cap is first_bucket_cap_mb(cfg, its bucket cap).
std::vector<DdpVariant> ddp_variants(const RunConfig& cfg);

/// The distinct (batch per rank, grad_accum) pairs of the sweep, in first-use order: one
/// no-DDP baseline row each.
std::vector<std::pair<long long, int>> baseline_points(const RunConfig& cfg);

/// Parses a comma list of positive sizes in MiB ("1,5,25"); in order, duplicates dropped.
/// Throws UsageError naming `flag` on anything else or a size outside (0, kMaxBucketCapMb].
std::vector<double> parse_mb_list(const std::string& text, const std::string& flag);

/// Parses a comma list of whole numbers in 1..`max` ("1,4"); in order, duplicates dropped.
/// Throws UsageError naming `flag` on anything else.
std::vector<int> parse_count_list(const std::string& text, const std::string& flag, int max);

/// Parses --comm-hook's comma list into canonical hook names (core/config/comm_hook_spec.hpp), in
/// order, duplicates dropped. Throws UsageError naming the unknown hook and the valid ones.
std::vector<std::string> parse_comm_hook_list(const std::string& text);

/// Parses --strategy's comma list ("ddp,zero2,fsdp"), in order, duplicates dropped.
/// Throws UsageError naming the unknown strategy and the valid ones.
std::vector<std::string> parse_strategy_list(const std::string& text);

/// True when `cfg.strategies` holds "ddp" (the DDP variants' rows run).
bool runs_ddp_strategy(const RunConfig& cfg);
/// The sharded strategies of `cfg.strategies` ("zero2", "fsdp"), in order.
std::vector<std::string> sharded_strategies(const RunConfig& cfg);

/// DDP group sizes swept by default: 1, 2, 4, ... up to `world`, plus `world`
/// itself when it is not a power of two. E.g. 6 -> {1, 2, 4, 6}.
std::vector<int> default_world_sizes(int world);

/// Parses a comma list of positive integers ("1,2,8"); sorted, duplicates dropped.
/// Throws UsageError naming `flag` on anything else.
std::vector<int> parse_int_list(const std::string& text, const std::string& flag);

/// Parses a duration: seconds as a plain number or with a unit, "90", "90s", "30m", "2h"
/// (> 0, at most kMaxDurationS). Throws UsageError naming `flag` on anything else.
double parse_duration_s(const std::string& text, const std::string& flag);

/// Splits "a,b,c" into {"a","b","c"}, dropping empty items.
std::vector<std::string> split_list(const std::string& text);

/// Checks `cfg` for a job of `world` ranks; `known_models` are the registry's names.
/// Throws UsageError (one line: the problem and the fix) on: no, unknown or repeated
/// model; a number outside its range (NaN and infinities are outside every range):
/// --batch-size 1..kMaxBatchSize (2^24), --image-size 32..16384, --num-classes
/// 2..1000000, --iters 1..10^8, --warmup 0..10^8, --seed >= 0, --bucket-cap-mb and
/// --first-bucket-cap-mb in (0, 65536] MiB, --timeout 1..86400 s, --grad-check-tol in
/// (0, 1], --dataset-size 1..10^12, --grad-accum 1..1024, --profile-iters 1..100, --sample-ms 1..60000, --min-util
/// 0..100,
/// --straggler-threshold in (0, 1], --duration in [0, 1 week], at most 256
/// DDP variants, --static-graph with --find-unused-parameters; (auto) a target CI outside (0, 100] %, min iters
/// outside 2..10^8, max iters outside min iters..10^8, max time outside (0, 10^7] s;
/// a world size outside 1..world; an unknown backend, device, precision, head or scaling
/// mode; and for strong scaling a global batch that is missing, above 2^44, gives more than
/// 2^24 examples per rank in some group, or does not divide evenly among the ranks of
/// every group in cfg.world_sizes (resolve those first).
void validate(const RunConfig& cfg, int world, const std::vector<std::string>& known_models);

/// Checks the time-to-loss options (called by validate): --data synthetic | fashion-mnist;
/// with real data --epochs 1..10000, at most one of --target-loss (> 0) and
/// --target-accuracy (0, 1], --loader-workers 0..64, --train-limit/--test-limit >= 0,
/// --lr in (0, 10], --num-classes 10, one plain DDP setting (no comm hook, no grad accum),
/// no --duration / --iters auto / --profile / --freeze-backbone, no fp16. Throws UsageError.
void validate_data(const RunConfig& cfg);

/// Examples per rank in a group of `n` ranks: batch_size (weak) or global_batch_size / n (strong).
long long batch_per_rank(const RunConfig& cfg, int n);

/// Bytes of one rank's fp32 input batch: batch * 3 channels * image_size^2 * 4 bytes.
double input_batch_bytes(long long batch, int image_size);

/// Checks, before ranks start, that the fp32 input batches of the `local_ranks` ranks on
/// this machine fit in `available_bytes` of memory: the largest batch per rank of the
/// sweep (strong scaling: the smallest group's) times input_batch_bytes times
/// `local_ranks`. Only the inputs are counted (activations need several times more), so
/// a failure means the run cannot fit at all. Throws UsageError "--batch-size N at S px
/// needs X GiB per rank for the input batch alone, more than the Y GiB available; ...".
/// Call after validate() (it reads cfg.world_sizes).
void check_input_fits(const RunConfig& cfg, int local_ranks, double available_bytes);

/// MemAvailable of /proc/meminfo-formatted `text`, in bytes; nullopt when absent or malformed.
std::optional<double> parse_mem_available(const std::string& text);

/// MemAvailable of this machine (/proc/meminfo), in bytes; nullopt when it cannot be read.
std::optional<double> mem_available_bytes();

/// Rows a sweep of `cfg` produces (engine/bench/sweep.cpp): per model, one no-DDP row per
/// baseline_points entry, then one DDP row per world size and DDP variant. E.g. weak,
/// 2 models, world sizes {1, 2}, one variant -> 2 * (1 + 2) = 6.
int planned_rows(const RunConfig& cfg);

/// The benchmark groups of a sweep (BenchResult::group, what `run --resume` matches), one row
/// each. The no-DDP baseline's tag in its group and its trace file: "noddp-b16", or
/// "noddp-b16-k4" with 4 micro-steps per step.
std::string baseline_tag(long long batch, int grad_accum);
/// A DDP group of `n` ranks: "resnet18/ddp2", "resnet18/ddp2/v1" (variant 1 of several).
std::string ddp_group(const std::string& model, int n, size_t variant, size_t variants);
/// A --strategy zero2|fsdp group of `n` ranks: "resnet18/zero22", "resnet18/fsdp2".
std::string sharded_group(const std::string& model, const std::string& strategy, int n);
/// A `--mode inference` group of `n` ranks: "resnet18/infer2".
std::string inference_group(const std::string& model, int n);
/// Every group a synthetic-data sweep of `cfg` measures, in sweep order (per model: the
/// baselines, then per world size the DDP variants and the sharded strategies); one per
/// planned row. Empty for a --data (time-to-loss) run, which has no groups.
std::vector<std::string> planned_groups(const RunConfig& cfg);

/// How one key of the result file's "config" object bears on a row's identity, the
/// configuration key report, diff, check and --resume tell rows apart by
/// (core/result/config_key.hpp, ConfigKey::of).
struct ConfigJsonKey {
  enum class From {
    kConfig,       ///< ConfigKey::of reads this key of the config: rows that differ in it never merge
    kRow,          ///< each row carries its own value (a sweep's list here); ConfigKey::of reads the row's
    kEnvironment,  ///< the environment records the resolved value (device type, backend); read from there
    kNot,          ///< not part of the identity: `why` says why rows that differ in it are comparable
  };
  std::string key;
  From from = From::kNot;
  std::string why;  ///< the reason (kNot), or the ConfigKey field it decides
};

/// Every key to_json(RunConfig) writes, once each, with its identity rule. to_json refuses
/// (std::logic_error) a key missing here or written twice, and the catalogue test checks
/// that each identity key changes the configuration key.
const std::vector<ConfigJsonKey>& config_json_keys();

/// The configuration as recorded in the result file's "config" object: exactly the keys of
/// config_json_keys(). Throws std::logic_error when the writer and the catalogue disagree.
nlohmann::json to_json(const RunConfig& cfg);

}  // namespace ddpbench
