#include "core/config/run_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "core/config/comm_hook_spec.hpp"
#include "core/config/run_options.hpp"
#include "core/launch/launch_env.hpp"
#include "core/util/errors.hpp"
#include "core/util/parse.hpp"

namespace ddpbench {

std::vector<int> default_world_sizes(int world) {
  std::vector<int> out;
  for (int n = 1; n <= world; n *= 2) out.push_back(n);
  if (out.empty() || out.back() != world) out.push_back(world);
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

std::vector<int> parse_int_list(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  for (const auto& item : split_list(text)) {
    long long v = 0;
    if (!is_decimal(item))
      throw UsageError(
          fmt::format("{} '{}' is not a comma list of whole numbers; pass e.g. {} 1,2,4", flag, text, flag));
    try {
      v = parse_int(item, flag);
    } catch (const UsageError&) {  // beyond 64 bits
      v = kMaxWorldSize + 1;
    }
    if (v < 1 || v > kMaxWorldSize)
      throw UsageError(fmt::format("{} has {}; sizes must be 1..{}", flag, item, kMaxWorldSize));
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw UsageError(fmt::format("{} is empty; pass e.g. {} 1,2", flag, flag));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void validate_data(const RunConfig& cfg) {
  if (cfg.data != "synthetic" && cfg.data != "fashion-mnist")
    throw UsageError(fmt::format("--data '{}' is unknown; use synthetic or fashion-mnist", cfg.data));
  if (cfg.data == "synthetic") return;
  const std::string d = "--data " + cfg.data;
  if (cfg.epochs < 1 || cfg.epochs > kMaxTrainEpochs)
    throw UsageError(fmt::format("--epochs {} is out of range; use 1..{}", cfg.epochs, kMaxTrainEpochs));
  if (cfg.target_loss && cfg.target_accuracy)
    throw UsageError("--target-loss and --target-accuracy are both given; give one target (or none: all --epochs)");
  if (cfg.target_loss && !(*cfg.target_loss > 0 && *cfg.target_loss < 1e6))
    throw UsageError(
        fmt::format("--target-loss {} is out of range; use a test cross-entropy > 0, e.g. 0.5", *cfg.target_loss));
  if (cfg.target_accuracy && !(*cfg.target_accuracy > 0 && *cfg.target_accuracy <= 1))
    throw UsageError(
        fmt::format("--target-accuracy {} is out of range; use a fraction in (0, 1], e.g. 0.85", *cfg.target_accuracy));
  if (cfg.loader_workers < 0 || cfg.loader_workers > kMaxLoaderWorkers)
    throw UsageError(
        fmt::format("--loader-workers {} is out of range; use 0..{}", cfg.loader_workers, kMaxLoaderWorkers));
  if (cfg.train_limit < 0 || cfg.test_limit < 0)
    throw UsageError("--train-limit and --test-limit are example counts >= 0 (0: the whole split)");
  if (!(cfg.lr > 0 && cfg.lr <= 10))
    throw UsageError(fmt::format("--lr {} is out of range; use a learning rate in (0, 10]", cfg.lr));
  if (cfg.data_dir.empty()) throw UsageError("--data-dir is empty; give the folder of the dataset's IDX .gz files");
  if (cfg.num_classes != 10)
    throw UsageError(fmt::format("{} has 10 classes but --num-classes is {}; drop --num-classes", d, cfg.num_classes));
  if (ddp_variants(cfg).size() != 1 || cfg.comm_hooks.front() != "none" || cfg.grad_accums.front() != 1)
    throw UsageError(
        fmt::format("{} trains with one plain DDP setting; give one --bucket-cap-mb and drop "
                    "--comm-hook and --grad-accum",
                    d));
  if (cfg.duration_s > 0 || cfg.iters_auto || !cfg.profile_dir.empty() || cfg.freeze_backbone)
    throw UsageError(
        fmt::format("{} trains for --epochs; drop --duration, --iters auto, --profile and "
                    "--freeze-backbone (step-time options)",
                    d));
  if (cfg.precision == "fp16")
    throw UsageError(fmt::format("{} trains in fp32 or bf16; use --precision fp32 or bf16", d));
}

namespace {

// Checks --model: at least one, each once, each a known model.
void check_model_list(const RunConfig& cfg, const std::vector<std::string>& known_models) {
  if (cfg.models.empty()) throw UsageError("no model given; pass --model resnet50 (see 'ddpbench models')");
  for (size_t i = 0; i < cfg.models.size(); ++i)
    if (std::find(cfg.models.begin(), cfg.models.begin() + static_cast<std::ptrdiff_t>(i), cfg.models[i]) !=
        cfg.models.begin() + static_cast<std::ptrdiff_t>(i))
      throw UsageError(fmt::format("--model lists '{}' twice; name each model once", cfg.models[i]));
  for (const auto& m : cfg.models)
    if (std::find(known_models.begin(), known_models.end(), m) == known_models.end())
      throw UsageError(fmt::format("unknown model '{}'; choose one of: {} (see 'ddpbench models')", m,
                                   fmt::join(known_models, ", ")));
}

// Checks the range of --batch-size, --image-size and --iters, and with --iters auto its
// stopping rule (--target-ci, --min-iters, --max-iters, --max-time).
void check_batch_image_iters(const RunConfig& cfg) {
  if (cfg.batch_size < 1)
    throw UsageError(fmt::format("--batch-size {} must be >= 1 (examples per rank)", cfg.batch_size));
  if (cfg.batch_size > kMaxBatchSize)
    throw UsageError(
        fmt::format("--batch-size {} is out of range; use 1..{} (examples per rank)", cfg.batch_size, kMaxBatchSize));
  if (cfg.image_size < 32)
    throw UsageError(fmt::format("--image-size {} is too small; ResNets need >= 32 pixels", cfg.image_size));
  if (cfg.image_size > kMaxImageSize)
    throw UsageError(fmt::format("--image-size {} is out of range; use 32..{} pixels", cfg.image_size, kMaxImageSize));
  if (cfg.iters < 1 || cfg.iters > kMaxIters)
    throw UsageError(fmt::format("--iters {} must be 1..{} (or auto)", cfg.iters, kMaxIters));
  if (cfg.iters_auto) {
    if (!(cfg.target_ci_pct > 0 && cfg.target_ci_pct <= 100))
      throw UsageError(fmt::format("--target-ci {} must be a percentage in (0, 100], e.g. 1", cfg.target_ci_pct));
    if (cfg.min_iters < 2 || cfg.min_iters > kMaxIters)
      throw UsageError(
          fmt::format("--min-iters {} must be >= 2 (a CI needs two samples) and <= {}", cfg.min_iters, kMaxIters));
    if (cfg.max_iters < cfg.min_iters || cfg.max_iters > kMaxIters)
      throw UsageError(
          fmt::format("--max-iters {} must be >= --min-iters {} and <= {}", cfg.max_iters, cfg.min_iters, kMaxIters));
    if (!(cfg.max_time_s > 0 && cfg.max_time_s <= 1e7))
      throw UsageError(fmt::format("--max-time {} must be a number of seconds in (0, 10000000]", cfg.max_time_s));
  }
}

// Checks --seed is >= 0 and every --world-sizes entry is 1..world (the job's ranks).
void check_seed_and_world_sizes(const RunConfig& cfg, int world) {
  if (cfg.seed < 0) throw UsageError(fmt::format("--seed {} must be >= 0", cfg.seed));
  for (int n : cfg.world_sizes)
    if (n < 1 || n > world)
      throw UsageError(
          fmt::format("--world-sizes has {} but the job has {} rank(s); pass sizes up to {} or launch "
                      "more ranks (--nproc-per-node)",
                      n, world, world));
}

// Checks the DDP sweep: --bucket-cap-mb, --comm-hook and --grad-accum each non-empty and in
// range, and their combinations at most kMaxVariants.
void check_ddp_sweep(const RunConfig& cfg) {
  // Bounds as closed ranges that NaN fails too: !(lo <= x && x <= hi).
  if (cfg.bucket_caps_mb.empty()) throw UsageError("--bucket-cap-mb is empty; pass e.g. --bucket-cap-mb 25");
  for (double mb : cfg.bucket_caps_mb)
    if (!(mb > 0 && mb <= kMaxBucketCapMb))
      throw UsageError(
          fmt::format("--bucket-cap-mb {} is out of range; use a size in (0, {}] MiB", mb, kMaxBucketCapMb));
  if (cfg.comm_hooks.empty()) throw UsageError("--comm-hook is empty; pass e.g. --comm-hook none,fp16");
  if (cfg.grad_accums.empty()) throw UsageError("--grad-accum is empty; pass e.g. --grad-accum 1,4");
  for (int k : cfg.grad_accums)
    if (k < 1 || k > kMaxGradAccum)
      throw UsageError(
          fmt::format("--grad-accum {} is out of range; use 1..{} micro-steps per optimizer step", k, kMaxGradAccum));
  const size_t variants = cfg.bucket_caps_mb.size() * cfg.comm_hooks.size() * cfg.grad_accums.size();
  if (variants > static_cast<size_t>(kMaxVariants))
    throw UsageError(
        fmt::format("--bucket-cap-mb, --comm-hook and --grad-accum give {} combinations, more than {}; "
                    "sweep fewer values per launch",
                    variants, kMaxVariants));
}

// Checks --strategy (known names) and what goes with it: --cpu-offload needs fsdp, zero2/fsdp
// take no fp16 or --grad-accum, and --comm-hook needs ddp.
void check_strategies(const RunConfig& cfg) {
  if (cfg.strategies.empty()) throw UsageError("--strategy is empty; pass e.g. --strategy ddp,zero2,fsdp");
  for (const auto& st : cfg.strategies)
    if (st != "ddp" && st != "zero2" && st != "fsdp")
      throw UsageError(fmt::format("--strategy '{}' is unknown; use ddp, zero2 or fsdp", st));
  if (cfg.cpu_offload && std::find(cfg.strategies.begin(), cfg.strategies.end(), "fsdp") == cfg.strategies.end())
    throw UsageError("--cpu-offload offloads fsdp's shards; add fsdp to --strategy (e.g. --strategy ddp,fsdp)");
  if (!sharded_strategies(cfg).empty()) {
    if (cfg.precision == "fp16")
      throw UsageError("--strategy zero2/fsdp has no fp16 loss scaling; use --precision fp32 or bf16 with them");
    if (cfg.grad_accums.size() != 1 || cfg.grad_accums.front() != 1)
      throw UsageError("--strategy zero2/fsdp steps once per micro-batch; drop --grad-accum (it applies to ddp rows)");
  }
  if (!runs_ddp_strategy(cfg) && (cfg.comm_hooks.size() != 1 || cfg.comm_hooks.front() != "none"))
    throw UsageError(
        "--comm-hook registers a DDP communication hook and zero2/fsdp rows have none; add ddp to --strategy "
        "(e.g. --strategy ddp,zero2) or drop --comm-hook");
}

// Checks the DDP unused-parameter flags agree: --skip-all-reduce-unused-params needs
// --find-unused-parameters, which --static-graph excludes.
void check_unused_parameter_flags(const RunConfig& cfg) {
  if (cfg.skip_all_reduce_unused_params && !cfg.find_unused_parameters)
    throw UsageError(
        "--skip-all-reduce-unused-params skips the unused parameters that --find-unused-parameters finds; add "
        "--find-unused-parameters or drop it");
  if (cfg.static_graph && cfg.find_unused_parameters)
    throw UsageError(
        "--static-graph already handles unused parameters (PyTorch: static_graph supersedes "
        "find_unused_parameters); pass one of them");
}

// Checks the telemetry and output options: --per-rank-series, --min-util, --straggler-threshold.
void check_telemetry_thresholds(const RunConfig& cfg) {
  if (cfg.per_rank_series != "flagged" && cfg.per_rank_series != "all")
    throw UsageError(fmt::format("--per-rank-series '{}' is unknown; use flagged or all", cfg.per_rank_series));
  if (!(cfg.min_util_pct >= 0 && cfg.min_util_pct <= 100))
    throw UsageError(fmt::format("--min-util {} is out of range; use a percentage 0..100", cfg.min_util_pct));
  if (!(cfg.straggler_threshold > 0 && cfg.straggler_threshold <= 1))
    throw UsageError(fmt::format("--straggler-threshold {} is out of range; use a score in (0, 1], e.g. 0.95",
                                 cfg.straggler_threshold));
}

// Checks the range of --duration, --first-bucket-cap-mb, --timeout and --grad-check-tol.
void check_run_limits(const RunConfig& cfg) {
  if (!(cfg.duration_s >= 0 && cfg.duration_s <= kMaxDurationS))
    throw UsageError(
        fmt::format("--duration {} s is out of range; use up to {} s (a week)", cfg.duration_s, kMaxDurationS));
  if (cfg.first_bucket_cap_mb && !(*cfg.first_bucket_cap_mb > 0 && *cfg.first_bucket_cap_mb <= kMaxBucketCapMb))
    throw UsageError(fmt::format("--first-bucket-cap-mb {} is out of range; use a size in (0, {}] MiB",
                                 *cfg.first_bucket_cap_mb, kMaxBucketCapMb));
  if (!(cfg.timeout_s >= 1 && cfg.timeout_s <= kMaxTimeoutS))
    throw UsageError(fmt::format("--timeout {} is out of range; use 1..{} seconds", cfg.timeout_s, kMaxTimeoutS));
  if (!(cfg.grad_check_tol > 0 && cfg.grad_check_tol <= 1))
    throw UsageError(
        fmt::format("--grad-check-tol {} is out of range; use a fraction in (0, 1] of max |g|", cfg.grad_check_tol));
}

// Checks --backend, --device and --precision are known names.
void check_backend_device_precision(const RunConfig& cfg) {
  if (cfg.backend != "auto" && cfg.backend != "nccl" && cfg.backend != "gloo")
    throw UsageError(fmt::format("--backend '{}' is unknown; use nccl or gloo", cfg.backend));
  if (cfg.device != "auto" && cfg.device != "cpu" && cfg.device != "cuda")
    throw UsageError(fmt::format("--device '{}' is unknown; use cpu or cuda", cfg.device));
  if (cfg.precision != "fp32" && cfg.precision != "fp32-strict" && cfg.precision != "tf32" && cfg.precision != "fp16" &&
      cfg.precision != "bf16")
    throw UsageError(
        fmt::format("--precision '{}' is unknown; use fp32, fp32-strict, tf32, fp16 or bf16", cfg.precision));
}

// Checks --mode is known and its combinations with --strategy and --data (and --data's with
// --strategy).
void check_mode_combinations(const RunConfig& cfg) {
  if (cfg.mode != "train" && cfg.mode != "inference")
    throw UsageError(fmt::format("--mode '{}' is unknown; use train or inference", cfg.mode));
  if (cfg.mode == "inference" && !sharded_strategies(cfg).empty())
    throw UsageError("--mode inference runs forward passes without a training strategy; drop --strategy");
  if (cfg.mode == "inference" && cfg.data != "synthetic")
    throw UsageError("--mode inference measures forward passes on synthetic data; drop --data (or --mode)");
  if (cfg.data != "synthetic" && !sharded_strategies(cfg).empty())
    throw UsageError(
        fmt::format("--data {} trains with DDP only (time-to-loss has no zero2/fsdp yet); drop --strategy", cfg.data));
}

// Checks --head is known and --dataset-size is in range.
void check_head_and_dataset_size(const RunConfig& cfg) {
  if (cfg.head != "mlp4096") throw UsageError(fmt::format("--head '{}' is unknown; use mlp4096", cfg.head));
  if (cfg.dataset_size < 1 || cfg.dataset_size > kMaxDatasetSize)
    throw UsageError(fmt::format("--dataset-size {} is out of range; use 1..{}", cfg.dataset_size, kMaxDatasetSize));
}

// The least common multiple of the group sizes, or 0 when it does not fit in 2^62.
long long world_sizes_lcm(const std::vector<int>& world_sizes) {
  long long lcm = 1;
  for (int m : world_sizes) {
    lcm = lcm / std::gcd(lcm, static_cast<long long>(m));
    if (lcm > (1LL << 62) / m) {
      lcm = 0;
      break;
    }
    lcm *= m;
  }
  return lcm;
}

// Checks --global-batch-size for --scaling strong: given, in range, divisible by every group
// size in --world-sizes, and at most kMaxBatchSize per rank in each.
void check_strong_scaling(const RunConfig& cfg) {
  if (cfg.global_batch_size <= 0)
    throw UsageError("--scaling strong needs --global-batch-size B (examples per step, split over the ranks)");
  if (cfg.global_batch_size > kMaxBatchSize * kMaxWorldSize)
    throw UsageError(fmt::format("--global-batch-size {} is out of range; use 1..{}", cfg.global_batch_size,
                                 kMaxBatchSize * kMaxWorldSize));
  for (int n : cfg.world_sizes)
    if (cfg.global_batch_size % n != 0) {
      // The smallest batch that works: the LCM of the group sizes (when it fits in 2^62).
      const long long lcm = world_sizes_lcm(cfg.world_sizes);
      const std::string hint = lcm > 0 ? fmt::format("a multiple of {}", lcm) : "a multiple of every group size";
      throw UsageError(
          fmt::format("--global-batch-size {} does not divide among {} ranks; use {} "
                      "(every group size in --world-sizes must divide it)",
                      cfg.global_batch_size, n, hint));
    }
  for (int n : cfg.world_sizes)
    if (cfg.global_batch_size / n > kMaxBatchSize)
      throw UsageError(
          fmt::format("--global-batch-size {} gives {} examples per rank at {} rank(s), more than {}; "
                      "use a smaller global batch or larger --world-sizes",
                      cfg.global_batch_size, cfg.global_batch_size / n, n, kMaxBatchSize));
}

// Checks --scaling is weak or strong, and --global-batch-size against it.
void check_scaling(const RunConfig& cfg) {
  if (cfg.scaling != "weak" && cfg.scaling != "strong")
    throw UsageError(fmt::format("--scaling '{}' is unknown; use weak or strong", cfg.scaling));
  if (cfg.scaling == "strong") {
    check_strong_scaling(cfg);
  } else if (cfg.global_batch_size != 0) {
    throw UsageError("--global-batch-size is for --scaling strong; use --batch-size for weak scaling");
  }
}

}  // namespace

void validate(const RunConfig& cfg, int world, const std::vector<std::string>& known_models) {
  check_model_list(cfg, known_models);
  check_batch_image_iters(cfg);
  check_option_bounds(cfg);  // --warmup, --num-classes, --profile-iters, --sample-ms (run_options)
  check_seed_and_world_sizes(cfg, world);
  check_ddp_sweep(cfg);
  check_strategies(cfg);
  check_unused_parameter_flags(cfg);
  check_telemetry_thresholds(cfg);
  validate_data(cfg);
  check_run_limits(cfg);
  check_backend_device_precision(cfg);
  check_mode_combinations(cfg);
  check_head_and_dataset_size(cfg);
  check_scaling(cfg);
}

long long batch_per_rank(const RunConfig& cfg, int n) {
  return cfg.scaling == "strong" ? cfg.global_batch_size / n : cfg.batch_size;
}

double input_batch_bytes(long long batch, int image_size) {
  return static_cast<double>(batch) * 3.0 * static_cast<double>(image_size) * static_cast<double>(image_size) * 4.0;
}

void check_input_fits(const RunConfig& cfg, int local_ranks, double available_bytes) {
  // Every rank warms up alone at the first (smallest) group's batch: the largest per rank.
  long long batch = cfg.batch_size;
  int at_ranks = 1;
  if (cfg.scaling == "strong") {
    batch = 0;
    for (int n : cfg.world_sizes)
      if (batch_per_rank(cfg, n) > batch) {
        batch = batch_per_rank(cfg, n);
        at_ranks = n;
      }
  }
  const double per_rank = input_batch_bytes(batch, cfg.image_size);
  const double all = per_rank * std::max(1, local_ranks);
  if (all <= available_bytes) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const std::string flag = cfg.scaling == "strong" ? fmt::format("--global-batch-size {} ({} per rank at {} rank(s))",
                                                                 cfg.global_batch_size, batch, at_ranks)
                                                   : fmt::format("--batch-size {}", batch);
  const std::string ranks =
      local_ranks > 1 ? fmt::format(" ({:.1f} GiB for the {} ranks on this machine)", all / kGiB, local_ranks) : "";
  throw UsageError(
      fmt::format("{} at {} px needs {:.1f} GiB per rank for the input batch alone{}, more than the "
                  "{:.1f} GiB available; use a smaller {} or --image-size",
                  flag, cfg.image_size, per_rank / kGiB, ranks, available_bytes / kGiB,
                  cfg.scaling == "strong" ? "--global-batch-size" : "--batch-size"));
}

std::optional<double> parse_mem_available(const std::string& text) {
  // The line "MemAvailable:   12345678 kB".
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(std::string("MemAvailable:").size()));
    double kib = -1;
    std::string unit;
    if (!(fields >> kib >> unit) || unit != "kB" || !(kib >= 0) || !std::isfinite(kib)) return std::nullopt;
    return kib * 1024.0;
  }
  return std::nullopt;
}

std::optional<double> mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return parse_mem_available(text.str());
}

double first_bucket_cap_mb(const RunConfig& cfg, double bucket_cap_mb) {
  return cfg.first_bucket_cap_mb.value_or(cfg.bucket_cap_caps_first_bucket ? bucket_cap_mb : kDefaultFirstBucketCapMb);
}

std::vector<DdpVariant> ddp_variants(const RunConfig& cfg) {
  std::vector<DdpVariant> out;
  for (double mb : cfg.bucket_caps_mb)
    for (const auto& hook : cfg.comm_hooks)
      for (int k : cfg.grad_accums) out.push_back({mb, first_bucket_cap_mb(cfg, mb), hook, k});
  return out;
}

std::vector<std::pair<long long, int>> baseline_points(const RunConfig& cfg) {
  std::vector<std::pair<long long, int>> out;
  for (int n : cfg.world_sizes)
    for (int k : cfg.grad_accums) {
      const std::pair<long long, int> p{batch_per_rank(cfg, n), k};
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  return out;
}

std::vector<double> parse_mb_list(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  for (const auto& item : split_list(text)) {
    double v = 0;
    size_t used = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.find_first_not_of("0123456789.") != std::string::npos)
      throw UsageError(
          fmt::format("{} '{}' is not a comma list of sizes in MiB; pass e.g. {} 1,5,25", flag, text, flag));
    if (!(v > 0 && v <= kMaxBucketCapMb))
      throw UsageError(fmt::format("{} {} is out of range; use a size in (0, {}] MiB", flag, item, kMaxBucketCapMb));
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) throw UsageError(fmt::format("{} is empty; pass e.g. {} 25", flag, flag));
  return out;
}

std::vector<int> parse_count_list(const std::string& text, const std::string& flag, int max) {
  std::vector<int> out;
  for (const auto& item : split_list(text)) {
    if (!is_decimal(item) || item[0] == '-' || item[0] == '+')
      throw UsageError(fmt::format("{} '{}' is not a comma list of whole numbers; pass e.g. {} 1,4", flag, text, flag));
    long long v = max + 1LL;
    try {
      v = parse_int(item, flag);
    } catch (const UsageError&) {  // beyond 64 bits
    }
    if (v < 1 || v > max) throw UsageError(fmt::format("{} {} is out of range; use 1..{}", flag, item, max));
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) == out.end()) out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw UsageError(fmt::format("{} is empty; pass e.g. {} 1", flag, flag));
  return out;
}

