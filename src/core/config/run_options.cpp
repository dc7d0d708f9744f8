#include "core/config/run_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <stdexcept>

#include "core/config/instruments.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {

std::string RunOption::name() const { return flag.substr(0, flag.find(',')); }

namespace {

using F = ConfigJsonKey::From;
using C = RunOption::Check;

// An option with a value.
RunOption opt(std::string flag, RunField field, std::string help, std::string json_key, F from, std::string why) {
  RunOption o;
  o.flag = std::move(flag);
  o.field = field;
  o.help = std::move(help);
  o.json_key = std::move(json_key);
  o.from = from;
  o.why = std::move(why);
  return o;
}

// A switch (no value).
RunOption sw(std::string flag, RunField field, std::string help, std::string json_key, F from, std::string why) {
  RunOption o = opt(std::move(flag), field, std::move(help), std::move(json_key), from, std::move(why));
  o.flag_only = true;
  return o;
}

RunOption shown(RunOption o) {
  o.show_default = true;
  return o;
}
RunOption checked(RunOption o, C c) {
  o.check = c;
  return o;
}
RunOption bounded(RunOption o, long long lo, long long hi, std::string unit = "") {
  o.lo = lo;
  o.hi = hi;
  o.unit = std::move(unit);
  return o;
}

const std::string kTtlUnread =
    "a time-to-loss setting that ConfigKey does not read yet: two time-to-loss files that differ only in it pair "
    "in diff (declared here, so the merge is not silent)";
const std::string kAutoRule = "a stopping rule of --iters auto";
const std::string kPrinted = "what is printed, not what runs";

std::vector<RunOption> workload_options() {
  using M = std::monostate;
  return {
      opt("--model", M{}, "Model(s), comma list (default: resnet50 on GPUs, a small CPU job otherwise)", "models",
          F::kRow, "model"),
      checked(opt("--batch-size", M{},
                  "Examples per rank per iteration (default 32 on GPUs), or max: the largest batch that trains on "
                  "every rank (ddpbench find-max-bs before the sweep; minimum over ranks, less 10%)",
                  "batch_size", F::kRow, "batch_per_rank"),
              C::kWholeOrMax),
      checked(opt("--memory-limit", M{},
                  "With --batch-size max: bytes the search may use per rank (K/M/G suffixes; required on CPUs, as "
                  "for find-max-bs)",
                  "", F::kNot, "recorded in config.batch_size_search; the batch it finds is the rows' batch_size"),
              C::kSize),
      opt("--image-size", &RunConfig::image_size, "Input height = width in pixels (default 224 on GPUs)",
          "image_size", F::kRow, "image_size"),
      shown(opt("--scaling", &RunConfig::scaling,
                "weak: --batch-size per rank; strong: --global-batch-size split over the ranks of each group",
                "scaling", F::kRow, "scaling")),
      checked(opt("--global-batch-size", &RunConfig::global_batch_size,
                  "Strong scaling: examples per step over a group (B/N per rank)", "global_batch_size", F::kRow,
                  "global_batch"),
              C::kWholeNumber),
      bounded(opt("--seq-len", &RunConfig::seq_len,
                  "Language models: tokens per sequence (an example is one sequence; default 1024 on GPUs)",
                  "seq_len", F::kRow, "seq_len"),
              2, kMaxSeqLen),
      bounded(opt("--model-layers", &RunConfig::model_layers,
                  "Language models: transformer blocks instead of the published depth (0: published)",
                  "model_layers", F::kConfig, "model_shape"),
              0, 1000),
      bounded(opt("--model-width", &RunConfig::model_width,
                  "Language models: model width instead of the published one, a multiple of the heads; the MLP "
                  "scales with it (0: published)",
                  "model_width", F::kConfig, "model_shape"),
              0, 1000000),
      bounded(shown(opt("--num-classes", &RunConfig::num_classes, "Classifier width", "num_classes", F::kConfig,
                        "num_classes")),
              2, kMaxNumClasses),
      shown(opt("--precision", &RunConfig::precision,
                "fp32 (PyTorch's default math: cuDNN may use TF32), fp32-strict (TF32 off), tf32 (TF32 on), fp16 "
                "(autocast + dynamic loss scaling) or bf16 (autocast)",
                "precision", F::kRow, "precision")),
      shown(opt("--mode", &RunConfig::mode,
                "train (DDP training steps) or inference (forward only under no_grad, eval mode, --precision's "
                "autocast; no DDP: every rank of a group infers its own batch; throughput and latency per world "
                "size)",
                "mode", F::kRow, "mode")),
      sw("--channels-last", &RunConfig::channels_last, "NHWC memory format for inputs and convolution weights",
         "channels_last", F::kConfig, "channels_last"),
      [] {
        RunOption o = sw("--no-cudnn-benchmark", &RunConfig::cudnn_benchmark, "Turn cuDNN autotuning off (on by default)",
                         "cudnn_benchmark", F::kEnvironment, "cudnn_benchmark (environment.math, as applied)");
        o.negated = true;
        return o;
      }(),
      opt("--zero-grad-set-to-none", &RunConfig::zero_grad_set_to_none,
          "true or false: Optimizer.zero_grad(set_to_none=...) in the step (default: the linked torch's default, "
          "true from torch 2.0, false before)",
          "zero_grad_set_to_none", F::kConfig, "zero_grad"),
      sw("--freeze-backbone", &RunConfig::freeze_backbone,
         "Train only a classifier head on a frozen backbone (fixed feature extractor)", "freeze_backbone",
         F::kConfig, "frozen_backbone"),
      shown(opt("--head", &RunConfig::head, "Head trained with --freeze-backbone", "head", F::kConfig,
                "frozen_backbone (the head's name)")),
      shown(checked(opt("--seed", &RunConfig::seed, "Base seed >= 0 (rank r draws data from seed + 1000 + r)", "seed",
                        F::kNot, "synthetic inputs of another seed cost the same"),
                    C::kWholeNumber)),
  };
}

std::vector<RunOption> measurement_options() {
  using M = std::monostate;
  return {
      bounded(shown(opt("--warmup", &RunConfig::warmup, "Untimed iterations before each measured series", "warmup",
                        F::kNot, "warm-up iterations are not measured")),
              0, kMaxIters),
      shown(opt("--iters", M{},
                "Measured iterations per series, or auto: measure until the 95% CI of the mean step time is within "
                "--target-ci",
                "iters", F::kNot, "how many iterations are measured, not what; the row's n and CI say how well")),
      opt("--target-ci", &RunConfig::target_ci_pct,
          "With --iters auto (implies it): CI half-width target, % of the mean (default 1)", "target_ci_pct", F::kNot,
          kAutoRule),
      opt("--min-iters", &RunConfig::min_iters, "With --iters auto: at least this many (default 20)", "min_iters",
          F::kNot, kAutoRule),
      opt("--max-iters", &RunConfig::max_iters, "With --iters auto: at most this many (default 1000)", "max_iters",
          F::kNot, kAutoRule),
      opt("--max-time", &RunConfig::max_time_s,
          "With --iters auto: stop a series once its measured iterations add up to this many seconds (default 120)",
          "max_time_s", F::kNot, kAutoRule),
      opt("--world-sizes", M{},
          "DDP group sizes, comma list (default 1,2,4,... up to the world size, plus the world size); 'world': the "
          "world size only",
          "world_sizes", F::kRow, "world_size"),
      opt("--duration", M{},
          "Burn-in: run each row's measured series for this long (90s, 30m, 2h) and report throughput over time per "
          "rank, flagging drift",
          "duration_s", F::kNot, "burn-in length; the windows are per row"),
      shown(opt("--grad-check-tol", &RunConfig::grad_check_tol,
                "Self-check tolerance: max gradient difference across ranks, relative to max |g|", "grad_check_tol",
                F::kNot, "the self-check's tolerance, run after the measured iterations")),
  };
}

// The DDP flag settings: one entry each from ddp_flag_settings(); the member from the same list.
std::vector<RunOption> ddp_flag_options() {
  std::vector<RunOption> out;
#define DDPBENCH_DDP_FLAG_OPTION(X, name, def, flag, label, help)                                               \
  {                                                                                                             \
    RunOption o = sw(flag, &RunConfig::name, help, #name, F::kRow, #name " (the row's ddp_options; this key " \
                                                                      "for files before schema 1.5)");         \
    o.negated = def;                                                                                            \
    out.push_back(std::move(o));                                                                                \
  }
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_OPTION, _)
#undef DDPBENCH_DDP_FLAG_OPTION
  return out;
}

