// Typed sections of a result row (results[].checks, compute, communication, breakdown,
// ddp_options, burn_in, telemetry, convergence, and each rank's telemetry): each field listed once, in an X-macro that
// declares the member and its JSON reader and writer (burn_in's lists of per-rank objects by hand). Fields are optional
// (a row of one kind fills only its own); keys a section does not know, or a known key of another type, are kept in
// `extra` as read and written back, so a file round-trips whatever its version. A field without a value is left out
// (schema 1.11; before, some were written as null, which reads as no value). Meanings: docs/result-schema.md.
// Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config/ddp_settings.hpp"

namespace ddpbench {

/// The components of one optimizer step in a row's "breakdown" (seconds per step, docs/
/// METHODOLOGY.md "Where the time goes"), in display order. step_s is the measured step;
/// forward_s + backward_compute_s + exposed_comm_s + optimizer_s + other_s = step_s, other_s
/// being the remainder (zero_grad, the Reducer's bucket copies and finalisation).
///   forward_s           forward + loss (DDP: with the Reducer's prepare and the buffer broadcast)
///   backward_compute_s  autograd compute (DDP: the Reducer's timer, kBackwardComputeStart..End)
///   backward_comm_s     first bucket's allreduce launched .. last bucket's finished (Reducer)
///   overlap_s           backward_comm_s hidden behind backward_compute_s (Reducer)
///   exposed_comm_s      backward_comm_s - overlap_s: communication nothing hid
///   optimizer_s         the optimizer step (with loss scaling: unscale and update too)
///   other_s             step_s minus the four above
///   step_s              the measured step
enum class Phase : size_t { forward, backward_compute, backward_comm, overlap, exposed_comm, optimizer, other, step };
/// The JSON key of each Phase, in the same order.
inline constexpr const char* kBreakdownComponents[] = {
    "forward_s",      "backward_compute_s", "backward_comm_s", "overlap_s",
    "exposed_comm_s", "optimizer_s",        "other_s",         "step_s"};
inline constexpr size_t kNumBreakdownComponents = 8;
static_assert(std::size(kBreakdownComponents) == kNumBreakdownComponents, "one name per breakdown component");
static_assert(static_cast<size_t>(Phase::step) + 1 == kNumBreakdownComponents, "one key per Phase");

/// The JSON key of `p`, e.g. "exposed_comm_s".
constexpr const char* phase_key(Phase p) { return kBreakdownComponents[static_cast<size_t>(p)]; }

/// Seconds per step of each phase ({"forward_s": 0.012, ...} in the file); a phase the
/// object lacks, or holds as something other than a number, is nullopt.
struct PhaseSeconds {
  std::array<std::optional<double>, kNumBreakdownComponents> s{};
  std::optional<double> operator[](Phase p) const { return s[static_cast<size_t>(p)]; }
  std::optional<double>& operator[](Phase p) { return s[static_cast<size_t>(p)]; }
  /// Every phase present and finite.
  bool complete() const;
  /// No phase present.
  bool empty() const;
  bool operator==(const PhaseSeconds& o) const { return s == o.s; }
};
void to_json(nlohmann::json& j, const PhaseSeconds& p);
void from_json(const nlohmann::json& j, PhaseSeconds& p);

// X(type, name): results[].checks, the in-run self-check (METHODOLOGY "In-run self-check").
#define DDPBENCH_ROW_CHECKS_FIELDS(X)             \
  X(bool, grad_check_ran)                         \
  X(bool, grad_check_passed)                      \
  X(double, grad_max_abs_diff_across_ranks)       \
  X(double, grad_max_abs)                         \
  X(double, grad_check_limit)                     \
  X(bool, buckets_rebuilt)                        \
  X(std::vector<long long>, bucket_sizes_bytes)   \
  X(bool, param_check_ran)                        \
  X(bool, param_check_passed)                     \
  X(double, param_max_abs_diff_across_ranks)      \
  X(double, param_max_abs)                        \
  X(double, param_check_limit)                    \
  X(double, dp_output_rel_diff)                   \
  X(double, dp_grad_rel_diff)                     \
  X(double, dp_check_limit)                       \
  X(bool, dp_check_passed)                        \
  X(long long, fp16_skipped_steps_in_measurement) \
  X(std::string, note)

// results[].compute: FLOPs and MFU (METHODOLOGY "FLOPs and MFU").
#define DDPBENCH_ROW_COMPUTE_FIELDS(X) \
  X(double, forward_macs_per_example)  \
  X(double, train_flops_per_example)   \
  X(double, achieved_tflops_per_gpu)   \
  X(double, peak_tflops)               \
  X(double, mfu)                       \
  X(std::string, peak_basis)           \
  X(std::string, peak_source)          \
  X(long long, parameters)             \
  X(long long, trainable_parameters)   \
  X(long long, seq_len)                \
  X(double, tokens_per_s_per_gpu)      \
  X(double, tokens_per_s)

// results[].communication: what the row's strategy sends. DDP rows fill all of these;
// zero2/fsdp and DataParallel rows fill some and keep their own terms in `extra`
// (docs/result-schema.md "communication").
#define DDPBENCH_ROW_COMMUNICATION_FIELDS(X)    \
  X(long long, trainable_parameters)            \
  X(long long, buckets)                         \
  X(std::vector<long long>, bucket_sizes_bytes) \
  X(long long, allreduce_bytes_per_step)        \
  X(double, wire_bytes_per_step)                \
  X(double, effective_algbw_gbps)               \
  X(double, effective_busbw_gbps)               \
  X(long long, dataset_size)                    \
  X(long long, steps_per_epoch)                 \
  X(long long, allreduce_bytes_per_epoch)

// results[].breakdown: where a step's time went (METHODOLOGY "Where the time goes").
#define DDPBENCH_ROW_BREAKDOWN_FIELDS(X) \
  X(PhaseSeconds, mean_over_ranks)       \
  X(PhaseSeconds, max_over_ranks)        \
  X(long long, iterations)               \
  X(std::string, note)

// results[].ddp_options: the DDP settings a DDP row ran with (schema 1.5; older files keep
// them in the file's config).
// The DDP flag settings (core/config/ddp_settings.hpp) as X(bool, name).
#define DDPBENCH_ROW_DDP_FLAG(X, name, def, flag, label, help) X(bool, name)
#define DDPBENCH_ROW_DDP_OPTIONS_FIELDS(X) \
  X(double, bucket_cap_mb)                 \
  X(double, first_bucket_cap_mb)           \
  DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_ROW_DDP_FLAG, X) \
  X(std::string, comm_hook)

