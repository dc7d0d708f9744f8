// The benchmark sweep of one launch, in the layout of PyTorch's
// benchmarks/distributed/ddp/benchmark.py: per model, every rank warms up alone,
// then a no-DDP baseline on rank 0's device (one per distinct per-rank batch: strong
// scaling gives each group size its own), then DDP on the sub-groups of the first
// n ranks for each requested n. Ranks outside a sub-group wait at a GroupGate.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <vector>

#include "core/launch_env.hpp"
#include "core/result.hpp"
#include "core/run_config.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/env_info.hpp"

namespace ddpbench {

/// Everything one rank needs to take part in the sweep.
struct SweepEnv {
  LaunchInfo launch;
  RunConfig cfg;  ///< validated; world_sizes already resolved
  BackendKind backend = BackendKind::kGloo;
  c10::Device device = c10::Device(c10::kCPU);
  std::chrono::milliseconds timeout{300000};
  c10::intrusive_ptr<c10d::Store> store;  ///< the job's store (sub-groups prefix it)
  std::vector<RankPlacement> placements;  ///< all ranks' placements; needed on rank 0 only
};

/// Called on rank 0 after each row is measured (print it, write the JSON).
using RowCallback = std::function<void(const BenchResult&)>;

/// Runs the whole sweep for every model of env.cfg. Collective: every rank of the job
/// must call it with the same configuration. Returns the rows on rank 0 (empty elsewhere).
/// Throws SelfCheckError when gradients differ across ranks beyond env.cfg.grad_check_tol
/// after the first DDP step of a group; c10::Error / std::runtime_error when a peer dies
/// or a collective times out.
std::vector<BenchResult> run_sweep(SweepEnv& env, const RowCallback& on_row);

}  // namespace ddpbench