std::vector<RunOption> ddp_options() {
  using M = std::monostate;
  std::vector<RunOption> out = {
      opt("--bucket-cap-mb", M{},
          "DDP bucket_cap_mb in MiB; a comma list sweeps them in one launch, one row each (default: DDP's default, "
          "25)",
          "bucket_cap_mb", F::kRow, "bucket_cap_mb (the row's ddp_options; this key for files before schema 1.5)"),
      opt("--first-bucket-cap-mb", &RunConfig::first_bucket_cap_mb,
          "Cap of the first DDP bucket in MiB (default: as the linked torch's DDP: 1 MiB, or on torch 2.x the "
          "--bucket-cap-mb given)",
          "first_bucket_cap_mb", F::kRow, "first_bucket_cap_mb (as bucket_cap_mb)"),
  };
  for (auto& o : ddp_flag_options()) out.push_back(std::move(o));
  for (RunOption o : std::vector<RunOption>{
           shown(opt("--comm-hook", M{},
                     "DDP communication hook(s), comma list, one row each: none (the Reducer's allreduce), allreduce, "
                     "fp16, bf16, powersgd[:RANK], hierarchical, topk:RATIO",
                     "comm_hook", F::kRow, "comm_hook (as bucket_cap_mb)")),
           shown(opt("--grad-accum", M{},
                     "Micro-steps per optimizer step, comma list: K-1 under no_sync, then one synchronised",
                     "grad_accum", F::kRow, "grad_accum")),
           shown(opt("--strategy", M{},
                     "Training strategies, comma list, one row each per world size: ddp (the Reducer), zero2 "
                     "(gradients and optimizer state sharded), fsdp (parameters too, gathered per model unit)",
                     "strategy", F::kRow, "strategy")),
           sw("--activation-checkpointing", &RunConfig::activation_checkpointing,
              "Recompute each model unit's forward (a ResNet block, a ViT layer) in its backward instead of keeping "
              "its activations",
              "activation_checkpointing", F::kRow, "activation_checkpointing"),
           sw("--cpu-offload", &RunConfig::cpu_offload,
              "fsdp rows keep their parameter shards, gradient shards and optimizer state in host memory between "
              "uses and step the optimizer there (GPU runs with --strategy fsdp)",
              "cpu_offload", F::kRow, "cpu_offload"),
       })
    out.push_back(std::move(o));
  return out;
}