// results[].telemetry.loss_scaling (fp16 rows): rank 0's loss scaler at the end of the row.
#define DDPBENCH_LOSS_SCALING_FIELDS(X) \
  X(double, final_scale)                \
  X(long long, skipped_steps)           \
  X(long long, skipped_steps_measured)  \
  X(std::string, note)

// results[].telemetry.profile (--profile): the trace of the row's profiled steps.
#define DDPBENCH_PROFILE_RECORD_FIELDS(X) \
  X(std::string, file)                    \
  X(std::string, profiler)                \
  X(long long, iterations)

// results[].telemetry: what the row recorded beside its timings. concurrent_baseline_p50_s (no-DDP
// rows of a launch of several ranks, s): the p50 of rank 0's series while every rank trained alone
// at the same time (the straggler scores' series; the row is rank 0 alone). series_over_ranks is
// core/telemetry's format (series_over_ranks); devices, peak_memory_bytes_per_device (bytes,
// null where unknown) and primitives are `dataparallel`'s.
#define DDPBENCH_ROW_TELEMETRY_FIELDS(X)          \
  X(std::string, baseline)                        \
  X(double, concurrent_baseline_p50_s)            \
  X(std::string, comm_hook_note)                  \
  X(long long, peak_memory_bytes_max_over_ranks)  \
  X(LossScaling, loss_scaling)                    \
  X(ProfileRecord, profile)                       \
  X(nlohmann::json, series_over_ranks)            \
  X(std::vector<std::string>, devices)            \
  X(nlohmann::json, peak_memory_bytes_per_device) \
  X(std::string, primitives)

// {mean, min, max} of one sampled metric (core/telemetry TelemetryAccumulator: readings over
// the samples, or rates over the intervals with a time-weighted mean).
#define DDPBENCH_METRIC_STATS_FIELDS(X) \
  X(double, mean)                       \
  X(double, min)                        \
  X(double, max)