double parse_duration_s(const std::string& text, const std::string& flag) {
  double value = 0;
  size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  double unit = 0;
  const std::string rest = used ? text.substr(used) : "";
  if (rest.empty() || rest == "s") unit = 1;
  else if (rest == "m") unit = 60;
  else if (rest == "h") unit = 3600;
  const double s = value * unit;
  if (used == 0 || unit == 0 || !(s > 0 && s <= kMaxDurationS))
    throw UsageError(
        fmt::format("{} '{}' is not a duration; use seconds or a unit, e.g. 90, 90s, 30m, 2h (at most "
                    "a week)",
                    flag, text));
  return s;
}

std::vector<std::string> parse_comm_hook_list(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& item : split_list(text)) {
    const std::string name = parse_comm_hook(item).name();
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  if (out.empty()) throw UsageError("--comm-hook is empty; pass e.g. --comm-hook none,fp16");
  return out;
}

std::vector<std::string> parse_strategy_list(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& item : split_list(text)) {
    if (item != "ddp" && item != "zero2" && item != "fsdp")
      throw UsageError(fmt::format("--strategy '{}' is unknown; use ddp, zero2 or fsdp (comma list)", item));
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty()) throw UsageError("--strategy is empty; pass e.g. --strategy ddp,zero2,fsdp");
  return out;
}

