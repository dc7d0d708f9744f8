// `ddpbench comm`: nccl-tests-style collective benchmark on the process groups of `run`
// (engine/dist/process_group.hpp), swept over sub-groups of the first n ranks as
// engine/bench/sweep.hpp does (ranks outside a group wait at a GroupGate).
// Per collective and size: warm-up, one checked operation on deterministic data, then
// `iters` operations back to back, timed as one span and divided (nccl-tests' method).
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/analysis/busbw.hpp"
#include "core/analysis/pairs.hpp"
#include "core/launch/launch_env.hpp"
#include "core/result/result.hpp"
#include "engine/dist/job_env.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/env_info.hpp"

namespace ddpbench {

/// What `ddpbench comm` measures (validated by the CLI before ranks start).
struct CommConfig {
  std::vector<Collective> collectives;  ///< in all_collectives() order
  std::vector<long long> sizes;         ///< requested bytes per size (size_sweep)
  std::string dtype = "float32";        ///< a dtype_size() name
  std::string op = "sum";               ///< sum, prod, max, min (reducing collectives)
  int root = 0;                         ///< broadcast/reduce root (group rank)
  int warmup = 5;                       ///< untimed operations per size
  int iters = 20;                       ///< timed operations per size
  bool check = true;                    ///< one checked operation per size (#wrong)
  std::vector<int> world_sizes;         ///< groups of the first n ranks
  double timeout_s = 300;               ///< every collective and store wait
  /// --pairs: point-to-point and 2-rank allreduce between every pair of participants
  /// (run_comm_pairs) instead of the collective sweep.
  bool pairs = false;
  std::string pair_unit = "node";  ///< "node": the lowest rank of each host takes part; "rank": every rank
  long long pair_bytes = 0;        ///< bytes per message and per allreduce
  double slow_fraction = 0.7;      ///< analyze_pairs' threshold (core/analysis/pairs.hpp)
  int confirm_runs = 3;            ///< times each first-pass suspect is re-measured alone (0: none)
};

/// The configuration as JSON (the result's config; ranks must agree on it).
nlohmann::json to_json(const CommConfig& c);

/// Everything one rank needs to take part.
struct CommEnv : JobEnv {
  CommConfig cfg;
  /// Test seam (DDPBENCH_TEST_FAULT=corrupt-comm): before each checked operation one rank
  /// (the root of broadcast/reduce, else the group's last rank) adds 64 to element 0 of its
  /// input. Expected #wrong with the default sum on n ranks: allreduce n, all_gather n,
  /// broadcast n, reduce 1, reduce_scatter 1, all_to_all 1, barrier n/a.
  bool corrupt_one_rank = false;
};

/// Rank 0's callbacks: after each measured size (`row`), and after the last size of a
/// collective on a group (`rows`: that collective's rows on that group).
struct CommCallbacks {
  std::function<void(const CommResult& row)> on_row;
  std::function<void(const std::vector<CommResult>& rows)> on_collective_done;
  /// --pairs: a first-pass suspect re-measured alone (its alone_* fields filled in).
  std::function<void(const PairMeasurement& m)> on_pair_alone;
};

/// The torch dtype of a dtype_size() name. Throws UsageError for an unknown name.
c10::ScalarType comm_dtype(const std::string& name);

/// Throws UsageError (one line) when `backend` in this torch cannot move `dtype` (torch
/// 1.13's Gloo has no bfloat16): probed with a 1-element allreduce on a 1-rank group over an
/// in-memory store.
void check_backend_dtype(BackendKind backend, const std::string& dtype);

/// Rows run_comm_sweep produces for `cfg` (comm_sizes of every collective on every group).
int planned_comm_rows(const CommConfig& cfg);

/// Who takes part in `comm --pairs` and in which rounds; the same on every rank.
struct PairsPlan {
  std::string unit = "node";                 ///< "node" or "rank" (CommConfig::pair_unit)
  std::vector<int> ranks;                    ///< participants' global ranks, ascending; ranks[0] == 0
  std::vector<std::string> names;            ///< node unit: the host; rank unit: "<host>/rank<r>"
  std::vector<std::string> hosts;            ///< each participant's host
  std::vector<std::vector<PairIdx>> rounds;  ///< round_robin_rounds(ranks.size())
  std::string error;                         ///< non-empty: bad input found by rank 0 (one line)
};
void to_json(nlohmann::json& j, const PairsPlan& p);
void from_json(const nlohmann::json& j, PairsPlan& p);

/// Rank 0: the plan for `placements` (every rank's, rank order). Node unit: per host the
/// lowest rank (local rank 0 under torchrun, srun, mpirun and the built-in launcher), hosts
/// in the order of those ranks. With fewer than 2 participants the plan carries `error`
/// (one host: "use --pair-unit rank").
PairsPlan make_pairs_plan(const std::vector<RankPlacement>& placements, const std::string& unit);

/// Collective over the job: rank 0 publishes `plan` (its own, from make_pairs_plan) on the
/// store, the others read it (waiting at most `timeout`) and say so; when the plan carries
/// an error rank 0 waits (bounded by `timeout`) until every rank read it, so none is left
/// without the store. Returns the plan on every rank. Throws c10::Error on a store timeout.
PairsPlan share_pairs_plan(const c10::intrusive_ptr<c10d::Store>& store, const LaunchInfo& li, const PairsPlan& plan,
                           std::chrono::milliseconds timeout);

/// Rank 0's outcome of run_comm_pairs.
struct PairsOutcome {
  std::vector<CommResult> rows;           ///< per pair: sendrecv a->b, sendrecv b->a, allreduce
  std::vector<PairMeasurement> measured;  ///< per pair, in schedule order
};

/// `comm --pairs`: for each round of `plan`, every pair of the round at the same time (a
/// barrier of all participants starts the round) on its own 2-rank process group
/// (PrefixStore "pairs/r<k>/<a>-<b>/"): env.cfg.pair_bytes one direction at a time (a->b, then
/// b->a: -w untimed, one checked with -c 1, then -n timed messages, each waited for;
/// bandwidth = bytes / the receiver's time per message), then a 2-rank allreduce of the same
/// size as run_comm_sweep measures one. Ranks outside the plan wait at a GroupGate that rank
/// 0 beats. Rank 0 gets the rows (cb.on_row each, cb.on_collective_done per round); others
/// get an empty outcome. Then the confirmation: rank 0 finds the suspects (analyze_pairs on
/// the first pass; at most kMaxPairConfirmations) and sends their indices to the
/// participants (one allreduce of 1 + 2 x kMaxPairConfirmations doubles); each suspect in
/// turn, alone (a barrier of all participants before each), is measured env.cfg.confirm_runs
/// times the same way (PrefixStore "pairs/c<i>/<a>-<b>/"), the best time of each metric
/// kept in its PairMeasurement (cb.on_pair_alone). Throws c10::Error / std::runtime_error
/// when a peer dies or an operation times out.
PairsOutcome run_comm_pairs(const CommEnv& env, const PairsPlan& plan, const CommCallbacks& cb);

/// Runs every collective of env.cfg on every group. Collective over the job: every rank calls
/// it with the same configuration. Returns rank 0's rows (empty elsewhere). Throws
/// c10::Error / std::runtime_error when a peer dies or an operation times out.
std::vector<CommResult> run_comm_sweep(const CommEnv& env, const CommCallbacks& cb);

}  // namespace ddpbench