std::vector<RunOption> output_options() {
  using M = std::monostate;
  std::vector<std::string> instruments;
  for (const auto& i : instrument_catalogue()) instruments.push_back(i.name);
  return {
      opt("--json", &RunConfig::json_path,
          "Write the result file here once the run completes (the rows so far go to PATH.partial while it runs); an "
          "existing PATH needs --overwrite",
          "", F::kNot, "where the result goes, not what runs"),
      opt("--resume", M{},
          "Continue a sweep that stopped from the PATH.partial its --json PATH left: with the same flags (checked), "
          "the rows it measured kept, the rest measured, one complete PATH written",
          "", F::kNot, "continues a run with the same flags (checked); each kept row records the launch that measured it"),
      sw("--overwrite", M{},
         "Replace an existing --json file (and PATH.partial) once the new run completes; without it an existing one "
         "is refused, and one that appears during the run is kept (the rows go to PATH.partial)",
         "", F::kNot, "what happens to an existing file, not what runs"),
      sw("--quiet", &RunConfig::quiet, "No progress output (the table and errors still print)", "", F::kNot, kPrinted),
      sw("--breakdown", &RunConfig::print_breakdown,
         "Print where each row's step time goes (forward, backward compute, exposed communication, optimizer, "
         "other) under it",
         "", F::kNot, kPrinted + " (every row records its breakdown)"),
      opt("--profile", &RunConfig::profile_dir,
          "Write a Chrome/Perfetto trace of --profile-iters extra steps after each measured series, one file per rank "
          "and row, into this directory (created; traces of an earlier run there need --overwrite)",
          "profile", F::kNot, "the profiler traces iterations after the measured ones"),
      bounded(shown(opt("--profile-iters", &RunConfig::profile_iters, "Steps traced per row with --profile", "profile",
                        F::kNot, "the profiler traces iterations after the measured ones")),
              1, kMaxProfileIters),
      bounded(shown(opt("--sample-ms", &RunConfig::sample_ms,
                        "Telemetry sampling period during measured iterations (GPU through NVML, host CPU, memory, "
                        "network)",
                        "sample_ms", F::kNot,
                        "the telemetry sampler's period; its cost is within the noise (METHODOLOGY)")),
              1, kMaxSampleMs, " milliseconds"),
      shown(opt("--per-rank-series,--telemetry-series", &RunConfig::per_rank_series,
                "Whose raw step samples and telemetry series a row keeps: flagged (ranks with telemetry flags and the "
                "slowest by mean step; every rank keeps its step summary, every row its per-iteration means and "
                "min/median/max series over ranks) or all (every rank's; larger files at scale)",
                "per_rank_series", F::kNot, "what is recorded, not what runs")),
      opt("--instruments-off", M{},
          fmt::format("Switch off instruments to measure what they cost (comma list of {}, or all; METHODOLOGY "
                      "\"What the harness costs\"): the run header says which ran",
                      fmt::join(instruments, ", ")),
          "instruments_off", F::kNot, "the instruments' cost is within the noise (METHODOLOGY, What the harness costs)"),
      shown(opt("--min-util", &RunConfig::min_util_pct,
                "Flag a GPU whose mean SM utilization is below this percentage", "min_util_pct", F::kNot,
                "a threshold of the telemetry warning")),
      shown(opt("--straggler-threshold", &RunConfig::straggler_threshold,
                "Name a rank whose score (fastest rank's compute-only step / its own) is below this",
                "straggler_threshold", F::kNot, "a threshold of the straggler finding")),
      shown(checked(opt("--dataset-size", &RunConfig::dataset_size,
                        "Examples per epoch, for per-epoch communication volume", "dataset_size", F::kNot,
                        "the cost table's epoch size, a reading of the rows"),
                    C::kWholeNumber)),
  };
}