bool runs_ddp_strategy(const RunConfig& cfg) {
  return std::find(cfg.strategies.begin(), cfg.strategies.end(), "ddp") != cfg.strategies.end();
}

std::vector<std::string> sharded_strategies(const RunConfig& cfg) {
  std::vector<std::string> out;
  for (const auto& s : cfg.strategies)
    if (s != "ddp") out.push_back(s);
  return out;
}

int planned_rows(const RunConfig& cfg) {
  if (cfg.data != "synthetic")  // time-to-loss: one row per model and world size, no no-DDP baseline
    return static_cast<int>(cfg.models.size() * cfg.world_sizes.size());
  if (cfg.mode == "inference")
    return static_cast<int>(cfg.models.size() * cfg.world_sizes.size());  // one row per world size
  const size_t per_size = (runs_ddp_strategy(cfg) ? ddp_variants(cfg).size() : 0) + sharded_strategies(cfg).size();
  return static_cast<int>(cfg.models.size() * (baseline_points(cfg).size() + cfg.world_sizes.size() * per_size));
}

std::string baseline_tag(long long batch, int grad_accum) {
  return grad_accum > 1 ? fmt::format("noddp-b{}-k{}", batch, grad_accum) : fmt::format("noddp-b{}", batch);
}

std::string ddp_group(const std::string& model, int n, size_t variant, size_t variants) {
  return fmt::format("{}/ddp{}{}", model, n, variants > 1 ? fmt::format("/v{}", variant) : "");
}

