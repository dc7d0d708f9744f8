// What every row kind of the sweep shares (engine/bench/row_kind.hpp): the timed series of
// one rank, what each rank sends to rank 0 after it, and rank 0's row made from every
// rank's part (summary, breakdown, memory, burn-in, compute and MFU, telemetry, warnings).
// Internal to engine/bench: the sweep and its row kinds use it; nothing else does.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result/result.hpp"
#include "core/result/row_metrics.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/dist/ddp.hpp"
#include "engine/models/registry.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {

/// What one rank measured in a series, gathered to rank 0 after the samples as one vector of
/// doubles: the samples (as many on every rank of a group), the breakdown, then the one-value
/// fields in kRankScalars order, then the per-rank metrics in per_rank_metrics() order
/// (core/result/row_metrics; NaN where a value is absent), then with --duration the burn-in
/// windows (as many on every rank since they depend on D alone). pack and unpack walk the same
/// lists: a new per-rank metric is a catalogue entry, and travels with no change here.
struct RankStats {
  std::vector<double> samples_s;  ///< with --duration: every subsample_stride-th step (core/stats/burn_in)
  std::array<std::optional<double>, kNumBreakdownComponents> breakdown_s;  ///< kBreakdownComponents order, s/step
  std::optional<double> peak_memory_bytes;
  std::optional<double> wire_bytes_per_step;  ///< what a comm hook handed to collectives, mean per step
  std::optional<double> steps_measured;       ///< --duration: measured steps before subsampling
  std::optional<double> subsample_stride;     ///< --duration: samples_s keeps every k-th of them
  std::optional<double> peak_allocated_bytes, peak_reserved_bytes, peak_rss_bytes;  ///< engine/memory
  std::optional<double> memory_reset_ok;   ///< 1: the peak window was reset before the series; 0: it failed
  std::vector<double> window_steps_per_s;  ///< --duration: optimizer steps per s per window (burn_in_windows(D))
  /// The per-rank metrics (per_rank_metrics() order; nullopt: not measured), reduced over steps.
  std::vector<std::optional<double>> metrics;

  std::vector<double> pack() const;
  /// Throws std::runtime_error when `v` is shorter than `iters` samples and the fixed slots.
  static RankStats unpack(const std::vector<double>& v, size_t iters);
};

/// One rank's timed series (run_series).
struct Series {
  std::vector<double> samples;   ///< s per measured step
  int64_t skipped_measured = 0;  ///< fp16 steps skipped for overflow among the timed ones
  Stopping stopping;
  std::array<double, kNumBreakdownComponents> breakdown_sum{};  ///< over measured steps
  int breakdown_n = 0;                                          ///< measured steps with a complete breakdown
  double wire_bytes_sum = 0;                                    ///< comm hook's bytes over measured steps
  bool has_wire_bytes = false;
  /// --duration: each measured step's end, s since the first measured step started (the
  /// origin of the burn-in windows), for every step even when `samples` is subsampled.
  std::vector<double> end_s;
  int64_t steps_measured = 0;   ///< measured steps (before subsampling)
  size_t subsample_stride = 1;  ///< --duration: `samples` keeps every k-th measured step
  bool memory_reset_ok = true;  ///< the last reset of the peak-memory window took effect (engine/memory)
  StepMetrics metrics;          ///< the per-rank metrics' values of the measured steps (core/result/row_metrics)
};

/// Runs cfg.warmup untimed steps (forward only with --mode inference) then the timed ones:
/// cfg.iters of them; with --iters auto until the 95% CI half-width of the mean of the
/// per-iteration means across `pg`'s ranks is within the target (or a limit is hit): after
/// each iteration, outside the timed span, one SUM allreduce over `pg` gives every rank the
/// same iteration mean, so every rank takes the same decision; with --duration D until every
/// rank of `pg` has measured for D s (a MIN allreduce of the elapsed times), the samples then
/// thinned to at most kMaxBurnInSamples. An empty `pg` (or one of one rank): each rank
/// decides alone. After each iteration `gate` (may be null) gets a heartbeat and `check`
/// (the self-check; may be empty) runs, untimed, until it returns true. `label` names the
/// series in the phase and in env.progress (one progress row per call). `wire_bytes` (may be
/// empty): a comm hook's cumulative byte counter, read per measured step.
Series run_series(const SweepEnv& env, Trainer& trainer, GroupGate* gate, const std::function<bool()>& check,
                  const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const std::string& label,
                  const std::function<long long()>& wire_bytes = nullptr);

/// This rank's part of the row after `series`: its samples, mean breakdown, memory peaks
/// (engine/memory, read now on `device` as job rank `rank`) and, when `duration_s` (s,
/// cfg.duration_s; 0: no --duration) is > 0, its burn-in windows.
RankStats rank_stats(const c10::Device& device, int rank, double duration_s, const Series& series);