// results[].ranks[].telemetry.sampled.gpu: the rank's GPU (available false with a reason
// without NVML or a GPU), its limits, each metric's stats, the clock-event reasons seen.
#define DDPBENCH_GPU_TELEMETRY_FIELDS(X)        \
  X(bool, available)                            \
  X(std::string, reason)                        \
  X(long long, index)                           \
  X(std::string, name)                          \
  X(std::string, uuid)                          \
  X(std::string, bus_id)                        \
  X(MetricStats, sm_util_pct)                   \
  X(MetricStats, mem_util_pct)                  \
  X(MetricStats, mem_used_bytes)                \
  X(long long, mem_total_bytes)                 \
  X(MetricStats, power_w)                       \
  X(double, power_limit_w)                      \
  X(MetricStats, sm_clock_mhz)                  \
  X(double, max_sm_clock_mhz)                   \
  X(MetricStats, temperature_c)                 \
  X(std::vector<std::string>, throttle_reasons) \
  X(double, throttled_fraction)                 \
  X(MetricStats, pcie_tx_bytes_per_s)           \
  X(MetricStats, pcie_rx_bytes_per_s)           \
  X(MetricStats, nvlink_tx_bytes_per_s)         \
  X(MetricStats, nvlink_rx_bytes_per_s)

// results[].ranks[].telemetry.sampled.host.net: the process group's interface and its rates.
#define DDPBENCH_NET_TELEMETRY_FIELDS(X) \
  X(std::string, interface)              \
  X(MetricStats, rx_bytes_per_s)         \
  X(MetricStats, tx_bytes_per_s)

// results[].ranks[].telemetry.sampled.host.infiniband[]: one port ("mlx5_0/1") and its rates.
#define DDPBENCH_IB_PORT_TELEMETRY_FIELDS(X) \
  X(std::string, port)                       \
  X(MetricStats, rx_bytes_per_s)             \
  X(MetricStats, tx_bytes_per_s)

// results[].ranks[].telemetry.sampled.host: this process's CPU use and peak RSS, the network
// ("net" is null without an interface: kept as read).
#define DDPBENCH_HOST_TELEMETRY_FIELDS(X) \
  X(MetricStats, cpu_util_pct)            \
  X(long long, peak_rss_bytes)            \
  X(NetTelemetry, net)                    \
  X(std::vector<IbPortTelemetry>, infiniband)

// results[].ranks[].telemetry.sampled (schema 1.6; METHODOLOGY "Telemetry"): sampling period
// (ms), samples, seconds covered, GPU and host, the series (each metric's points, t_s their
// times; NaN where a point has no value, written as null), the flags raised on it.
#define DDPBENCH_TELEMETRY_SUMMARY_FIELDS(X) \
  X(long long, interval_ms)                  \
  X(long long, samples)                      \
  X(double, span_s)                          \
  X(GpuTelemetry, gpu)                       \
  X(HostTelemetry, host)                     \
  X(TelemetrySeries, series)                 \
  X(std::vector<std::string>, flags)         \
  X(std::string, series_dropped)

// results[].ranks[].telemetry: the rank's telemetry summary (sampled), what a comm hook
// handed to collectives (bytes per step), the devices of a `dataparallel` row.
#define DDPBENCH_RANK_TELEMETRY_FIELDS(X)  \
  X(TelemetrySummary, sampled)             \
  X(double, comm_hook_wire_bytes_per_step) \
  X(std::vector<std::string>, devices)

// results[].convergence.epochs[] (time to loss): one epoch's outcome (s; losses in nats;
// accuracy a fraction; data wait per step, s).
#define DDPBENCH_CONVERGENCE_EPOCH_FIELDS(X) \
  X(long long, epoch)                        \
  X(double, wall_s)                          \
  X(double, train_s)                         \
  X(double, eval_s)                          \
  X(long long, steps)                        \
  X(double, train_loss)                      \
  X(double, test_loss)                       \
  X(double, test_accuracy)                   \
  X(double, data_wait_s_mean)                \
  X(double, data_wait_s_max)

// results[].convergence.target: the stopping target (metric "test_accuracy", "test_loss"
// or "none"), whether and when (epoch, s) it was reached.
#define DDPBENCH_CONVERGENCE_TARGET_FIELDS(X) \
  X(std::string, metric)                      \
  X(double, value)                            \
  X(bool, reached)                            \
  X(long long, epoch)                         \
  X(double, wall_s)

// results[].convergence.loss: the training loss per optimizer step, subsampled.
#define DDPBENCH_LOSS_CURVE_FIELDS(X) \
  X(std::vector<long long>, step)     \
  X(std::vector<double>, wall_s)      \
  X(std::vector<double>, value)       \
  X(long long, steps_total)           \
  X(long long, subsample_stride)      \
  X(std::string, note)