std::string sharded_group(const std::string& model, const std::string& strategy, int n) {
  return fmt::format("{}/{}{}", model, strategy, n);
}

std::string inference_group(const std::string& model, int n) { return fmt::format("{}/infer{}", model, n); }

std::vector<std::string> planned_groups(const RunConfig& cfg) {
  std::vector<std::string> out;
  if (cfg.data != "synthetic") return out;
  const size_t variants = runs_ddp_strategy(cfg) ? ddp_variants(cfg).size() : 0;
  for (const auto& m : cfg.models) {
    if (cfg.mode == "inference") {
      for (int n : cfg.world_sizes) out.push_back(inference_group(m, n));
      continue;
    }
    for (const auto& [b, k] : baseline_points(cfg)) out.push_back(m + "/" + baseline_tag(b, k));
    for (int n : cfg.world_sizes) {
      for (size_t v = 0; v < variants; ++v) out.push_back(ddp_group(m, n, v, variants));
      for (const auto& s : sharded_strategies(cfg)) out.push_back(sharded_group(m, s, n));
    }
  }
  return out;
}

const std::vector<ConfigJsonKey>& config_json_keys() {
  static const std::vector<ConfigJsonKey> kKeys = [] {
    // Each run option's key with its rule (every option sharing a key states the same rule:
    // the catalogue test checks it), then the keys no option sets.
    std::vector<ConfigJsonKey> keys;
    std::set<std::string> seen;
    for (const auto& o : run_options())
      if (!o.json_key.empty() && seen.insert(o.json_key).second) keys.push_back({o.json_key, o.from, o.why});
    using F = ConfigJsonKey::From;
    keys.push_back({"optimizer", F::kNot, "fixed for the benchmark step; follows lr for time to loss"});
    keys.push_back({"loss", F::kNot, "always cross entropy"});
    return keys;
  }();
  return kKeys;
}