/// Rank 0's row of a group of n ranks from every rank's stats (group rank order): identity,
/// summary over ranks (examples per rank per step = batch x grad_accum), breakdown (mean and
/// max over ranks, only when every rank has one), memory peaks, burn-in drift, each rank's
/// per-rank metrics (the row's own are reduced over ranks as the row is finished: finish_row).
BenchResult make_row(const SweepEnv& env, const std::string& model, bool ddp, int n, long long batch, int grad_accum,
                     const std::vector<RankStats>& stats, const Stopping& stopping, int iterations);

/// Warnings that depend on one row alone: noisy, few samples, oversubscribed CPUs, a failed
/// self-check, fp16 steps skipped while timed (negative DDP overhead needs the no-DDP row: run_sweep).
void add_row_warnings(const SweepEnv& env, BenchResult& row);

/// What rank 0 knows about a model before measuring it (computed once, on the CPU).
struct ModelInfo {
  double forward_macs = 0;     ///< per example, whole forward (head included)
  double head_macs = 0;        ///< per example, of the MLP head (frozen backbone only)
  double head_first_macs = 0;  ///< of the head's first layer
  int64_t parameters = 0, trainable_parameters = 0;
  int64_t seq_len = 0;                 ///< language models: tokens per example (sequence); 0 image models
  double train_flops_per_example = 0;  ///< language models: seq_len x the PaLM formula's FLOPs per token
};

/// What `cfg` builds its models for (classes, image size, a language model's sequence length
/// and reductions: engine/models/registry ModelArgs).
ModelArgs model_args(const RunConfig& cfg);

/// A rank's synthetic batch of `batch` examples of model `name` as `cfg` configures it, on
/// `device`, seeded with `seed`: token ids for a language model (make_token_batch, cfg.seq_len
/// tokens each), else images (make_synthetic_batch; channels_last when cfg says so).
SyntheticBatch synthetic_batch_for(const RunConfig& cfg, const std::string& name, long long batch,
                                   const c10::Device& device, uint64_t seed);

/// The ModelInfo of `name` as configured by `cfg` (seed, classes, image size, frozen backbone)
/// on rank 0 (zeros where `rank`, this rank of the job, is not 0).
ModelInfo model_info(const RunConfig& cfg, int rank, const std::string& name);

/// A language model's row (info.seq_len > 0): compute.seq_len and tokens/s per rank and in
/// aggregate (ex/s x seq_len), from the row's summary; nothing for an image model.
void annotate_tokens(const ModelInfo& info, BenchResult& row);

/// Adds the compute (FLOPs, MFU against the device's peak for the math in effect) and
/// loss-scaling sections to rank 0's row.
void annotate(const SweepEnv& env, const ModelInfo& info, BenchResult& row, const Trainer& trainer,
              const Series& series);

/// This rank's telemetry of the series just measured by `sampler` (core/telemetry/telemetry.hpp;
/// SweepEnv::sampler), its series dropped beyond 32 KiB; null when `sampler` is null.
nlohmann::json own_telemetry(const TelemetrySampler* sampler);

/// Every rank of a group publishes its telemetry (own_telemetry(sampler)) under `key`/<rank>
/// in the job's store `store`, `rank` being its rank in the job;
/// rank 0 reads ranks 0..n-1's with collect_telemetry after the group's gather, deleting the
/// keys, over several connections from kParallelReadKeys ranks on (read_keys over job.store,
/// job.launch and job.store_prefix): one JSON per rank, null where a rank's text is not JSON.
/// Bounded by job.timeout (the watchdog).
void publish_telemetry(const c10::intrusive_ptr<c10d::Store>& store, int rank, const TelemetrySampler* sampler,
                       const std::string& key);
std::vector<nlohmann::json> collect_telemetry(const JobEnv& job, const std::string& key, int n);

/// Puts each rank's telemetry into the row, the group's series over ranks, and the
/// low-utilization / throttling warnings (below cfg.min_util_pct; the first 4 ranks per code
/// by name, then a count).
void attach_telemetry(const RunConfig& cfg, BenchResult& row, const std::vector<nlohmann::json>& per_rank);
/// attach_telemetry(env.cfg, row, per_rank) (the control-plane simulation calls it so).
void attach_telemetry(const SweepEnv& env, BenchResult& row, const std::vector<nlohmann::json>& per_rank);

/// --profile DIR: after a measured series, cfg.profile_iters more steps (untimed) traced by
/// libtorch's profiler into DIR/<model>-<what>-rank<R>.json. Returns the file's record for
/// the row (nullopt without --profile).
std::optional<ProfileRecord> profile_series(const SweepEnv& env, Trainer& trainer, const std::string& model,
                                            const std::string& what, GroupGate* gate);

/// build_model(env.cfg, name, env.device).
ModelPtr build_model(const SweepEnv& env, const std::string& name);

/// This rank's trainer of `model` at `batch` examples per micro-step (its own synthetic
/// batch, seeded by cfg.seed and the rank), under `ddp` when given.
Trainer make_trainer(const SweepEnv& env, ModelPtr model, std::unique_ptr<DistributedDataParallel> ddp, long long batch,
                     int grad_accum);

}  // namespace ddpbench
