// ddpbench's one process layer: starts programs without a shell, each in its own
// process group, handles their output and ends the whole group. Torch-free.
//
// Written directly on posix_spawn(3): Debian ships no maintained C++ subprocess
// library (reproc, subprocess.h, Boost.Process are not packaged, or not with process
// groups and a chdir), and what is needed here is small: argv without a shell, a new
// process group (POSIX_SPAWN_SETPGROUP), an optional working directory
// (posix_spawn_file_actions_addchdir_np, glibc >= 2.29), output pipes read with poll(2),
// and signals to the group (kill(-pgid)). Linux and glibc only, like the rest of ddpbench.
//
// Every child is the leader of a new process group (pgid == pid); signals go to the
// group, so a child's own children (a shell's background jobs, a rank's helper
// processes) end with it. A descendant that leaves the group (setsid, setpgid) is not
// reached. A child's exit is noticed without reaping it (waitid WNOWAIT), so its pgid
// cannot be reused by another process while the rest of its group is being signalled.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"

namespace ddpbench {

/// How a finished process ended.
struct ExitStatus {
  int code = -1;   ///< exit code (0-255) when it exited, -1 when a signal killed it
  int signal = 0;  ///< the signal that killed it, 0 when it exited
  /// The shell's convention: the exit code, or 128 + the signal number.
  int shell_code() const { return signal != 0 ? 128 + signal : code; }
  /// Exited with code 0.
  bool success() const { return signal == 0 && code == 0; }
  /// "exit code 3" or "killed by signal 9 (SIGKILL)", for messages.
  std::string describe() const;
};

/// What happens to a child's stdout or stderr.
enum class OutputMode {
  kCapture,  ///< kept in memory (at most ProcessOptions::max_capture bytes), see Supervisor::out/err
  kForward,  ///< written line by line, with ProcessOptions::prefix before each line, to this
             ///< process's stdout (for the child's stdout) or stderr (for its stderr)
};

/// How to start one child.
struct ProcessOptions {
  EnvMap env;       ///< variables set in the child on top of this process's environment
  std::string cwd;  ///< the child's working directory; empty: this process's
  /// Written to the child's stdin, which is then closed; nullopt: stdin is /dev/null.
  std::optional<std::string> stdin_data;
  OutputMode stdout_mode = OutputMode::kCapture;
  OutputMode stderr_mode = OutputMode::kCapture;
  std::string prefix;                 ///< put before every forwarded line (e.g. "[rank 1] ")
  std::size_t max_capture = 1 << 20;  ///< bytes kept per captured stream; the rest is read and dropped
  /// The child ends when this process does, however it ends (SIGKILL included): it gets
  /// kParentPidEnv=<this pid>, and a ddpbench that finds it asks the kernel for SIGTERM at its
  /// parent's death (die_with_parent_from_env). Other programs ignore the variable.
  bool die_with_parent = false;
};

/// The variable a child started with ProcessOptions::die_with_parent finds its parent's pid in.
inline constexpr const char* kParentPidEnv = "DDPBENCH_PARENT_PID";

/// For a ddpbench started with ProcessOptions::die_with_parent (kParentPidEnv set): has the
/// kernel send SIGTERM to this process when its parent dies (PR_SET_PDEATHSIG) and removes the
/// variable from the environment (this process's own children are not validate's). Returns
/// false when the parent named there is already gone (this process was re-parented): the
/// caller says so and exits. True when the variable is unset.
bool die_with_parent_from_env();

/// While alive, SIGINT and SIGTERM to this process are caught instead of ending it, and
/// take() returns the last one caught (0 for none) so that the caller can pass it on to its
/// children and end in order. The previous handlers come back on destruction. One at a time.
class InterruptCatcher {
 public:
  InterruptCatcher();
  ~InterruptCatcher();
  InterruptCatcher(const InterruptCatcher&) = delete;
  InterruptCatcher& operator=(const InterruptCatcher&) = delete;
  /// The signal caught since the last call, 0 for none.
  int take();

