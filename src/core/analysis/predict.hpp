// The scaling predictor (`ddpbench predict`): α–β fits of collectives measured by
// `ddpbench comm`, and the step time and weak-scaling efficiency of a measured DDP row
// predicted at world sizes not measured. Torch-free. Models, fit, assumptions and sources
// in docs/METHODOLOGY.md ("Scaling predictor").
//
// Cost models (Hockney 1994 α–β: a message of n bytes costs α + n·β; p ranks; n bytes is
// nccl-tests' "size" of the collective, the `bytes` field of a comm row):
//   allreduce, ring:  T = 2(p−1)·α + 2(p−1)/p · n·β
//       (reduce-scatter then all-gather around a ring; Patarasuk & Yuan 2009, "Bandwidth
//        optimal all-reduce algorithms for clusters of workstations", JPDC 69(2); Thakur,
//        Rabenseifner & Gropp 2005, "Optimization of Collective Communication Operations in
//        MPICH", IJHPCA 19(1), §4.4)
//   allreduce, tree:  T = 2·⌈log2 p⌉·α + 2·n·β
//       (NCCL's pipelined double binary tree: a reduce up and a broadcast down two
//        complementary binary trees, each carrying n/2; the latency is the depth up and
//        down, and with the message pipelined in small chunks every rank sends and
//        receives about 2n bytes whatever p. Sanders, Speck & Träff 2009, "Two-tree
//        algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing
//        35(12); NCCL 2.4's double binary trees, NVIDIA developer blog, 2019. Thakur et
//        al.'s unpipelined binomial tree, 2⌈log2 p⌉(α + nβ), is not used: no library
//        reduces large messages that way.)
//   reduce_scatter, all_gather (ring): T = (p−1)·α + (p−1)/p · n·β  (Thakur et al. 2005)
// p = 1 costs nothing under every model.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/report_analysis.hpp"
#include "core/result/result.hpp"
#include "core/util/table.hpp"