namespace {

// A catalogued option's value as its RunConfig member holds it (null for an unset optional);
// nullopt when the option has no member (the CLI parses its text).
std::optional<nlohmann::json> member_value(const RunConfig& cfg, const RunField& field) {
  return std::visit(
      [&](auto m) -> std::optional<nlohmann::json> {
        if constexpr (std::is_same_v<decltype(m), std::monostate>) {
          return std::nullopt;
        } else {
          const auto& v = cfg.*m;
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::optional<bool>> ||
                        std::is_same_v<std::decay_t<decltype(v)>, std::optional<double>>)
            return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
          else
            return nlohmann::json(v);
        }
      },
      field);
}

}  // namespace

namespace {
// The step's optimizer as the config records it: SGD for image models (benchmark.py's values;
// time to loss with --lr), AdamW at PyTorch's defaults for language models, as
// engine/train/workload.cpp trainer_optimizer chooses.
std::string optimizer_text(const RunConfig& cfg) {
  const std::string sgd = cfg.data == "synthetic" ? std::string("SGD(lr=0.001, momentum=0.9, weight_decay=1e-4)")
                                                  : fmt::format("SGD(lr={:g}, momentum=0.9, weight_decay=1e-4)", cfg.lr);
  if (cfg.language_models.empty()) return sgd;
  const std::string adamw = "AdamW(lr=0.001, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)";
  if (cfg.language_models.size() == cfg.models.size()) return adamw;
  return fmt::format("{} for {}; {} for the other models", adamw, fmt::join(cfg.language_models, ", "), sgd);
}
}  // namespace