// results[].convergence (time-to-loss rows; METHODOLOGY "Real data and time-to-loss").
// normalization and optimizer are small records written as run; baselines are entries of
// benchmark/baselines.json (core/analysis/convergence).
#define DDPBENCH_ROW_CONVERGENCE_FIELDS(X) \
  X(std::string, dataset)                  \
  X(long long, train_examples)             \
  X(long long, test_examples)              \
  X(long long, image_size)                 \
  X(nlohmann::json, normalization)         \
  X(long long, loader_workers)             \
  X(nlohmann::json, optimizer)             \
  X(long long, steps_per_epoch)            \
  X(std::vector<ConvergenceEpoch>, epochs) \
  X(LossCurve, loss)                       \
  X(TargetOutcome, target)                 \
  X(nlohmann::json, baselines)             \
  X(std::string, baselines_source)         \
  X(std::string, reference)                \
  X(std::string, note)

#define DDPBENCH_SECTION_MEMBER(type, name) std::optional<type> name;

/// results[].checks: what the row verified about its own computation. DDP rows: gradients
/// equal across ranks after the first step (grad_*) and the Reducer's buckets; zero2/fsdp
/// rows: parameters equal across ranks (param_*); `dataparallel` rows: each path's output
/// and gradients against the model alone (dp_*); fp16 rows: loss-scaler skips among the
/// timed steps.
struct RowChecks {
  DDPBENCH_ROW_CHECKS_FIELDS(DDPBENCH_SECTION_MEMBER)
  nlohmann::json extra = nlohmann::json::object();  ///< keys this version does not know, as read

  /// The row's self-check verdict: its gradient, parameter or DataParallel check, whichever
  /// it has (a row has one); nullopt when it has none (the no-DDP baseline, older files).
  std::optional<bool> passed() const;
  /// Why no timing of the row counts, or "" when none: a failed self-check, or fp16 steps
  /// the loss scaler skipped among the timed ones.
  std::string invalid_reason() const;
  bool operator==(const RowChecks& o) const;
};

/// results[].compute: FLOPs per example, achieved TFLOP/s per GPU, the peak MFU divides by
/// (TFLOP/s, null for a GPU not in core/stats/gpu_peaks) and the model's size (parameters).
struct RowCompute {
  DDPBENCH_ROW_COMPUTE_FIELDS(DDPBENCH_SECTION_MEMBER)
  nlohmann::json extra = nlohmann::json::object();  ///< keys this version does not know, as read
  bool operator==(const RowCompute& o) const;
};

/// results[].communication: gradient bytes per optimizer step (allreduce_bytes_per_step:
/// the Reducer's buckets, bytes), what was sent (wire_bytes_per_step: fewer under the fp16
/// and bf16 hooks), the allreduce's achieved bandwidth over the Reducer's communication span
/// (GB/s, busbw as nccl-tests' PERFORMANCE.md), and per epoch at dataset_size examples
/// (steps_per_epoch = ceil(dataset_size / examples per optimizer step)).
struct RowCommunication {
  DDPBENCH_ROW_COMMUNICATION_FIELDS(DDPBENCH_SECTION_MEMBER)
  nlohmann::json extra = nlohmann::json::object();  ///< the strategy's own terms, and keys this version does not know
  bool operator==(const RowCommunication& o) const;
};

/// results[].breakdown: each phase's seconds per step, mean and max over the row's ranks
/// (each rank's mean over its measured steps), over `iterations` steps; `dataparallel` rows
/// keep their own phases in `extra` (METHODOLOGY "DataParallel, native and hand-made").
struct RowBreakdown {
  DDPBENCH_ROW_BREAKDOWN_FIELDS(DDPBENCH_SECTION_MEMBER)
  nlohmann::json extra = nlohmann::json::object();  ///< a strategy's own split, and keys this version does not know
  /// The mean over ranks of phase `p`, seconds per step; nullopt when absent or not finite.
  std::optional<double> mean(Phase p) const;
  bool operator==(const RowBreakdown& o) const;
};

