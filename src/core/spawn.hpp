// ddpbench's built-in local launcher: starts N ranks of a program on this
// machine, forwards their output, and stops all of them when one fails. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/launch_env.hpp"

namespace ddpbench {

/// What to start and how.
struct SpawnOptions {
  int nproc = 2;                  ///< ranks to start (world size)
  std::vector<std::string> argv;  ///< program and arguments; argv[0] must be a path
  EnvMap extra_env;               ///< set in every rank, on top of this process's environment
  std::string master_addr = "127.0.0.1";
  int master_port = 0;            ///< 0: pick a free port on master_addr
  double term_grace_s = 5.0;      ///< after a failure, SIGTERM the others, SIGKILL after this many s
};

/// Starts `opt.nproc` copies of `opt.argv`, each with RANK, WORLD_SIZE, LOCAL_RANK,
/// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and DDPBENCH_LOCAL_SPAWNER=<launcher pid> set (the
/// torchrun variables, so the children discover their rank like any torchrun job).
/// Rank 0's stdout/stderr pass through unchanged; other ranks' lines get a
/// "[rank N] " prefix. If any rank exits non-zero or is killed, the others get SIGTERM
/// and, after `term_grace_s`, SIGKILL. SIGINT/SIGTERM to this process are forwarded.
/// Returns 0 when all ranks succeed, else the exit status of the first rank that
/// failed (128 + signal number for a signal). Throws std::runtime_error if a process
/// cannot be started.
int spawn_local_ranks(const SpawnOptions& opt);

/// A TCP port that is free on `addr` right now (bind to port 0, read it, close).
/// Throws std::runtime_error if no socket can be bound.
int find_free_port(const std::string& addr = "127.0.0.1");

/// For a rank started by spawn_local_ranks (`env` is its environment): have the kernel
/// send SIGTERM to this process when the launcher dies (PR_SET_PDEATHSIG), so a killed
/// launcher leaves no ranks behind; exits at once (status 143) if the launcher, whose pid
/// is in DDPBENCH_LOCAL_SPAWNER, is already gone.
void exit_with_parent(const EnvMap& env);

/// Absolute path of the running executable (/proc/self/exe).
std::string self_exe_path();

}  // namespace ddpbench