nlohmann::json to_json(const RunConfig& cfg) {
  std::vector<double> first_caps;
  for (double mb : cfg.bucket_caps_mb) first_caps.push_back(first_bucket_cap_mb(cfg, mb));
  // The keys whose value is not an option's member as it stands: lists the CLI parsed, values
  // recorded only where they apply (null otherwise), and what no option sets. Every other key
  // is its option's member (run_options), written below.
  const std::vector<std::pair<const char*, nlohmann::json>> entries = {
      {"models", cfg.models},
      {"batch_size", cfg.batch_size},
      {"iters", cfg.iters_auto ? nlohmann::json("auto") : nlohmann::json(cfg.iters)},
      {"target_ci_pct", cfg.iters_auto ? nlohmann::json(cfg.target_ci_pct) : nlohmann::json(nullptr)},
      {"min_iters", cfg.iters_auto ? nlohmann::json(cfg.min_iters) : nlohmann::json(nullptr)},
      {"max_iters", cfg.iters_auto ? nlohmann::json(cfg.max_iters) : nlohmann::json(nullptr)},
      {"max_time_s", cfg.iters_auto ? nlohmann::json(cfg.max_time_s) : nlohmann::json(nullptr)},
      {"world_sizes", cfg.world_sizes},
      // A number when one value is swept (the form older readers know), else the list.
      {"bucket_cap_mb", cfg.bucket_caps_mb.size() == 1 ? nlohmann::json(cfg.bucket_caps_mb.front())
                                                       : nlohmann::json(cfg.bucket_caps_mb)},
      // As bucket_cap_mb: one number, or one per swept cap (DDP's rule, ddp_variants).
      {"first_bucket_cap_mb", first_caps.size() == 1 ? nlohmann::json(first_caps.front()) : nlohmann::json(first_caps)},
      {"comm_hook", cfg.comm_hooks},
      {"grad_accum", cfg.grad_accums},
      {"strategy", cfg.strategies},
      {"profile", cfg.profile_dir.empty() ? nlohmann::json(nullptr)
                                          : nlohmann::json{{"dir", cfg.profile_dir}, {"iters", cfg.profile_iters}}},
      {"head", cfg.freeze_backbone ? nlohmann::json(cfg.head) : nlohmann::json(nullptr)},
      {"instruments_off", cfg.instruments_off},
      {"duration_s", cfg.duration_s > 0 ? nlohmann::json(cfg.duration_s) : nlohmann::json(nullptr)},
      {"data_dir", cfg.data == "synthetic" ? nlohmann::json(nullptr) : nlohmann::json(cfg.data_dir)},
      // The benchmark step's SGD is engine/train/workload.cpp trainer_sgd_options(); time to
      // loss trains with --lr (engine/bench/time_to_loss.cpp).
      {"optimizer", optimizer_text(cfg)},
      {"loss", "cross_entropy"}};
  // An initializer list keeps the first of two equal keys and drops the other silently: write
  // one by one, each key once and each in the catalogue.
  std::set<std::string> known;
  for (const auto& k : config_json_keys()) known.insert(k.key);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : entries) {
    if (!known.count(key))
      throw std::logic_error(std::string("config key '") + key + "' is not in config_json_keys() (core/config/run_config.cpp)");
    if (out.contains(key)) throw std::logic_error(std::string("config key '") + key + "' is written twice");
    out[key] = value;
  }
  for (const auto& o : run_options()) {
    if (o.json_key.empty() || out.contains(o.json_key)) continue;
    if (const auto v = member_value(cfg, o.field)) out[o.json_key] = *v;
  }
  if (out.size() != known.size()) throw std::logic_error("config_json_keys() lists a key to_json does not write");
  return out;
}

}  // namespace ddpbench
