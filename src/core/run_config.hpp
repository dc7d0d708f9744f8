// Configuration of `ddpbench run` and its validation. Torch-free, so the local
// spawner can reject bad input once, before any rank starts.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ddpbench {

/// Everything `ddpbench run` measures with. Units in the names (_s, _mb).
struct RunConfig {
  std::vector<std::string> models;  ///< models benchmarked in order (torchvision names)
  long long batch_size = 32;        ///< examples per rank per iteration (weak scaling)
  std::string scaling = "weak";     ///< "weak": batch_size per rank; "strong": global_batch_size split over ranks
  long long global_batch_size = 0;  ///< strong scaling: examples per step over a group of N ranks (B/N each)
  int image_size = 224;             ///< square input side, pixels
  int num_classes = 1000;
  int warmup = 5;                   ///< untimed iterations before each measured series
  int iters = 20;                   ///< measured iterations per series (fixed mode)
  bool iters_auto = false;          ///< --iters auto: measure until the CI of the mean is within target_ci_pct
  double target_ci_pct = 1.0;       ///< auto: 95% CI half-width of the mean step time, % of the mean
  int min_iters = 20;               ///< auto: never stop before this many (20: p95 has a sample above it)
  int max_iters = 1000;             ///< auto: stop here even if the CI is wider than the target
  double max_time_s = 120.0;        ///< auto: stop a series once its measured iterations add up to this many s
  std::vector<int> world_sizes;     ///< DDP group sizes; empty: default_world_sizes(world)
  double bucket_cap_mb = 25.0;      ///< DDP bucket_cap_mb (MiB, as PyTorch: x * 1024 * 1024 bytes)
  double first_bucket_cap_mb = 1.0; ///< first bucket's cap (dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB)
  bool broadcast_buffers = true;    ///< DDP broadcast_buffers (BatchNorm statistics from rank 0 each step)
  std::string backend = "auto";     ///< "auto", "nccl" or "gloo"
  double timeout_s = 300.0;         ///< store and collective timeout
  double grad_check_tol = 1e-5;     ///< self-check: max |g_r - g_0| allowed, relative to max |g|
  std::string json_path;            ///< result file; empty: none
  unsigned long long seed = 0;      ///< base seed: models from seed, rank r's data from seed + 1000 + r
  std::string device = "auto";      ///< "auto", "cpu" or "cuda"
  /// fp32 (PyTorch's default math: cuDNN may use TF32) | fp32-strict (TF32 off) | tf32 |
  /// fp16 | bf16 (fp16/bf16: autocast mixed precision)
  std::string precision = "fp32";
  bool channels_last = false;       ///< NHWC memory format for inputs and 4-D parameters
  bool cudnn_benchmark = true;      ///< cuDNN autotuning
  bool freeze_backbone = false;     ///< train only a classifier head (fixed feature extractor)
  std::string head = "mlp4096";     ///< the head trained with freeze_backbone
  long long dataset_size = 1281167; ///< examples per epoch, for per-epoch communication (ImageNet-1k)
};

/// DDP group sizes swept by default: 1, 2, 4, ... up to `world`, plus `world`
/// itself when it is not a power of two. E.g. 6 -> {1, 2, 4, 6}.
std::vector<int> default_world_sizes(int world);

/// Parses a comma list of positive integers ("1,2,8"); sorted, duplicates dropped.
/// Throws UsageError naming `flag` on anything else.
std::vector<int> parse_int_list(const std::string& text, const std::string& flag);

/// Splits "a,b,c" into {"a","b","c"}, dropping empty items.
std::vector<std::string> split_list(const std::string& text);

/// Checks `cfg` for a job of `world` ranks; `known_models` are the registry's names.
/// Throws UsageError (one line: the problem and the fix) on: no, unknown or repeated
/// model, batch <= 0, image size < 32, iters < 1, warmup < 0, (auto) a target CI outside
/// (0, 100] %, min iters < 2, max iters < min iters, max time <= 0, a world size outside
/// 1..world, bucket caps <= 0, timeout < 1 s, an unknown backend, device or scaling mode, and for
/// strong scaling a global batch that is missing or does not divide evenly among the
/// ranks of every group in cfg.world_sizes (resolve those first).
void validate(const RunConfig& cfg, int world, const std::vector<std::string>& known_models);

/// Examples per rank in a group of `n` ranks: batch_size (weak) or global_batch_size / n (strong).
long long batch_per_rank(const RunConfig& cfg, int n);

/// Rows a sweep of `cfg` produces (engine/bench/sweep.cpp): per model, one no-DDP row per
/// distinct batch_per_rank over cfg.world_sizes (one in weak scaling), then one DDP row per
/// world size. E.g. weak, 2 models, world sizes {1, 2} -> 2 * (1 + 2) = 6.
int planned_rows(const RunConfig& cfg);

/// The configuration as recorded in the result file's "config" object.
nlohmann::json to_json(const RunConfig& cfg);

}  // namespace ddpbench
