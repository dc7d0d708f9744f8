// Typed sections of a result row (results[].checks, compute, communication, breakdown,
// ddp_options, burn_in): each field listed once, in an X-macro that declares the member and
// its JSON reader and writer (burn_in's lists of per-rank objects by hand). Fields are
// optional (a row of one kind fills only its own); keys a section does not know, or a known
// key of another type, are kept in `extra` as read and written back, so a file round-trips
// whatever its version. A field without a value is left out (schema 1.11; before, some were
// written as null, which reads as no value). Meanings: docs/result-schema.md. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

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
  X(long long, trainable_parameters)

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
#define DDPBENCH_ROW_DDP_OPTIONS_FIELDS(X) \
  X(double, bucket_cap_mb)                 \
  X(double, first_bucket_cap_mb)           \
  X(bool, broadcast_buffers)               \
  X(bool, gradient_as_bucket_view)         \
  X(bool, static_graph)                    \
  X(bool, find_unused_parameters)          \
  X(std::string, comm_hook)

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
void to_json(nlohmann::json& j, const RowBurnIn& c);
/// A per_rank or drift entry that is not an object is skipped; a field of another type reads
/// as its default (a window as NaN).
void from_json(const nlohmann::json& j, RowBurnIn& c);

}  // namespace ddpbench
