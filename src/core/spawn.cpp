#include "core/spawn.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/process.hpp"

namespace ddpbench {
namespace {

std::atomic<int> g_forward_signal{0};

extern "C" void on_signal(int sig) { g_forward_signal.store(sig); }

// Installs the forwarding handlers for SIGINT/SIGTERM and restores the old ones on
// every exit path, exceptions included.
struct SignalForwarding {
  struct sigaction old_int {}, old_term {};
  SignalForwarding() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_forward_signal.store(0);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~SignalForwarding() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
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

void exit_with_parent(const EnvMap& env) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The launcher died before prctl took effect: this rank was re-parented (to init or
  // a subreaper). Compared by pid, since the launcher may itself be pid 1 in a container.
  const auto it = env.find("DDPBENCH_LOCAL_SPAWNER");
  if (it != env.end() && it->second != std::to_string(::getppid())) std::_Exit(128 + SIGTERM);
}

std::string self_exe_path() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  return std::string(buf, static_cast<size_t>(n));
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

  SignalForwarding signals;
  Supervisor ranks(opt.term_grace_s);  // its destructor ends the ranks if start() throws
  for (int r = 0; r < opt.nproc; ++r) {
    ProcessOptions po;
    po.env = base;
    po.env["RANK"] = std::to_string(r);
    po.env["LOCAL_RANK"] = std::to_string(r);
    po.stdout_mode = po.stderr_mode = OutputMode::kForward;
    if (r != 0) po.prefix = fmt::format("[rank {}] ", r);
    ranks.start(opt.argv, po);
  }

  int first_failure = 0;
  while (ranks.running()) {
    for (std::size_t i : ranks.step(0.1)) {
      const int code = ranks.status(i).shell_code();
      if (code != 0 && first_failure == 0) {
        first_failure = code;
        ranks.terminate_all(SIGTERM);
      }
    }
    if (const int sig = g_forward_signal.exchange(0)) {
      if (first_failure == 0) first_failure = 128 + sig;
      ranks.terminate_all(sig);
    }
  }
  return first_failure;
}

}  // namespace ddpbench
