// ddpbench's built-in local launcher: starts N ranks of a program on this
// machine, forwards their output, and stops all of them when one fails. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "core/util/install_dirs.hpp"  // self_exe_path

namespace ddpbench {

/// What to start and how.
struct SpawnOptions {
  int nproc = 2;                  ///< ranks to start (world size)
  std::vector<std::string> argv;  ///< program and arguments (no shell); argv[0] a path or a name on PATH
  EnvMap extra_env;               ///< set in every rank, on top of this process's environment
  std::string master_addr = "127.0.0.1";
  int master_port = 0;        ///< 0: pick a free port on master_addr
  double term_grace_s = 5.0;  ///< seconds from SIGTERM to SIGKILL when rank groups are ended
  /// Once one rank has exited 0, seconds a stopped rank (SIGSTOP, a debugger: its own watchdog
  /// cannot run) may take to exit; a running one gets 4 x this + 60 s (it bounds its teardown's
  /// waits itself and may still be writing its result). The command's --timeout; 0: no bound.
  double finish_timeout_s = 0;
};

/// Starts `opt.nproc` copies of `opt.argv`, each with RANK, WORLD_SIZE, LOCAL_RANK,
/// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and DDPBENCH_LOCAL_SPAWNER=<launcher pid> set (the
/// torchrun variables, so the children discover their rank like any torchrun job), stdin
/// /dev/null. Every rank runs in its own process group (see core/launch/process.hpp), and every
/// signal below goes to the whole group, so a rank's own child processes end with it.
/// Rank 0's stdout/stderr lines pass through unchanged; other ranks' lines get a
/// "[rank N] " prefix; a last line without a newline is forwarded with one added.
/// Every rank also gets DDPBENCH_JOB_ID (a random per-launch token unless this process has
/// one: the rendezvous refuses ranks of another job with it) and DDPBENCH_PHASE_FILE (a
/// file in a private temporary directory, removed at the end, where the rank writes its
/// phase: core/launch/watchdog.hpp). A rank killed by a signal gets one line on stderr:
/// "ddpbench: error: rank R (pid P on HOST) was killed by signal 9 (SIGKILL) during PHASE;
/// the other ranks were stopped" (a rank that exits by itself has said why).
/// If any rank exits non-zero or is killed, the others' groups get SIGTERM and, after
/// `term_grace_s`, SIGKILL. Once a rank has exited 0, a rank that has not exited within its
/// bound (finish_timeout_s when stopped, 4 x finish_timeout_s + 60 s when running) gets one
/// line on stderr, "ddpbench: error: rank R (pid P on HOST) did not exit within --timeout T s
/// of rank Q's exit (phase: PHASE; it is stopped ...); it was ended", and the ranks are ended
/// as above; the launcher then returns kExitFailure (1) unless a failure came first.
/// SIGINT/SIGTERM to this process are forwarded to every rank's group (SIGKILL
/// `term_grace_s` later). What is left of a rank's group when the rank
/// exits gets SIGTERM, then SIGKILL once the rank's output pipes close or after
/// `term_grace_s`. Returns 0 when all ranks succeed, else the exit status of the first
/// rank that failed (128 + signal number for a signal; 128 + the forwarded signal's
/// number when one came first). Throws std::invalid_argument for nproc < 1 or an empty
/// argv, std::runtime_error if a process cannot be started (the ranks already started
/// are killed).
int spawn_local_ranks(const SpawnOptions& opt);

/// A TCP port that is free on `addr` right now (bind to port 0, read it, close).
/// Throws std::runtime_error if no socket can be bound.
int find_free_port(const std::string& addr = "127.0.0.1");

/// For a rank started by spawn_local_ranks (`env` is its environment): have the kernel
/// send SIGTERM to this process when the launcher dies (PR_SET_PDEATHSIG), so a killed
/// launcher leaves no ranks behind. Returns false when the launcher, whose pid is in
/// DDPBENCH_LOCAL_SPAWNER, is not this process's parent: it is already gone, or the
/// variable was left over in the environment (the caller says so and exits).
bool exit_with_parent(const EnvMap& env);

}  // namespace ddpbench
