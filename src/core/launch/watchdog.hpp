// Deadlines for blocking calls that cannot be interrupted, and the phase a rank is in.
// Torch-free.
//
// Some waits have no timeout of their own: a TCPStore client's receive blocks for ever
// when the peer accepted the connection but never answers (a stopped rank 0, another
// program on the port). Such a call runs under a Deadline; if it has not returned when
// the deadline passes, the process prints one line naming the call, the peer and the
// phase, and exits with kExitFailure (1). Results already written stay: result files are
// replaced atomically, never half-written.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/launch/launch_env.hpp"

namespace ddpbench {

/// Names this process in watchdog messages, e.g. "rank 1". Empty: no prefix.
void set_watchdog_name(const std::string& name);

/// While alive, the process exits if it is not destroyed within `timeout` plus 2 s (the
/// slack lets a call that has a timeout of its own report first): stderr gets
/// "ddpbench: error: <name>: <what> did not answer within --timeout <timeout> s
/// (phase: <phase>)<hint>" and the exit code is 1. Deadlines nest and may be used from
/// any thread; one watcher thread serves all of them (started on first use). Cost: a
/// mutex and a condition-variable notify per Deadline, so keep them out of timed loops.
class Deadline {
 public:
  /// `what`: who should answer ("the rendezvous store at 10.0.0.1:29500");
  /// `hint`: what to check, starting with "; " (may be empty).
  Deadline(std::string what, std::chrono::milliseconds timeout, std::string hint = "");
  ~Deadline();
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

 private:
  std::uint64_t id_;
};

/// Makes an exception that nothing catches (one thrown in a library's own thread, such
/// as a TCPStore client's listener when rank 0 dies, or from a destructor during
/// unwinding) end the process with one line instead of std::terminate's abort and core
/// dump: "ddpbench: error: <name>: <what> (phase: <phase>)", exit code 1.
void end_uncaught_exceptions_with_one_line();

/// Sets the phase this process is in ("rendezvous", "warm-up of resnet18/ddp2"). It is
/// named in watchdog messages and written to DDPBENCH_PHASE_FILE when that is set (the
/// built-in launcher reads it to say what a rank that died was doing). Cheap: one small
/// pwrite; called between series, never inside a timed loop.
void set_phase(const std::string& phase);

/// The phase last set ("start-up" before any).
std::string current_phase();

/// Opens the phase file named by DDPBENCH_PHASE_FILE in `env`, if any, and writes the
/// current phase to it. Failing to open it is not an error (the phase then stays unknown
/// to the launcher).
void open_phase_file(const EnvMap& env);

/// The phase written to the file at `path` by another process, or "" when it cannot be read.
std::string read_phase_file(const std::string& path);

}  // namespace ddpbench
