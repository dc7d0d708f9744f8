#include "engine/dist/job_env.hpp"

#include "engine/dist/rendezvous.hpp"

namespace ddpbench {

JobEnv join_job(const LaunchInfo& li, const EnvMap& env, BackendKind backend, const c10::Device& device,
                std::chrono::milliseconds timeout, const std::string& config) {
  JoinRequest join;
  join.job_id = launcher_job_id(env, li.launcher);
  join.config = config;
  join.placement = local_placement(li, device);
  Rendezvous rv = rendezvous(li, join, timeout);
  JobEnv j;
  j.launch = li;
  j.backend = backend;
  j.device = device;
  j.timeout = timeout;
  j.store = rv.store;
  j.store_prefix = rv.prefix;
  j.placements = std::move(rv.placements);
  j.job_id = join.job_id;
  j.store_server = rv.store_server;
  return j;
}

}  // namespace ddpbench