namespace ddpbench {

/// A collective's cost model.
enum class CostModel { ring, tree };

/// "ring" or "tree".
std::string cost_model_name(CostModel m);

/// Parses "ring", "tree" or "both" (both: ring then tree); throws UsageError naming `flag`.
/// ("auto", the backend's algorithm, is PredictOptions::models_from_backend.)
std::vector<CostModel> parse_cost_models(const std::string& text, const std::string& flag = "--model");

/// The allreduce algorithms `backend` runs, as cost models: Gloo's allreduce is a segmented
/// ring whatever the size (gloo/allreduce.cc, which ProcessGroupGloo calls for dense CPU
/// tensors); NCCL chooses per message size among ring and tree (and others its tuner knows,
/// src/graph/tuning.cc), so both are shown; an unknown backend gets both too.
std::vector<CostModel> cost_models_of_backend(const std::string& backend);

/// Link level of a group: intra-node (nodes == 1) or inter-node (nodes > 1).
enum class LinkLevel { intra, inter };

/// "intra-node" or "inter-node".
std::string link_level_name(LinkLevel l);

/// The coefficients of α and β in a cost model: T = alpha_coef·α + beta_coef·β
/// (alpha_coef: messages on the critical path; beta_coef: bytes on it).
struct CostTerms {
  double alpha_coef = 0;
  double beta_coef = 0;  ///< bytes
};

/// True for the collectives with a cost model: allreduce, reduce_scatter, all_gather.
bool has_cost_model(const std::string& collective);

/// The models of `collective`: allreduce ring and tree; reduce_scatter and all_gather ring
/// (what NCCL implements them with); none for the others.
std::vector<CostModel> cost_models_of(const std::string& collective);

/// The terms of `collective` on `p` ranks for `n_bytes` under `model` (formulas in the
/// file comment). p = 1 gives {0, 0}. Throws UsageError for p < 1, n_bytes < 0, or a
/// collective/model pair without a formula (see cost_models_of).
CostTerms cost_terms(const std::string& collective, CostModel model, int p, double n_bytes);

/// Latency and inverse bandwidth of one link level.
struct AlphaBeta {
  double alpha_s = 0;          ///< s per message
  double beta_s_per_byte = 0;  ///< s per byte; bandwidth = 1 / β
};

/// Time of `collective` under `model` with `ab`: alpha_coef·α + beta_coef·β, seconds.
double model_time_s(const AlphaBeta& ab, const std::string& collective, CostModel model, int p, double n_bytes);

/// Result of fit_alpha_beta.
struct LinearFit {
  AlphaBeta ab;
  double r2 = 0;                ///< 1 − SS_res/SS_tot of the fitted times (1 when both are 0)
  double max_rel_residual = 0;  ///< max over points of |t_fit − t| / t
};

/// Least squares of t_i = α·a_i + β·b_i (a_i, b_i from `terms`, t_i in s, no other
/// intercept), weighted by 1/t_i² so that relative residuals count: small sizes, which
/// fix α, weigh as much as large ones, which fix β. Throws UsageError when the sizes
/// differ in fewer than two points (the system is singular), the inputs differ in length,
/// or a time is not positive.
LinearFit fit_alpha_beta(const std::vector<CostTerms>& terms, const std::vector<double>& times_s);

/// One α–β fit: one collective, dtype, link level and model, over the rows of one world
/// size (world_size > 0) or pooled over all world sizes of the level (world_size == 0,
/// only made when there are several).
struct CommFit {
  std::string collective, dtype;
  LinkLevel level = LinkLevel::intra;
  CostModel model = CostModel::ring;
  int world_size = 0;            ///< 0: pooled over `world_sizes`
  std::vector<int> world_sizes;  ///< those measured, ascending
  size_t points = 0;
  long long min_bytes = 0, max_bytes = 0;
  LinearFit fit;
  /// Why no prediction may use this fit ("" when it may): β ≤ 0 (times that do not grow
  /// with size), 1/β beyond any link (kMaxLinkGBps), or times that fall as the size grows.
  std::string unusable;
  /// CPU cores the collective kept busy over the fit's rows: the comm rows' cpu_cores weighted
  /// by their times (their CPU time over their time); nullopt when a row lacks it (files before
  /// schema 1.16).
  std::optional<double> cpu_cores;
  /// 1 / β in GB/s (1e9 bytes/s); 0 when β ≤ 0.
  double bandwidth_gbps() const;
};

/// The fastest link a fit may describe, GB/s (1e9 bytes/s): ten times an NVLink 5 GPU's
/// 1.8 TB/s (NVIDIA's Blackwell datasheet); a fit beyond it comes from flat timings.
inline constexpr double kMaxLinkGBps = 18000;

/// How far a time may fall below the largest one at a smaller size, where the bandwidth term
/// dominates, before the timings count as non-monotonic: t < (1 − this) · max earlier t.
inline constexpr double kMonotonicTolerance = 0.25;

/// Fits every modelled collective of `rows` (the comm_results of `comm` files) per
/// (collective, dtype, link level, world size), and pooled per (collective, dtype, level)
/// where a level has several world sizes, for each of its models. Rows with #wrong > 0, a
/// time ≤ 0, world size 1 (no communication under the models) or an unmodelled collective
/// are left out, each kind once in `notes`; a group with fewer than two sizes is left out
/// with a note too. Never throws for data; the caller decides what a missing fit means.
std::vector<CommFit> fit_comm(const std::vector<CommResult>& rows, std::vector<std::string>& notes);

/// When the synchronised micro-step's backward pass and its bucket allreduces end, s from the
/// backward's start (overlap_timeline).
struct OverlapTimeline {
  double backward_end_s = 0;
  double comm_end_s = 0;  ///< the last bucket's allreduce; 0 without buckets
  /// The communication nothing hid: max(0, comm_end_s − backward_end_s).
  double exposed_s() const;
  /// Backward and communication together: max(backward_end_s, comm_end_s).
  double span_s() const;
};

/// The backward pass and the bucket allreduces over time. The backward needs `backward_s` on
/// its own; bucket i becomes ready when it has done Σ_{j≤i} bytes_j / Σ bytes of that work
/// (a uniform byte rate), and the buckets are reduced one at a time in Reducer order, each
/// taking bucket_times_s[i] on its own.
/// `cpu_share` φ ∈ [0, 1] is the CPU the allreduce keeps busy on its own as a fraction of
/// the CPU the rank's compute keeps busy (comm's cpu_cores / run's cpu_cores). φ = 0 (a GPU
/// rank: the collective runs on the GPU and the network) leaves both at full speed, and the
/// last bucket ends at max_i (ready_i + Σ_{j≥i} T_j), the critical path of a FIFO pipeline.
/// φ > 0 (Gloo on CPU tensors: its sends, receives and reductions run on the rank's cores)
/// puts both on one CPU budget, shared as a fair scheduler shares it between two busy
/// threads (Linux CFS): while both run, the allreduce gets g = min(φ, ½) of the budget and
/// runs at g/φ of its speed alone, the backward gets 1 − g. (A fluid model of processor
/// sharing; METHODOLOGY "Scaling predictor".) Throws std::invalid_argument when the lengths
/// differ, a time is negative or φ is outside [0, 1].
OverlapTimeline overlap_timeline(const std::vector<double>& bucket_bytes, const std::vector<double>& bucket_times_s,
                                 double backward_s, double cpu_share);

/// The time communication adds to a step after overlap with the backward pass, s.
/// Buckets are reduced one at a time in Reducer order (bucket 0 first); bucket i is ready
/// when backward has produced the gradients of buckets 0..i, at a uniform byte rate over
/// `hideable_s` (ready_i = hideable_s · Σ_{j≤i} bytes_j / Σ bytes). The last bucket
/// finishes at max_i (ready_i + Σ_{j≥i} T_j) (the critical path of a FIFO pipeline), and
/// exposed = max(0, that − hideable_s). So with comm slower than backward it is
/// T_comm − (hideable_s − ready_0), and never less than the last bucket's T. Throws
/// std::invalid_argument when the lengths differ. overlap_timeline(…, 0).exposed_s().
double exposed_comm_s(const std::vector<double>& bucket_bytes, const std::vector<double>& bucket_times_s,
                      double hideable_s);

/// Options of `ddpbench predict`.
struct PredictOptions {
  std::vector<int> world_sizes = {8, 64, 512, 4096};  ///< predicted in addition to the measured ones
  std::vector<CostModel> models = {CostModel::ring, CostModel::tree};
  /// Each base row is predicted under its own backend's algorithms (cost_models_of_backend),
  /// not `models` (`--model auto`, the default of the command).
  bool models_from_backend = false;
  int gpus_per_node = 0;  ///< ranks per node; 0: the most any row of the run files ran on one node
};

/// What the prediction takes from one measured DDP row (the base).
struct BaseRow {
  std::string source;       ///< file name
  std::string description;  ///< ConfigKey::describe() plus hook and grad_accum when set
  int world_size = 1, nodes = 1;
  long long batch_per_rank = 0;
  int grad_accum = 1;
  std::string comm_hook = "none";
  std::string dtype = "float32";     ///< dtype the buckets are reduced in (fp16/bf16 hooks: float16/bfloat16)
  std::vector<double> bucket_bytes;  ///< bytes each bucket puts on the wire, Reducer order
  double step_p50_s = 0;             ///< the row's p50
  /// The breakdown's components, mean over ranks, s.
  double backward_compute_s = 0, backward_comm_s = 0, overlap_s = 0, exposed_comm_s = 0;
  double hideable_s = 0;  ///< backward_compute_s / grad_accum: the synchronised micro-step's backward
  double fixed_s = 0;     ///< step_p50_s − exposed_comm_s: the step without exposed communication
  /// On a CPU row, the budget the backward and Gloo's allreduces share: the most cores
  /// (run's per-rank metric cpu_cores, mean over ranks) a DDP row of this series on at most
  /// the base's ranks kept busy, the base's own included, or the series' no-DDP baseline
  /// (the step alone: a rank waiting on the network reads fewer cores than its budget);
  /// nullopt on GPUs and in files without the metric.
  std::optional<double> cpu_cores;
  std::optional<double> baseline_per_gpu_ex_s;  ///< report's weak-scaling baseline (report_analysis.hpp WeakTable)
  std::string baseline;                         ///< its name ("1-rank DDP", "no-DDP", ...)
};

/// One predicted point.
struct PredictedPoint {
  int world_size = 1, nodes = 1;
  CostModel model = CostModel::ring;
  LinkLevel level = LinkLevel::intra;  ///< the level whose α–β was used
  bool level_substituted = false;      ///< the wanted level had no fit; the other one's was used
  /// The allreduce times come from `comm` rows measured at this very world size (that size's
  /// own fit), not from a fit of other sizes.
  bool comm_measured_here = false;
  AlphaBeta ab;
  double comm_s = 0;                 ///< Σ over buckets of the allreduce time
  /// φ of overlap_timeline: the fit's cpu_cores / the base's, at most 1; 0 on GPU rows and
  /// where either is unmeasured.
  double cpu_share = 0;
  double backward_s = 0;  ///< the synchronised micro-step's backward, sharing the CPU with the allreduces
  double exposed_s = 0;   ///< overlap_timeline(...).exposed_s()
  /// The base's step with its own backward and exposed communication replaced by this size's
  /// overlap_timeline span: fixed_s + exposed_s when cpu_share is 0.
  double step_s = 0;
  std::optional<double> efficiency;  ///< (batch/step_s) / baseline_per_gpu_ex_s
  // Measured at this world size (a DDP row of the same configuration, hook and grad_accum):
  std::optional<double> measured_step_s;     ///< its p50
  std::optional<double> measured_comm_s;     ///< its breakdown's backward_comm_s
  std::optional<double> measured_exposed_s;  ///< its breakdown's exposed_comm_s
  std::optional<double> measured_backward_s;  ///< its breakdown's backward_compute_s / grad_accum
  std::optional<double> measured_efficiency;
  std::optional<double> error;  ///< (step_s − measured_step_s) / measured_step_s
  /// The backtest of the base row: max |error| over its predictions of every measured world
  /// size of 2+ ranks, its own included (same model); nullopt when it has none. (A 1-rank size
  /// has no allreduce: its error is shown in its row, not in the bound.)
  std::optional<double> backtest_error;
  /// An unmeasured world size predicted with no error bound worth the name: the table
  /// prints "withheld" and no step, range or efficiency. Why, in withheld_reason: the
  /// backtest above kMaxBacktestError, no measured size but the base's own to test against,
  /// or the base could not be calibrated for this model.
  bool withheld = false;
  std::string withheld_reason;
};

/// The largest backtest error (a fraction) at which predict still gives a range for an
/// unmeasured world size.
inline constexpr double kMaxBacktestError = 0.15;

/// The largest comm factor (and 1 / the smallest) a calibration may find: beyond it the
/// `comm` timings do not describe the links the run used.
inline constexpr double kMaxCommFactor = 64;

/// The predictions from one base row: every world size (options and measured ones,
/// ascending), each model.
struct RowPrediction {
  BaseRow base;
  /// Per cost model, the factor k applied to every modelled allreduce time: on a base row
  /// of 2+ ranks with exposed communication, the k at which exposed_comm_s of the base's
  /// own world size equals its measured exposed_comm_s (DDP's allreduces inside the step
  /// against comm's standalone ones: contention with the backward, buckets in flight
  /// together); 1 on one rank or when fully hidden.
  std::map<CostModel, double> comm_factor;
  /// Per cost model, the synchronised micro-step's backward without the allreduces' CPU, s:
  /// the backward that, sharing the CPU with them (overlap_timeline, cpu_share of the base's
  /// size), takes the base's measured hideable_s. hideable_s itself where cpu_share is 0.
  std::map<CostModel, double> backward_alone_s;
  /// Per cost model where the calibration failed: why (the factor needed lies outside
  /// [1/kMaxCommFactor, kMaxCommFactor], or none reproduces the measured exposed
  /// communication). Predictions of unmeasured sizes from this row and model are withheld.
  std::map<CostModel, std::string> uncalibrated;
  std::vector<PredictedPoint> points;
};

/// Everything `ddpbench predict` prints.
struct Prediction {
  std::vector<CommFit> fits;
  std::vector<RowPrediction> rows;
  int gpus_per_node = 1;
  std::string gpus_per_node_source;  ///< where gpus_per_node came from, for the notes
  std::vector<std::string> notes;    ///< what was left out or substituted, and why
};

/// Builds the prediction. `runs` are files of kind "run", `comms` of kind "comm". Every
/// weak-scaling DDP row with a breakdown (and a hook the model covers: none, allreduce,
/// fp16, bf16) is a base row; buckets come from communication.bucket_sizes_bytes
/// (checks.bucket_sizes_bytes in earlier files), scaled by wire_bytes_per_step /
/// allreduce_bytes_per_step for fp16/bf16. Allreduce α–β: the pooled fit of the level, else
/// its one world size's, of the bucket dtype, else float32, else any dtype (noted).
/// Throws UsageError (one line, naming the fix) for a file of the wrong kind, no comm
/// file, no DDP row with a breakdown and buckets, no allreduce fit (no allreduce rows, or
/// fewer than two sizes), β ≤ 0 in an allreduce fit a prediction needs, or options out of
/// range (world sizes 1..10⁶, gpus per node 0..10⁶). A fitted α < 0 (noise at the small
/// sizes) is taken as 0 in the predictions, with a note; breakdown components that are
/// negative or not finite count as missing.
Prediction build_prediction(const std::vector<NamedResult>& runs, const std::vector<NamedResult>& comms,
                            const PredictOptions& opts);

/// The tables: the α–β fits ("fit"), then one per base row ("prediction").
std::vector<Table> prediction_tables(const Prediction& p);

/// render_tables of prediction_tables; JSON adds {"gpus_per_node", "notes"}.
std::string render_prediction(const Prediction& p, TableFormat format);

}  // namespace ddpbench