std::vector<RunOption> launch_options() {
  using M = std::monostate;
  return {
      opt("--nproc-per-node", M{},
          "Ranks to start on this machine with the built-in launcher (default: one per GPU, 2 without GPUs)", "",
          F::kNot, "the launch's shape: each row records its world size, the environment its hosts and ranks"),
      shown(opt("--backend", &RunConfig::backend, "Process group backend: auto, nccl or gloo", "backend",
                F::kEnvironment, "backend (environment.backend, the resolved one)")),
      shown(opt("--device", &RunConfig::device, "Device: auto, cpu or cuda", "device", F::kEnvironment,
                "device (environment: the GPU or CPU model, device_type)")),
      shown(opt("--timeout", &RunConfig::timeout_s, "Seconds before a store access or collective fails", "timeout_s",
                F::kNot, "a bound on waits, not part of a step")),
      sw("--no-malloc-tuning", M{}, "Keep glibc's malloc thresholds (CPU runs)", "", F::kNot,
         "recorded in environment.malloc_tuning, which ConfigKey's malloc_tuning reads"),
  };
}

std::vector<RunOption> time_to_loss_options() {
  return {
      shown(opt("--data", &RunConfig::data,
                "synthetic (the step benchmark) or fashion-mnist: train to a target on the real dataset per world "
                "size (time-to-loss)",
                "data", F::kRow, "data (the row's convergence dataset)")),
      shown(opt("--data-dir", &RunConfig::data_dir, "Folder of the dataset's four IDX .gz files", "data_dir", F::kNot,
                "where the dataset lies, not which")),
      shown(opt("--epochs", &RunConfig::epochs, "Time-to-loss: most epochs per world size (stops at the target)",
                "epochs", F::kNot, "how long a time-to-loss run may train; its rows record what it reached")),
      opt("--target-loss", &RunConfig::target_loss, "Time-to-loss: stop once the test-split cross-entropy is <= this",
          "target_loss", F::kNot, "the time-to-loss stopping target, recorded per row"),
      opt("--target-accuracy", &RunConfig::target_accuracy,
          "Time-to-loss: stop once the test-split top-1 accuracy is >= this fraction (e.g. 0.85)", "target_accuracy",
          F::kNot, "the time-to-accuracy stopping target, recorded per row"),
      shown(opt("--loader-workers", &RunConfig::loader_workers,
                "Time-to-loss: data-loader threads per rank (0: in the step)", "loader_workers", F::kNot, kTtlUnread)),
      shown(opt("--train-limit", &RunConfig::train_limit,
                "Time-to-loss: train on the first N training examples (0: all)", "train_limit", F::kNot, kTtlUnread)),
      shown(opt("--test-limit", &RunConfig::test_limit, "Time-to-loss: evaluate on the first N test examples (0: all)",
                "test_limit", F::kNot, kTtlUnread)),
      shown(opt("--lr", &RunConfig::lr, "Time-to-loss: SGD learning rate (momentum 0.9, weight decay 1e-4)", "lr",
                F::kNot, kTtlUnread)),
  };
}

}  // namespace

