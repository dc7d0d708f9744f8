// The versioned JSON result file: types, (de)serialisation, atomic write.
// Torch-free. Shape (README "The result file"; meanings in docs/METHODOLOGY.md):
// {schema_version, complete, rows_planned, tool{name, version, git_sha, git_dirty}, created_utc, argv[],
//  config{...}, environment{...}, results[{model, label, batch_per_rank, image_size,
//  precision, scaling, global_batch, world_size, nodes, ddp,
//  ranks[{rank, host, local_rank, device, samples_s[]}],
//  summary{p50_s, ..., iterations, cv, ex_per_s_per_gpu, ex_per_s_total}, telemetry{...},
//  checks{...}, compute{...}, communication{...}, stopping{...}, warnings[...]}]}
#pragma once

#include <nlohmann/json.hpp>

#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result/row_memory.hpp"
#include "core/result/row_sections.hpp"
#include "core/stats/stats.hpp"

namespace ddpbench {

/// Semantic version of the result-file schema (not the tool version). Readers
/// accept any file whose major version equals kSchemaMajor; a minor bump only
/// adds fields (1.1: scaling, global_batch per row; 1.2: compute, communication per row;
/// 1.3: summary.iterations and summary.cv, Student-t ci95_s, stopping and warnings per row;
/// 1.4: top-level complete and rows_planned; 1.5: kind, comm_results, and per row grad_accum,
/// ddp_options, breakdown, per rank breakdown; 1.6: per rank telemetry.sampled, per row burn_in,
/// top-level stragglers, comm_pairs, max_batch, environment.nodes, kind "find-max-bs"; 1.7: strategy,
/// activation_checkpointing, mode, memory, convergence per row; 1.8: config.zero_grad_set_to_none;
/// 1.9: config.first_bucket_cap_mb one per swept bucket cap when several, as bucket_cap_mb;
/// 1.10: per rank step, per row iteration_means_s and ranks_kept_in_full, summary.p5_s;
/// samples_s and telemetry series only for the ranks kept in full, config.per_rank_series;
/// 1.11: checks and compute leave out a field without a value (compute.peak_tflops, mfu,
/// peak_basis and checks.dp_grad_rel_diff were null); dataparallel rows' seed002_* keys
/// renamed banerjee_shah_*; 1.12: memory.per_rank leaves out a peak without a value (was
/// null), ranks_kept_in_full holds the flagged ranks and the slowest only; 1.13: convergence's
/// target leaves out epoch and wall_s when the target was not reached, and value with no
/// target (were null); 1.14: per row group and launch; 1.15: per rank and per row `metrics`,
/// the per-rank metrics of core/result/row_metrics by key (a new key there is no schema change);
/// 1.16: comm_results[].cpu_cores; 1.17: environment.rendezvous.store_server; 1.18: the no-DDP
/// row of a launch of several ranks is rank 0 alone, and its telemetry.concurrent_baseline_p50_s;
/// 1.19: config.instruments_off. 1.20: config and ddp_options skip_all_reduce_unused_params.
/// 1.21: language models: compute.seq_len, tokens_per_s_per_gpu, tokens_per_s; config.seq_len,
/// model_layers, model_width.
/// 1.22: max_batch.intra_op_threads (and in config.batch_size_search.per_rank[]).
inline constexpr const char* kSchemaVersion = "1.22.0";
inline constexpr int kSchemaMajor = 1;

/// One rank's step times of one row, summarised (seconds per measured iteration).
struct RankStepSummary {
  int n = 0;  ///< measured iterations (after --duration's subsampling)
  double mean_s = 0, p50_s = 0, p95_s = 0, max_s = 0;
};

/// One rank's measurements for one benchmark row.
struct RankSamples {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::string device;  ///< "cpu" or "cuda:<index>"
  /// Seconds per measured iteration, in order: for the ranks kept in full only (see
  /// BenchResult::ranks_kept_in_full); empty for the others.
  std::vector<double> samples_s;
  std::optional<RankStepSummary> step;  ///< every rank (schema 1.10; absent before)
  RankTelemetry telemetry;              ///< telemetry summary and per-rank extras (core/result/row_sections)
  /// This rank's step breakdown: each phase's mean seconds per measured step (empty when
  /// the row has none; schema < 1.5).
  PhaseSeconds breakdown;
  /// This rank's value of each per-rank metric it measured (core/result/row_metrics
  /// per_rank_metrics: key -> value in the metric's unit, reduced over its steps); schema 1.15.
  std::map<std::string, double> metrics;
};

/// A rank's telemetry summary (schema 1.6; core/telemetry/telemetry), or nullptr when it has none.
const TelemetrySummary* sampled_telemetry(const RankSamples& rank);

/// One measured size of one collective of `ddpbench comm`, with nccl-tests' columns
/// (nccl-tests doc/PERFORMANCE.md): algbw = bytes / time, busbw = algbw * factor(collective, n).
struct CommResult {
  std::string collective;  ///< allreduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, barrier
  std::string dtype;       ///< float32, float16, bfloat16, float64, int32, int64, int8, uint8
  std::string redop;       ///< sum, prod, max, min, avg; "none" where the collective does not reduce
  int root = -1;           ///< broadcast/reduce root rank; -1 where none
  long long bytes = 0;     ///< nccl-tests' "size": bytes of the (per-rank output or input) buffer, see METHODOLOGY
  long long count =
      0;  ///< nccl-tests' count column: elements per rank (all_gather, reduce_scatter, all_to_all: the per-rank chunk)
  int world_size = 1;  ///< ranks in the group measured
  int nodes = 1;       ///< distinct hosts among them
  std::string
      label;  ///< "<nodes>M/<ranks><G|C>", as run's rows; " (emulated)" appended for a collective the backend lacks
  int warmup = 0, iters = 0;
  double time_us = 0;                 ///< mean time per operation, microseconds, averaged over ranks
  double time_us_max_over_ranks = 0;  ///< slowest rank's mean time per operation
  double algbw_gbps = 0;              ///< bytes / time, GB/s (1e9 bytes)
  double busbw_gbps = 0;              ///< algbw * busbw factor, GB/s
  /// CPU cores the ranks' processes kept busy during the timed operations: process CPU time
  /// (every thread, process_cpu_s) / the timed span's wall time, mean over ranks; from schema
  /// 1.16, absent before. On a CPU rank it is the share of the rank's CPU the collective takes
  /// from compute running beside it (the predictor's CPU sharing, METHODOLOGY).
  std::optional<double> cpu_cores;
  long long wrong =
      0;  ///< elements that differed from the expected result, summed over ranks; -1: not checked (barrier, -c 0)
  nlohmann::json extra = nlohmann::json::object();  ///< anything else (emulation notes, per-rank times)
};

/// A reason not to trust a row's numbers as they stand, shown in `run`'s table, the JSON
/// and `report`. Codes: "negative_ddp_overhead" (DDP faster than no DDP: noise or a
/// different workload), "oversubscribed" (ranks x threads beyond the usable cores),
/// "few_samples" (fewer iterations than the percentiles need), "noisy" (cv > 5%),
/// "self_check_failed", "fp16_skipped_steps".
struct RowWarning {
  std::string code;
  std::string message;  ///< one sentence for people, without the code (renderers put it in front)
};

/// Why a measured series stopped (adaptive stopping, `--iters auto`).
struct Stopping {
  std::string mode = "fixed";  ///< "fixed" (--iters N) or "auto"
  /// "iterations" (fixed count), "target_ci" (CI half-width within target),
  /// "max_iters", "max_time".
  std::string reason = "iterations";
  double target_ci_pct = 0;    ///< auto: target CI half-width, % of the mean; 0 for fixed
  double achieved_ci_pct = 0;  ///< CI half-width reached, % of the mean (rank 0's series)
};

/// One benchmark row: a model on a group of ranks, with or without DDP.
struct BenchResult {
  std::string model;
  std::string label;  ///< benchmark.py's row label: "no ddp" or "<nodes>M/<ranks>G"
  long long batch_per_rank = 0;
  int image_size = 0;
  std::string precision = "fp32";
  std::string scaling = "weak";  ///< "weak": fixed batch per rank; "strong": fixed global batch split over ranks
  long long global_batch = 0;    ///< examples per step over the group: batch_per_rank * world_size
  int world_size = 1;            ///< ranks in this row's group
  int nodes = 1;                 ///< distinct hosts among those ranks
  bool ddp = true;
  std::vector<RankSamples> ranks;
  Summary summary;  ///< over the samples of all ranks pooled
  /// Per-iteration means over the ranks (core/stats/stats.hpp iteration_means), in order; the
  /// values diff's bootstrap resamples. Empty in files of schema < 1.10 (diff then computes
  /// them from the ranks' samples_s).
  std::vector<double> iteration_means_s;
  /// The ranks whose samples_s and telemetry series the row keeps (core/result/per_rank_detail);
  /// nullopt: every rank's (--per-rank-series all, and files of schema < 1.10).
  std::optional<std::vector<int>> ranks_kept_in_full;
  RowTelemetry telemetry;  ///< what the row recorded beside its timings (core/result/row_sections)
  RowChecks checks;        ///< the self-check (core/result/row_sections)
  RowCompute compute;      ///< FLOPs and MFU (core/result/row_sections)
  /// DDP rows: trainable_parameters, allreduce_bytes_per_step, steps_per_epoch,
  /// allreduce_bytes_per_epoch (at dataset_size examples per epoch).
  RowCommunication communication;
  /// Micro-steps per optimizer step (--grad-accum K): K-1 under no_sync, then one synchronised;
  /// a row's times are per optimizer step and its examples K * batch_per_rank per rank.
  int grad_accum = 1;
  /// DDP rows: the DDP settings the row ran with (core/result/row_sections RowDdpOptions).
  RowDdpOptions ddp_options;
  /// Training strategy: "ddp" (the Reducer; the no-DDP baseline rows keep "ddp" with
  /// ddp=false), "zero2" or "fsdp" (engine/dist/sharded.hpp), "dp" (libtorch's
  /// torch::nn::parallel::data_parallel, one process on world_size GPUs) or "dp-manual" (the
  /// same from replicate / scatter / parallel_apply / gather; `ddpbench dataparallel`).
  /// Absent in older files: "ddp".
  std::string strategy = "ddp";
  /// The row recomputed each unit's forward in its backward (--activation-checkpointing).
  bool activation_checkpointing = false;
  /// fsdp kept its parameter shards and optimizer state on the host (--cpu-offload);
  /// written only when true.
  bool cpu_offload = false;
  /// The benchmark group that measured the row ("resnet18/ddp2", "resnet18/noddp-b16"):
  /// what `run --resume` matches to skip a group the stopped run measured. Empty before
  /// schema 1.14.
  std::string group;
  /// The launch that measured the row: {"job_id", "started_utc"} (the job id its ranks
  /// joined with, the launch's start, ISO 8601 UTC); a row kept by `run --resume` keeps the
  /// stopped launch's. Null before schema 1.14.
  nlohmann::json launch;
  RowBreakdown breakdown;  ///< the ranks' breakdowns summarised (core/result/row_sections); empty when absent
  /// --duration burn-in only (else empty): windows and drift per rank (core/result/row_sections RowBurnIn).
  RowBurnIn burn_in;
  /// Time-to-loss rows only (--data fashion-mnist; else empty: no dataset): the data, epochs,
  /// loss curve and target (core/result/row_sections RowConvergence; engine/bench/time_to_loss.hpp).
  RowConvergence convergence;
  Stopping stopping;
  std::vector<RowWarning> warnings;
  /// "train" (a training step per sample) or "inference" (`run --mode inference`: one
  /// forward per sample, no DDP; ddp is false); absent in older files: "train".
  std::string mode = "train";
  /// Peak memory per rank over the measured series, and the model state rank 0 holds
  /// (core/result/row_memory RowMemory); empty when unmeasured.
  RowMemory memory;
  /// The row's value of each per-rank metric some rank measured, reduced over its ranks
  /// (core/result/row_metrics reduce_rank_metrics; key -> value); schema 1.15.
  std::map<std::string, double> metrics;
  /// Not in the JSON: the row's 0-based position in its file's `results` as read (-1 for a row
  /// not read from a file), kept when rows are left out, so a claim can name the row it rests on.
  int index_in_file = -1;
};

/// A whole result file (one launch).
struct ResultFile {
  std::string schema_version = kSchemaVersion;
  /// "run" (rows in `results`), "comm" (`ddpbench comm`: rows in `comm_results`, `results`
  /// empty) or "find-max-bs" (the search in `max_batch`); files of schema < 1.5 are "run".
  std::string kind = "run";
  /// false while a run is under way or after it stopped early (`run` writes those to
  /// PATH.partial); a file without the key (schema < 1.4) reads as complete.
  bool complete = true;
  int rows_planned = 0;  ///< rows the run set out to measure; 0: unknown (schema < 1.4)
  nlohmann::json tool = nlohmann::json::object();
  std::string created_utc;
  std::vector<std::string> argv;
  nlohmann::json config = nlohmann::json::object();
  nlohmann::json environment = nlohmann::json::object();
  std::vector<BenchResult> results;
  std::vector<CommResult> comm_results;  ///< kind "comm"
  /// kind "run": the slow rank named, one entry per model: {"model", "batch_per_rank", "threshold",
  /// "world_size", "ddp_world_size", "ranks": [{"rank", "host", "local_rank", "device", "gpu_index",
  /// "gpu_uuid", "bus_id", "compute_step_s", "ddp_step_s", "comm_wait_s", "score", "straggler"}],
  /// "named": [rank, ...], "note"} (docs/METHODOLOGY.md "Stragglers"); [] when not measured.
  nlohmann::json stragglers = nlohmann::json::array();
  /// kind "comm" with --pairs: the pair schedule, bandwidths and the named outliers; {} otherwise.
  nlohmann::json comm_pairs = nlohmann::json::object();
  /// kind "find-max-bs": the search and its recommendation, as engine/bench/max_batch.hpp's
  /// max_batch_json writes it: {model, device, ..., trials[{batch, fits, peak_memory_bytes, seconds,
  /// error}], max_batch, bound_reached, recommended_batch}; {} otherwise.
  nlohmann::json max_batch = nlohmann::json::object();
};

void to_json(nlohmann::json& j, const Summary& s);
void from_json(const nlohmann::json& j, Summary& s);
void to_json(nlohmann::json& j, const RankSamples& r);
void from_json(const nlohmann::json& j, RankSamples& r);
void to_json(nlohmann::json& j, const BenchResult& b);
void from_json(const nlohmann::json& j, BenchResult& b);
void to_json(nlohmann::json& j, const ResultFile& f);
void to_json(nlohmann::json& j, const RowWarning& w);
void from_json(const nlohmann::json& j, RowWarning& w);
void to_json(nlohmann::json& j, const Stopping& s);
void from_json(const nlohmann::json& j, Stopping& s);
void from_json(const nlohmann::json& j, ResultFile& f);
void to_json(nlohmann::json& j, const CommResult& c);
void from_json(const nlohmann::json& j, CommResult& c);

/// Major component of a "MAJOR.MINOR.PATCH" version; throws UsageError if malformed.
int schema_major(const std::string& version);

/// Parses a result file from JSON text. `source` names it in errors. Every string in it is
/// made one line of terminal text where it is read (core/util/sanitize terminal_line: control
/// and bidirectional characters escaped; a "topology" field keeps its newlines), so no writer
/// downstream prints a file's escape sequence or forged line.
/// Throws UsageError on malformed JSON, a missing field, or a schema major
/// version other than kSchemaMajor (the message says which ddpbench reads it).
ResultFile parse_result(const std::string& text, const std::string& source);

/// Reads and parses `path`; throws UsageError if it cannot be read (see parse_result).
ResultFile read_result_file(const std::string& path);

/// What JSON text that is not a result file is when ddpbench wrote it, so a folder of mixed
/// files (validate's --out) can be read for its results: "validate's record" (validate.json),
/// "a validate env step" (NN-env.json), "validate's verdict" (verdict.json), "a report's JSON"
/// (report --format json, validate's report.json); "" for anything else (not JSON, or JSON
/// ddpbench did not write: an error for the caller).
std::string known_non_result(const std::string& text);

/// `j` as text a person can read and the file stays small: indented by 2 as json::dump(2),
/// except that an array of scalars (numbers, strings, booleans, null) is written on one
/// line ("[0.1, 0.2]") and so is an object of scalars whose one-line form fits in 100
/// characters; an array whose elements are all objects with a "rank" key (per-rank records)
/// has one compact line (json::dump()) per element. Ends with a newline; json::parse gives back `j`. Throws as
/// json::dump (nlohmann::json::type_error on a string that is not UTF-8).
std::string readable_json(const nlohmann::json& j);

/// What the one writer does with a file already at the path it writes.
enum class Existing {
  kReplace,  ///< replace it (when it is a writable regular file): reports, plots, --overwrite
  kKeep,     ///< never replace it: the final rename is atomic and fails if anything is there
};

/// Thrown (a runtime failure, exit 1) by a write with Existing::kKeep when a file is at
/// the path: it was there before the write began, or appeared while the new file was being
/// written (another run, or a person). What was there is untouched; the new file is not
/// written. `path()` is the path.
class TargetExists : public std::runtime_error {
 public:
  explicit TargetExists(const std::string& path);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Writes `file` to `path` atomically: the JSON goes to a temporary file (mkstemp) in
/// the same directory, is flushed, then renamed over `path` and the directory synced, so
/// readers never see a half-written file and an earlier complete file survives a crash.
/// Throws as write_file_atomic.
void write_result_file_atomic(const std::string& path, const ResultFile& file, Existing existing = Existing::kReplace);

/// Writes `content` to `path` atomically (temporary file in the same directory, fsync,
/// rename). Only a regular, writable file is ever replaced: `path` is checked (lstat)
/// before the temporary file is made and again right before the rename; a symbolic link,
/// a device, fifo, socket or directory, a read-only file, or an input of this command
/// (check_outputs_apart) there throws UsageError naming it, and the temporary file is
/// removed. With Existing::kKeep nothing at `path` is replaced (TargetExists, see
/// commit_file). Throws std::runtime_error on I/O failure.
void write_file_atomic(const std::string& path, const std::string& content, Existing existing = Existing::kReplace);

/// Writes `text` to standard output, as terminal_text (core/util/sanitize: control
/// characters but newline and tab escaped), and flushes it; throws std::runtime_error when the
/// write or the flush fails (a full disk or a closed pipe behind a redirection), so a
/// command never exits 0 having printed less than its result.
void write_stdout(const std::string& text);

/// A new empty file next to `path` with an unpredictable name (mkstemp, "PATH.tmp.XXXXXX"),
/// for output another program writes (gnuplot's images); commit_file puts it in place.
/// Throws std::runtime_error when it cannot be made.
std::string temp_file_next_to(const std::string& path);

/// Renames `tmp` (from temp_file_next_to) over `path` as write_file_atomic does: fsync, the
/// same check of what is at `path` right before the rename (UsageError), rename, fsync of the
/// directory. With Existing::kKeep the rename itself refuses an existing `path` atomically
/// (renameat2 RENAME_NOREPLACE; where the file system lacks it, link() then unlink() of
/// `tmp`) and throws TargetExists, so a file that appeared at `path` after every check is
/// still not replaced. `tmp` is removed on every failure; std::runtime_error on I/O failure.
void commit_file(const std::string& tmp, const std::string& path, Existing existing = Existing::kReplace);

/// The largest input file any command reads (a result, a reference or targets file, the
/// baselines, a plot image for the HTML page): 256 MiB. A result file of thousands of ranks
/// is a few MiB (what rank 0 gathers is bounded per rank).
inline constexpr long long kMaxInputFileBytes = 256LL << 20;

/// The one reader of every input file: reads `path` whole. It is opened without blocking
/// (O_NONBLOCK, so a fifo cannot hang it) and must be a regular file of at most `max_bytes`
/// (checked before reading and while reading). Throws UsageError naming `path`, the problem
/// and the fix when it is missing or unreadable, a directory, a fifo, socket or device, or
/// larger than `max_bytes`.
std::string read_text_file(const std::string& path, long long max_bytes = kMaxInputFileBytes);

/// The one check of an output file before anything is computed, for every writer
/// (`run --json`, `report -o`/`--html`). Throws UsageError naming `flag` (the option that
/// named the path, e.g. "--json"), the problem and the fix when `path` is empty, is a
/// symbolic link, exists and is not a regular file (a directory, device, fifo, socket),
/// is a read-only file (no write permission bits, or not writable by this user), its
/// directory is missing or not writable, its name with the writer's temporary suffix
/// (".tmp.XXXXXX") is longer than the directory's NAME_MAX or the whole path longer than
/// PATH_MAX, the path is not valid UTF-8 (result files record their paths in JSON), or it
/// is an input of this command (check_outputs_apart). An existing writable regular file
/// passes. Leaves nothing behind.
void check_writable(const std::string& path, const std::string& flag = "--json");

/// A file a command reads or writes, and what named it on the command line: an option
/// ("--output", "--targets") or a description of a positional argument ("result file").
struct NamedPath {
  std::string flag;
  std::string path;
};

/// The one output guard, for every command with input files and outputs, before anything
/// is read or computed: throws UsageError when an output is one of the inputs, or two
/// outputs are one file, naming both, the problem and the fix. Two paths are one file when
/// they are the same after normalisation (absolute, "." and ".." removed, symbolic links in
/// the existing part resolved: `./r.json`, `d/../r.json`, a linked directory) or, when both
/// exist, the same device and inode (a hard link). The inputs are also remembered for the
/// rest of the process: every write through the one writer (check_writable,
/// write_file_atomic, commit_file) refuses them too, so a file a command puts in an output
/// directory (`report --plots DIR`) never replaces an input there.
void check_outputs_apart(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

/// Where `run --json PATH` keeps its rows while it runs and after it stopped early:
/// PATH + ".partial" (written with complete = false).
std::string partial_path(const std::string& path);

/// `run --json PATH`'s check before any rank starts: check_writable of PATH and of
/// partial_path(PATH) (so both names, with the temporary suffix, fit the file system and are
/// UTF-8), then, unless `overwrite`, a UsageError when either exists (an
/// earlier result, or the rows of an earlier run that stopped), naming --overwrite. With
/// `resuming` (`run --resume PATH.partial`) PATH.partial is the file being continued and may
/// exist.
void check_result_target(const std::string& path, bool overwrite, bool resuming = false);

/// `run --resume FILE`: the result path FILE continues (FILE without its ".partial"
/// suffix); UsageError when FILE does not end in ".partial".
std::string resume_result_path(const std::string& partial);

/// A run's `config` with the fields later schemas added, at the value every earlier run had
/// (1.19: instruments_off [], every instrument on; 1.20: skip_all_reduce_unused_params false;
/// 1.21: seq_len 1024, model_layers 0, model_width 0), so that files of either age compare as the
/// same configuration (resume_mismatch, diff's list of what changed). Other kinds'
/// configs are returned as given.
nlohmann::json run_config_with_later_defaults(nlohmann::json config, const std::string& kind);

/// Whether `prior` (the PATH.partial of a stopped `run`) can be continued by a run of
/// `config` (to_json of its RunConfig) on `world_size` ranks: "" when it can, else what
/// differs, e.g. "batch_size is 16 there and 32 here" (fields of the stopped run's config
/// that only describe it, defaults_note and batch_size_search, are not compared), or why the
/// file cannot be continued (another kind, complete, rows without a group).
std::string resume_mismatch(const ResultFile& prior, const nlohmann::json& config, int world_size);

/// Whether the rows of `prior` (a stopped run's PATH.partial whose flags resume_mismatch
/// accepted) can be kept by a run that plans `planned_groups` (core/config/run_config
/// planned_groups): "" when they can, else one clause naming the first bad row (1-based) and
/// what to do: a row whose self-check failed (its numbers are not valid), a group not in the
/// plan, or a group with a second row (a group measures one row).
std::string resume_rows_problem(const ResultFile& prior, const std::vector<std::string>& planned_groups);

/// The first difference between the measurement environment a stopped run recorded
/// (`there`: its result file's "environment") and this launch's (`here`, the same keys), e.g.
/// "OMP_NUM_THREADS is 1 there and 2 here", or "" when none. Compared, in this order: the
/// variables that change a measurement (NCCL_*, TORCH_NCCL_*, TORCH_DISTRIBUTED_*,
/// OMP_NUM_THREADS, GLOO_SOCKET_IFNAME, MALLOC_*, SLURM_CPUS_PER_TASK; unset counts as a value),
/// threads_per_rank, device_type, backend, torch, cuda, nccl, driver, cpu_model, the set of
/// hosts, each rank's device, GPU model and CPUs, each host's versions, CPUs and variables
/// (nodes), math, malloc_tuning and topology. Not compared: what names the launch rather than
/// the machine (MASTER_*, DDPBENCH_*, Slurm job ids, the rendezvous). A key missing from
/// either side is skipped (`here` may hold only what is known before any rank starts; older
/// files lack some keys).
std::string resume_environment_mismatch(const nlohmann::json& there, const nlohmann::json& here);

/// Whether an environment variable a result records (environment.env, nodes[].env) changes what
/// a step measures: NCCL_*, TORCH_NCCL_*, TORCH_DISTRIBUTED_*, MALLOC_*, OMP_NUM_THREADS,
/// GLOO_SOCKET_IFNAME, SLURM_CPUS_PER_TASK (resume and diff compare these, not job ids or paths).
bool measurement_variable(const std::string& name);

/// For `report`, `diff` and `check`: "NAME is incomplete (the run stopped after N of M
/// rows); its numbers cover only those rows" ("after N rows" when rows_planned is
/// unknown), or "" when `file` is complete.
std::string incomplete_warning(const std::string& name, const ResultFile& file);

/// Current UTC time as ISO 8601, e.g. "2026-11-22T21:31:00Z".
std::string utc_now_iso8601();

}  // namespace ddpbench