/// results[].ddp_options: bucket caps (MiB; the first bucket's separately), the DDP flags of
/// the same names, and the communication hook ("none", "allreduce", "fp16", "bf16",
/// "powersgd:R", "hierarchical", "topk:RATIO"; core/config/comm_hook_spec). Empty for no-DDP
/// rows and in files of schema < 1.5 (the file's config holds them there).
struct RowDdpOptions {
  DDPBENCH_ROW_DDP_OPTIONS_FIELDS(DDPBENCH_SECTION_MEMBER)
  nlohmann::json extra = nlohmann::json::object();  ///< keys this version does not know, as read
  bool operator==(const RowDdpOptions& o) const;
};

// A section of plain fields: members, unknown keys, equality of what it writes.
#define DDPBENCH_PLAIN_SECTION(Type, FIELDS)                                               \
  struct Type {                                                                            \
    FIELDS(DDPBENCH_SECTION_MEMBER)                                                        \
    nlohmann::json extra = nlohmann::json::object(); /* keys this version does not know */ \
    bool operator==(const Type& o) const;                                                  \
  };

/// A metric's points over time, by name ("t_s", "sm_util_pct", ...); NaN where none.
using TelemetrySeries = std::map<std::string, std::vector<double>>;

DDPBENCH_PLAIN_SECTION(MetricStats, DDPBENCH_METRIC_STATS_FIELDS)
DDPBENCH_PLAIN_SECTION(GpuTelemetry, DDPBENCH_GPU_TELEMETRY_FIELDS)
DDPBENCH_PLAIN_SECTION(NetTelemetry, DDPBENCH_NET_TELEMETRY_FIELDS)
DDPBENCH_PLAIN_SECTION(IbPortTelemetry, DDPBENCH_IB_PORT_TELEMETRY_FIELDS)
DDPBENCH_PLAIN_SECTION(HostTelemetry, DDPBENCH_HOST_TELEMETRY_FIELDS)
/// results[].ranks[].telemetry.sampled (see DDPBENCH_TELEMETRY_SUMMARY_FIELDS); written by
/// core/telemetry's TelemetryAccumulator, flags added by telemetry_flags.
DDPBENCH_PLAIN_SECTION(TelemetrySummary, DDPBENCH_TELEMETRY_SUMMARY_FIELDS)

/// results[].telemetry.loss_scaling: the final scale, steps skipped for overflow (warm-up
/// included) and among the timed ones.
DDPBENCH_PLAIN_SECTION(LossScaling, DDPBENCH_LOSS_SCALING_FIELDS)
/// results[].telemetry.profile: the trace file (in the --profile folder), the profiler, steps traced.
DDPBENCH_PLAIN_SECTION(ProfileRecord, DDPBENCH_PROFILE_RECORD_FIELDS)
/// results[].telemetry (see DDPBENCH_ROW_TELEMETRY_FIELDS).
DDPBENCH_PLAIN_SECTION(RowTelemetry, DDPBENCH_ROW_TELEMETRY_FIELDS)
/// results[].ranks[].telemetry (see DDPBENCH_RANK_TELEMETRY_FIELDS).
DDPBENCH_PLAIN_SECTION(RankTelemetry, DDPBENCH_RANK_TELEMETRY_FIELDS)
/// results[].convergence.epochs[]: one epoch of a time-to-loss row.
DDPBENCH_PLAIN_SECTION(ConvergenceEpoch, DDPBENCH_CONVERGENCE_EPOCH_FIELDS)
/// results[].convergence.target: the target and whether it was reached.
DDPBENCH_PLAIN_SECTION(TargetOutcome, DDPBENCH_CONVERGENCE_TARGET_FIELDS)
/// results[].convergence.loss: training loss per step (value, nats; NaN written as null).
DDPBENCH_PLAIN_SECTION(LossCurve, DDPBENCH_LOSS_CURVE_FIELDS)
/// results[].convergence: a time-to-loss row's data, optimizer, epochs, loss curve and target.
DDPBENCH_PLAIN_SECTION(RowConvergence, DDPBENCH_ROW_CONVERGENCE_FIELDS)

#undef DDPBENCH_PLAIN_SECTION
#undef DDPBENCH_SECTION_MEMBER

/// One rank's burn-in windows (results[].burn_in.per_rank[]): throughput per window, ex/s
/// (NaN where a file holds something else; written as null), the optimizer steps it
/// measured, the samples it kept and their stride (core/stats/burn_in subsample_stride).
struct BurnInRank {
  int rank = 0;
  std::vector<double> ex_per_s;
  long long steps = 0, samples_kept = 0, subsample_stride = 1;
  bool operator==(const BurnInRank& o) const;
};

