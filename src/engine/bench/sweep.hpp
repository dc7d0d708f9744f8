// The benchmark sweep of one launch, in the layout of PyTorch's
// benchmarks/distributed/ddp/benchmark.py: per model, every rank warms up alone,
// then a no-DDP baseline that every rank trains at the same time, each on its own device
// without communication (one per distinct per-rank batch: strong scaling gives each group
// size its own; the row is rank 0's, every rank's step feeds the straggler scores), then
// DDP on the sub-groups of the first n ranks for each requested n. Ranks outside a
// sub-group wait at a GroupGate.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/config/run_config.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/progress.hpp"
#include "core/result/result.hpp"
#include "core/result/row_warnings.hpp"
#include "core/stats/straggler.hpp"
#include "core/telemetry/telemetry.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/job_env.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/env_info.hpp"
#include "engine/models/model.hpp"
#include "engine/train/precision.hpp"

namespace ddpbench {

/// Test seam of the self-check: called on every rank of a DDP group of >= 2 ranks with
/// (rank, group size, the DDP parameters, whose gradients are about to be compared)
/// right before the comparison. Production runs leave it empty; the end-to-end tests
/// inject faults through it (see fault_injection_hook).
using SelfCheckHook = std::function<void(int rank, int group_size, const std::vector<at::Tensor>& params)>;

/// The hook for a named fault of the end-to-end tests (`ddpbench run` takes the name from
/// DDPBENCH_TEST_FAULT, recorded in the result's environment.env; never set in a real run):
///   skew-grad   the last rank of the group perturbs its gradients: the check must fail (exit 3);
///   nan-grad    every rank gets NaN gradients (a diverged model): the check must fail;
///   exit-rank1  rank 1 exits abruptly: the other ranks must fail, not hang.
/// Throws UsageError for an unknown name.
SelfCheckHook fault_injection_hook(const std::string& name);

/// What every row kind of the sweep uses (engine/bench/row_kind.hpp): who this rank is, the
/// configuration, the device and backend, the job's store, where every rank runs, the
/// telemetry sampler and the progress display. What only one kind needs stays with it.
struct SweepEnv : JobEnv {
  RunConfig cfg;  ///< validated; world_sizes already resolved
  int threads_per_rank = 1;               ///< intra-op threads of every rank
  MathModes math{};                       ///< math in effect (TF32, cuDNN benchmark): picks the MFU peak
  /// This rank's telemetry sampler (core/telemetry/telemetry.hpp), started and stopped around every
  /// measured series; made by run_sweep when null.
  std::shared_ptr<TelemetrySampler> sampler;
  /// Rank 0's progress display (core/launch/progress); nullptr on other ranks and with --quiet.
  /// Every measured series (one per row; rank 0 runs them all) is a row of it.
  Progress* progress = nullptr;
  /// `run --resume`: the benchmark groups (BenchResult::group) the stopped run measured, on
  /// every rank: they are not measured again. On rank 0, their rows, emitted unchanged where
  /// the sweep reaches the group (a row with a `launch` passes the row callback as it is).
  std::set<std::string> done_groups;
  std::map<std::string, std::vector<BenchResult>> kept_rows;
  /// Rank 0: the launch every row it measures records (BenchResult::launch: {"job_id",
  /// "started_utc"}); null: none.
  nlohmann::json row_launch;
};

/// The model a benchmark trains: `name` (engine/models/registry) seeded with cfg.seed,
/// with cfg.num_classes / image_size, the frozen backbone and head of --freeze-backbone,
/// moved to `device`, channels-last with --channels-last, in train mode. Used by the sweep
/// and by find-max-bs's trials. Throws as make_model for an unknown name.
ModelPtr build_model(const RunConfig& cfg, const std::string& name, const c10::Device& device);

/// The store of benchmark group `name`: the job's store `store` under the prefix "group/<name>/".
c10::intrusive_ptr<c10d::Store> make_group_store(const c10::intrusive_ptr<c10d::Store>& store, const std::string& name);
/// make_group_store(env.store, name).
c10::intrusive_ptr<c10d::Store> make_group_store(const SweepEnv& env, const std::string& name);

/// The process group of benchmark group `name`: the first n ranks of the job, over
/// make_group_store(job.store, name) with job.backend on job.device as job.launch.rank, made
/// within job.timeout (Gloo exchanges addresses over the store: bounded even if rank 0 stops
/// answering). Called by each of those n ranks (rank < n); throws as make_process_group, or
/// when the deadline passes.
c10::intrusive_ptr<c10d::ProcessGroup> make_group_process_group(const JobEnv& job, const std::string& name, int n);

/// Runs `body(pg, gate)` on the first n ranks of the job as benchmark group `name`, with
/// the group's process group (make_group_process_group; destroyed after `body` unless
/// `body` destroyed it) while ranks n.. wait at the group's gate (in job.store, bounded by
/// job.timeout). After `body`, rank 0 opens the gate; when the set-up or `body` throws, rank 0
/// fails the gate with the message (so the waiting ranks stop with it) and every rank of the
/// group rethrows. `label` names the
/// group in the phase ("set-up of <label>", "the wait for <label>"). Collective over the job.
void run_group(const JobEnv& job, const std::string& name, const std::string& label, int n,
               const std::function<void(c10::intrusive_ptr<c10d::ProcessGroup>&, GroupGate&)>& body);

/// Rank r's record in a row, its identity filled from `placements` (every rank's in rank
/// order: JobEnv::placements, which rank 0 holds): rank, host, local rank and device; no samples yet.
RankSamples placed_rank(const std::vector<RankPlacement>& placements, int r);

/// Called on rank 0 with each row, finished (core/result/row_finish), to print and save.
using RowCallback = std::function<void(const BenchResult&)>;

// kNoisyCv and kMinItersForP95 (the noisy and few_samples thresholds): core/result/row_warnings.hpp.

/// The straggler scores' inputs of one model (rank 0), one per rank of `placements`: its
/// host, local rank, device and GPU identity, its compute-only step p50 (s) and the two
/// halves of its baseline (s, when both are > 0), and from `largest` (the model's largest
/// DDP row, or null) its DDP step p50 and exposed communication (s). What straggler_entry
/// (core/stats/straggler.hpp) scores; the sweep and the control-plane simulation both use it.
std::vector<RankScoreInput> straggler_inputs(const std::vector<RankPlacement>& placements,
                                             const std::vector<double>& compute_p50_s,
                                             const std::vector<std::pair<double, double>>& halves,
                                             const BenchResult* largest);

/// Runs the whole sweep for every model of env.cfg. Collective: every rank of the job
/// must call it with the same configuration. Every row, measured or kept by --resume, is
/// finished by finish_row (core/result/row_finish) before `on_row` gets it. Returns the
/// finished rows on rank 0 (empty elsewhere);
/// `on_stragglers` (rank 0; may be empty) receives each model's straggler entry
/// (core/stats/straggler.hpp straggler_entry) once the model's groups are done;
/// `self_check_hook` is the DDP self-check's test seam (empty in real runs).
/// Throws SelfCheckError when gradients differ across ranks beyond env.cfg.grad_check_tol
/// after the first DDP step of a group; c10::Error / std::runtime_error when a peer dies
/// or a collective times out.
std::vector<BenchResult> run_sweep(SweepEnv& env, const RowCallback& on_row,
                                   const std::function<void(const nlohmann::json&)>& on_stragglers = nullptr,
                                   const SelfCheckHook& self_check_hook = nullptr);

}  // namespace ddpbench
