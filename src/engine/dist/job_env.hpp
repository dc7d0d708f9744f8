// What every benchmark of one launch shares once its ranks met: filled once by join_job, and
// extended by run's SweepEnv and comm's CommEnv.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/env_info.hpp"

namespace ddpbench {

/// One rank's view of its launch after the rendezvous.
struct JobEnv {
  LaunchInfo launch;
  BackendKind backend = BackendKind::kGloo;
  c10::Device device = c10::Device(c10::kCPU);
  std::chrono::milliseconds timeout{300000};  ///< the bound on every wait: store accesses, collectives
  c10::intrusive_ptr<c10d::Store> store;      ///< the job's store (groups prefix it)
  std::string store_prefix;  ///< its key prefix (Rendezvous::prefix): rank 0's parallel reads (read_keys)
  std::vector<RankPlacement> placements;  ///< all ranks' placements in rank order (rank 0; empty elsewhere)
  std::string job_id;                     ///< launcher_job_id(): "" when the launcher names none
  std::string store_server;  ///< rank 0 serving the store: its server backend (Rendezvous::store_server)
};

/// Joins the job: this rank's placement on `device` and `config` (what every rank must agree
/// on) through rendezvous() within `timeout`, and returns the JobEnv the benchmarks share.
/// Throws as rendezvous (UsageError for another job's or configuration's rank, runtime_error
/// when a rank does not come within `timeout`).
JobEnv join_job(const LaunchInfo& li, const EnvMap& env, BackendKind backend, const c10::Device& device,
                std::chrono::milliseconds timeout, const std::string& config);

}  // namespace ddpbench