/// One rank's drift (results[].burn_in.drift[]): its last window against its first, as
/// core/stats/burn_in throughput_drift computes it (ex/s; change and resolution in %).
struct BurnInDrift {
  int rank = 0;
  double first_ex_per_s = 0, last_ex_per_s = 0, change_pct = 0, resolution_pct = 0;
  bool flagged = false;
  bool operator==(const BurnInDrift& o) const;
};

/// results[].burn_in, with --duration only (METHODOLOGY "Progress and burn-in"): the series'
/// length and its windows (s), every rank's windows and drift, the threshold beyond which a
/// fall is flagged (%), and how the windows are counted.
struct RowBurnIn {
  std::optional<double> duration_s, window_s, drift_threshold_pct;
  std::vector<BurnInRank> per_rank;
  std::vector<BurnInDrift> drift;
  std::optional<std::string> note;
  nlohmann::json extra = nlohmann::json::object();  ///< keys this version does not know, as read
  /// No burn-in: nothing set (a row without --duration writes no "burn_in").
  bool empty() const;
  bool operator==(const RowBurnIn& o) const;
};

/// Writes only the fields that have a value, then `extra`.
/// Adds each key of `extra` (an object; anything else adds nothing) that `j` does not hold:
/// a section's unknown keys written back after its fields.
void put_extra(nlohmann::json& j, const nlohmann::json& extra);

void to_json(nlohmann::json& j, const RowChecks& c);
/// Reads an object (anything else reads as empty); never throws: a field of another type
/// stays in `extra`.
void from_json(const nlohmann::json& j, RowChecks& c);
void to_json(nlohmann::json& j, const RowCompute& c);
void from_json(const nlohmann::json& j, RowCompute& c);
void to_json(nlohmann::json& j, const RowCommunication& c);
void from_json(const nlohmann::json& j, RowCommunication& c);
void to_json(nlohmann::json& j, const RowBreakdown& c);
void from_json(const nlohmann::json& j, RowBreakdown& c);
void to_json(nlohmann::json& j, const RowDdpOptions& c);
void from_json(const nlohmann::json& j, RowDdpOptions& c);
void to_json(nlohmann::json& j, const MetricStats& c);
void from_json(const nlohmann::json& j, MetricStats& c);
void to_json(nlohmann::json& j, const GpuTelemetry& c);
void from_json(const nlohmann::json& j, GpuTelemetry& c);
void to_json(nlohmann::json& j, const NetTelemetry& c);
void from_json(const nlohmann::json& j, NetTelemetry& c);
void to_json(nlohmann::json& j, const IbPortTelemetry& c);
void from_json(const nlohmann::json& j, IbPortTelemetry& c);
void to_json(nlohmann::json& j, const HostTelemetry& c);
void from_json(const nlohmann::json& j, HostTelemetry& c);
void to_json(nlohmann::json& j, const TelemetrySummary& c);
void from_json(const nlohmann::json& j, TelemetrySummary& c);
void to_json(nlohmann::json& j, const LossScaling& c);
void from_json(const nlohmann::json& j, LossScaling& c);
void to_json(nlohmann::json& j, const ProfileRecord& c);
void from_json(const nlohmann::json& j, ProfileRecord& c);
void to_json(nlohmann::json& j, const RowTelemetry& c);
void from_json(const nlohmann::json& j, RowTelemetry& c);
void to_json(nlohmann::json& j, const RankTelemetry& c);
void from_json(const nlohmann::json& j, RankTelemetry& c);
void to_json(nlohmann::json& j, const ConvergenceEpoch& c);
void from_json(const nlohmann::json& j, ConvergenceEpoch& c);
void to_json(nlohmann::json& j, const TargetOutcome& c);
void from_json(const nlohmann::json& j, TargetOutcome& c);
void to_json(nlohmann::json& j, const LossCurve& c);
void from_json(const nlohmann::json& j, LossCurve& c);
void to_json(nlohmann::json& j, const RowConvergence& c);
void from_json(const nlohmann::json& j, RowConvergence& c);
void to_json(nlohmann::json& j, const RowBurnIn& c);
/// A per_rank or drift entry that is not an object is skipped; a field of another type reads
/// as its default (a window as NaN).
void from_json(const nlohmann::json& j, RowBurnIn& c);

}  // namespace ddpbench