const std::vector<RunOption>& run_options() {
  static const std::vector<RunOption> kOptions = [] {
    std::vector<RunOption> all;
    const std::pair<const char*, std::vector<RunOption>> groups[] = {
        {"Workload", workload_options()},
        {"Measurement", measurement_options()},
        {"DDP and strategies", ddp_options()},
        {"Output and diagnosis", output_options()},
        {"Launch", launch_options()},
        {"Time to loss (--data)", time_to_loss_options()},
    };
    for (const auto& [group, options] : groups)
      for (RunOption o : options) {
        o.group = group;
        all.push_back(std::move(o));
      }
    return all;
  }();
  return kOptions;
}

const RunOption* find_run_option(const std::string& name) {
  for (const auto& o : run_options())
    if (o.name() == name) return &o;
  return nullptr;
}

void check_option_bounds(const RunConfig& cfg) {
  for (const auto& o : run_options()) {
    if (!o.lo || !o.hi) continue;
    long long v = 0;
    if (const auto* m = std::get_if<int RunConfig::*>(&o.field)) v = cfg.*(*m);
    else if (const auto* l = std::get_if<long long RunConfig::*>(&o.field)) v = cfg.*(*l);
    else throw std::logic_error("run option " + o.name() + " has bounds but no integer member");
    if (v < *o.lo || v > *o.hi)
      throw UsageError(fmt::format("{} {} is out of range; use {}..{}{}", o.name(), v, *o.lo, *o.hi, o.unit));
  }
}

}  // namespace ddpbench
