#include "core/launch/spawn.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <fstream>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/launch/process.hpp"
#include "core/launch/watchdog.hpp"
#include "core/util/errors.hpp"
#include "core/util/remove_tree.hpp"

namespace ddpbench {
namespace {

// Whether `pid` is stopped: state T (stopped by a signal) or t (tracing stop) in
// /proc/PID/stat (proc(5)); false when it cannot be read.
bool process_stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return state == 'T' || state == 't';
}

// A private directory for the ranks' phase files (DDPBENCH_PHASE_FILE), removed with
// everything in it on every exit path. Empty path when it cannot be made (phases are then
// unknown to the launcher, nothing else changes).
struct PhaseDir {
  std::string path;
  PhaseDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/ddpbench-ranks.XXXXXX";
    if (::mkdtemp(tmpl.data())) path = tmpl;
  }
  ~PhaseDir() {
    remove_tree(path);
  }
  std::string file(int rank) const { return path.empty() ? "" : fmt::format("{}/rank{}", path, rank); }
};

}  // namespace

int find_free_port(const std::string& addr) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(fmt::format("socket(): {}", std::strerror(errno)));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = 0;
  if (::inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    int err = errno;
    ::close(fd);
    throw std::runtime_error(fmt::format("cannot bind a free port on {}: {}", addr, std::strerror(err)));
  }
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  int port = ntohs(sa.sin_port);
  ::close(fd);
  return port;
}

bool exit_with_parent(const EnvMap& env) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The launcher died before prctl took effect: this rank was re-parented (to init or
  // a subreaper). Compared by pid, since the launcher may itself be pid 1 in a container.
  const auto it = env.find("DDPBENCH_LOCAL_SPAWNER");
  return it == env.end() || it->second == std::to_string(::getppid());
}

int spawn_local_ranks(const SpawnOptions& opt) {
  if (opt.nproc < 1) throw std::invalid_argument("spawn_local_ranks: nproc must be >= 1");
  if (opt.argv.empty()) throw std::invalid_argument("spawn_local_ranks: empty argv");
  const int port = opt.master_port > 0 ? opt.master_port : find_free_port(opt.master_addr);

  EnvMap base = opt.extra_env;  // on top of this process's environment (Supervisor::start)
  base["MASTER_ADDR"] = opt.master_addr;
  base["MASTER_PORT"] = std::to_string(port);
  base["WORLD_SIZE"] = std::to_string(opt.nproc);
  base["LOCAL_WORLD_SIZE"] = std::to_string(opt.nproc);
  base["DDPBENCH_LOCAL_SPAWNER"] = std::to_string(::getpid());  // read by exit_with_parent
  // The per-launch token the rendezvous checks (launcher_job_id), unless the user set one.
  if (const char* id = std::getenv("DDPBENCH_JOB_ID"); !id || !*id)
    base["DDPBENCH_JOB_ID"] =
        fmt::format("local-{:08x}{:08x}", std::random_device{}(), static_cast<unsigned>(::getpid()));
  const PhaseDir phases;

  InterruptCatcher signals;  // SIGINT/SIGTERM go to every rank's group
  Supervisor ranks(opt.term_grace_s);  // its destructor ends the ranks if start() throws
  for (int r = 0; r < opt.nproc; ++r) {
    ProcessOptions po;
    po.env = base;
    po.env["RANK"] = std::to_string(r);
    po.env["LOCAL_RANK"] = std::to_string(r);
    if (!phases.path.empty()) po.env["DDPBENCH_PHASE_FILE"] = phases.file(r);
    po.stdout_mode = po.stderr_mode = OutputMode::kForward;
    if (r != 0) po.prefix = fmt::format("[rank {}] ", r);
    ranks.start(opt.argv, po);
  }

  int first_failure = 0;
  // The first rank that exited 0 and when: from then on the others are in their teardown.
  std::optional<std::size_t> first_done;
  std::chrono::steady_clock::time_point done_at;
  bool finish_overdue = false;
  while (ranks.running()) {
    for (std::size_t i : ranks.step(0.1)) {
      const ExitStatus& st = ranks.status(i);
      const int code = st.shell_code();
      if (code == 0 && !first_done) {
        first_done = i;
        done_at = std::chrono::steady_clock::now();
      }
      if (code != 0 && first_failure == 0) {
        first_failure = code;
        // A rank killed by a signal could not say a word: say who, and what it was doing.
        if (st.signal != 0) {
          const std::string phase = read_phase_file(phases.file(static_cast<int>(i)));
          std::fprintf(stderr,
                       "ddpbench: error: rank %zu (pid %d on %s) was %s during %s; the other ranks were stopped\n", i,
                       static_cast<int>(ranks.pid(i)), host_name().c_str(), st.describe().c_str(),
                       phase.empty() ? "start-up" : phase.c_str());
          std::fflush(stderr);
        }
        // A rank stopped (SIGSTOP, a debugger) makes the others time out, and the rank that
        // says so first cannot tell which peer it waited for: name the stopped ones.
        for (std::size_t j = 0; j < static_cast<std::size_t>(opt.nproc); ++j)
          if (j != i && process_stopped(ranks.pid(j))) {
            const std::string phase = read_phase_file(phases.file(static_cast<int>(j)));
            std::fprintf(
                stderr, "ddpbench: note: rank %zu (pid %d on %s) was stopped (SIGSTOP or a debugger) during %s\n", j,
                static_cast<int>(ranks.pid(j)), host_name().c_str(), phase.empty() ? "start-up" : phase.c_str());
            std::fflush(stderr);
          }
        ranks.terminate_all(SIGTERM);
      }
    }
    // After a rank exited 0 the others are in their teardown. A stopped one cannot run its own
    // watchdog: --timeout. A running one bounds its waits itself (engine/run/teardown.hpp) and
    // may still be writing (rank 0's result, its table): kept 4 x --timeout + 60 s at most.
    if (first_done && !finish_overdue && opt.finish_timeout_s > 0) {
      const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - done_at).count();
      std::vector<std::pair<std::size_t, bool>> overdue;  // rank, stopped
      for (std::size_t j = 0; j < ranks.size(); ++j) {
        if (ranks.exited(j)) continue;
        const bool stopped = process_stopped(ranks.pid(j));
        if (since > (stopped ? opt.finish_timeout_s : 4 * opt.finish_timeout_s + 60)) overdue.emplace_back(j, stopped);
      }
      if (!overdue.empty()) {
        finish_overdue = true;
        for (const auto& [j, stopped] : overdue) {
          const std::string phase = read_phase_file(phases.file(static_cast<int>(j)));
          const std::string bound = stopped ? fmt::format("--timeout {:g} s", opt.finish_timeout_s)
                                            : fmt::format("4 x --timeout + 60 s ({:g} s)", 4 * opt.finish_timeout_s + 60);
          std::fprintf(stderr, "ddpbench: error: rank %zu (pid %d on %s) did not exit within %s of rank %zu's exit "
                               "(phase: %s%s); it was ended\n",
                       j, static_cast<int>(ranks.pid(j)), host_name().c_str(), bound.c_str(), *first_done,
                       phase.empty() ? "start-up" : phase.c_str(), stopped ? "; it is stopped (SIGSTOP or a debugger)" : "");
          std::fflush(stderr);
        }
        if (first_failure == 0) first_failure = kExitFailure;
        ranks.terminate_all(SIGTERM);
      }
    }
    if (const int sig = signals.take()) {
      if (first_failure == 0) first_failure = 128 + sig;
      ranks.terminate_all(sig);
    }
  }
  return first_failure;
}

}  // namespace ddpbench