 private:
  struct sigaction old_int_ {}, old_term_{};
};

/// Starts and watches child processes from one thread: reads their output (captured or
/// forwarded by line), notices exits, and ends process groups with SIGTERM and, `grace_s`
/// later, SIGKILL.
///
/// When a child exits, what is left of its process group gets SIGTERM at once and
/// SIGKILL when the child's output pipes close or `grace_s` passes, whichever comes
/// first; then the child is reaped and its output drained, and an unterminated last
/// line is forwarded with a newline added. A child that has not exited 10 s after
/// SIGKILL (stuck in the kernel) is given up: reported as killed by SIGKILL and left.
/// Destroying the Supervisor SIGKILLs every group still running and reaps it (waiting
/// 5 s at most). Not thread-safe; one Supervisor per thread.
class Supervisor {
 public:
  /// `grace_s`: seconds between SIGTERM and SIGKILL (>= 0).
  explicit Supervisor(double grace_s = 5.0);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  /// Starts `argv` (no shell: every element reaches the program verbatim) as the leader
  /// of a new process group. argv[0] without a '/' is looked up on PATH (find_program);
  /// with one it is used as is (relative to `opts.cwd` when that is set). SIGINT,
  /// SIGTERM and SIGPIPE start with their default action and no signal is blocked; the
  /// child holds no descriptor of this process beyond its stdin/stdout/stderr (with
  /// glibc >= 2.34; older ones pass on those not marked close-on-exec).
  /// Returns the child's index (0, 1, ... in start order). Throws std::invalid_argument
  /// for an empty argv, std::runtime_error naming the program when it cannot be started
  /// (not found, not executable, bad working directory); children started before keep
  /// running.
  std::size_t start(const std::vector<std::string>& argv, const ProcessOptions& opts = {});

  /// Waits at most `max_wait_s` seconds (and at most 50 ms) for output or exits, handles
  /// them and the pending SIGKILL deadlines, and returns the indices of the children
  /// whose exit was noticed during this call (their status() is final from then on).
  std::vector<std::size_t> step(double max_wait_s);

  /// True while some child is not finished (not yet reaped, or its output not drained).
  bool running() const;

  /// Sends `sig` (then SIGCONT, so a stopped child acts on it) to the process group of
  /// every unfinished child and arms SIGKILL
  /// `grace_s` from the first such call for every group still alive then. Calling it
  /// again re-sends `sig` and keeps the first deadline.
  void terminate_all(int sig = SIGTERM);

  std::size_t size() const;                       ///< children started
  pid_t pid(std::size_t i) const;                 ///< child i's pid, also its process group id
  bool exited(std::size_t i) const;               ///< child i's exit has been noticed
  const ExitStatus& status(std::size_t i) const;  ///< valid once exited(i)
  const std::string& out(std::size_t i) const;    ///< captured stdout (empty when forwarded)
  const std::string& err(std::size_t i) const;    ///< captured stderr (empty when forwarded)

 private:
  struct Child;
  void finish(Child& c);
  double grace_s_;
  std::vector<std::unique_ptr<Child>> kids_;
};

/// Result of run_capture.
struct CaptureResult {
  ExitStatus status;
  std::string out, err;    ///< captured stdout and stderr (per the options' modes)
  bool timed_out = false;  ///< the timeout ended it: its group got SIGTERM, then SIGKILL
  int interrupted = 0;     ///< run_capture's `forward_interrupts`: the SIGINT/SIGTERM passed on, else 0
  /// Exited with code 0 before the timeout.
  bool ok() const { return !timed_out && status.success(); }
};

/// Runs `argv` (see Supervisor::start) to its end and returns its status and output
/// (captured unless `opts` says otherwise). After `timeout_s` seconds its process group
/// gets SIGTERM and, `grace_s` later, SIGKILL; it returns within about
/// timeout_s + 2 * grace_s in all but the stuck-in-the-kernel case. With `forward_interrupts`
/// a SIGINT or SIGTERM to this process while the child runs is passed to the child's group
/// (SIGKILL grace_s later) and recorded in CaptureResult::interrupted, instead of ending this
/// process and leaving the child running. Throws like Supervisor::start.
CaptureResult run_capture(const std::vector<std::string>& argv, const ProcessOptions& opts = {},
                          double timeout_s = 60.0, double grace_s = 2.0, bool forward_interrupts = false);

/// Full path of the executable regular file `name` in one of PATH's directories (the
/// first, as execvp searches; "/bin:/usr/bin" when PATH is unset), or "" when there is
/// none. A name containing '/' is returned as is when it is executable, else "".
std::string find_program(const std::string& name);

/// A test seam, never set in a real run: with the environment variable `env_var` set to a
/// FILE, reads FILE to its end and returns; a fifo holds the caller there (open(2) blocks
/// until a writer opens it, read(2) until the writer closes it), which lets a test put a
/// process at a known point before it acts on it. Returns at once when `env_var` is unset or
/// empty, or FILE cannot be opened. Never throws.
void pass_test_gate(const char* env_var) noexcept;

}  // namespace ddpbench
