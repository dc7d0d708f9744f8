#include "core/spawn.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace ddpbench {
namespace {

std::atomic<int> g_forward_signal{0};

extern "C" void on_signal(int sig) { g_forward_signal.store(sig); }

struct Child {
  int rank = 0;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;  // read ends of the child's stdout/stderr pipes
  std::string out_buf, err_buf;  // partial lines
  bool reaped = false;
  int status = 0;
};

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    off += static_cast<size_t>(n);
  }
}

// Emits the complete lines of `buf` to `fd` (prefixed for ranks != 0); keeps the rest.
void flush_lines(std::string& buf, int fd, int rank, bool final) {
  size_t start = 0;
  std::string out;
  for (;;) {
    size_t nl = buf.find('\n', start);
    if (nl == std::string::npos) break;
    if (rank != 0) out += fmt::format("[rank {}] ", rank);
    out.append(buf, start, nl + 1 - start);
    start = nl + 1;
  }
  buf.erase(0, start);
  if (final && !buf.empty()) {
    if (rank != 0) out += fmt::format("[rank {}] ", rank);
    out += buf + "\n";
    buf.clear();
  }
  if (!out.empty()) write_all(fd, out);
}

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

// Kills and reaps the children started so far and closes their pipes (start-up failure).
void abandon(std::vector<Child>& kids) {
  for (auto& k : kids) {
    if (k.pid > 0) {
      ::kill(k.pid, SIGKILL);
      ::waitpid(k.pid, nullptr, 0);
    }
    if (k.out_fd >= 0) ::close(k.out_fd);
    if (k.err_fd >= 0) ::close(k.err_fd);
    k.pid = k.out_fd = k.err_fd = -1;
  }
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

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

  EnvMap base = current_env();
  for (const auto& kv : opt.extra_env) base[kv.first] = kv.second;
  base["MASTER_ADDR"] = opt.master_addr;
  base["MASTER_PORT"] = std::to_string(port);
  base["WORLD_SIZE"] = std::to_string(opt.nproc);
  base["LOCAL_WORLD_SIZE"] = std::to_string(opt.nproc);
  base["DDPBENCH_LOCAL_SPAWNER"] = std::to_string(::getpid());  // read by exit_with_parent

  SignalForwarding signals;
  std::vector<Child> kids(static_cast<size_t>(opt.nproc));
  std::vector<char*> cargv;
  for (const auto& a : opt.argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  auto kill_all = [&](int sig) {
    for (auto& k : kids)
      if (k.pid > 0 && !k.reaped) ::kill(k.pid, sig);
  };
  for (int r = 0; r < opt.nproc; ++r) {
    Child& k = kids[static_cast<size_t>(r)];
    k.rank = r;
    int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
    if (::pipe(out_p) != 0 || ::pipe(err_p) != 0) {
      const int err = errno;
      for (int fd : {out_p[0], out_p[1]})
        if (fd >= 0) ::close(fd);
      abandon(kids);
      throw std::runtime_error(fmt::format("pipe(): {}", std::strerror(err)));
    }
    EnvMap env = base;
    env["RANK"] = std::to_string(r);
    env["LOCAL_RANK"] = std::to_string(r);
    std::vector<std::string> env_strs;
    for (const auto& kv : env) env_strs.push_back(kv.first + "=" + kv.second);
    std::vector<char*> cenv;
    for (auto& s : env_strs) cenv.push_back(s.data());
    cenv.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_p[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err_p[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&fa, out_p[0]);
    posix_spawn_file_actions_addclose(&fa, err_p[0]);
    posix_spawn_file_actions_addclose(&fa, out_p[1]);
    posix_spawn_file_actions_addclose(&fa, err_p[1]);
    // Earlier children's read ends must not leak into later children.
    for (int j = 0; j < r; ++j) {
      posix_spawn_file_actions_addclose(&fa, kids[static_cast<size_t>(j)].out_fd);
      posix_spawn_file_actions_addclose(&fa, kids[static_cast<size_t>(j)].err_fd);
    }
    int rc = ::posix_spawn(&k.pid, opt.argv[0].c_str(), &fa, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(out_p[1]);
    ::close(err_p[1]);
    if (rc != 0) {
      ::close(out_p[0]);
      ::close(err_p[0]);
      k.pid = -1;
      abandon(kids);
      throw std::runtime_error(fmt::format("cannot start '{}': {}", opt.argv[0], std::strerror(rc)));
    }
    k.out_fd = out_p[0];
    k.err_fd = err_p[0];
  }

  int first_failure = 0;
  bool terminating = false;
  auto kill_deadline = std::chrono::steady_clock::time_point::max();
  int live = opt.nproc;
  auto all_exited = std::chrono::steady_clock::time_point::max();

  while (true) {
    // Drain output.
    std::vector<pollfd> pfds;
    std::vector<std::pair<Child*, bool>> owners;  // (child, is_stderr)
    for (auto& k : kids) {
      if (k.out_fd >= 0) pfds.push_back({k.out_fd, POLLIN, 0}), owners.push_back({&k, false});
      if (k.err_fd >= 0) pfds.push_back({k.err_fd, POLLIN, 0}), owners.push_back({&k, true});
    }
    if (!pfds.empty()) {
      int n = ::poll(pfds.data(), pfds.size(), 100);
      if (n > 0) {
        for (size_t i = 0; i < pfds.size(); ++i) {
          if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          Child* k = owners[i].first;
          bool is_err = owners[i].second;
          int& fd = is_err ? k->err_fd : k->out_fd;
          std::string& buf = is_err ? k->err_buf : k->out_buf;
          char chunk[8192];
          ssize_t got = ::read(fd, chunk, sizeof chunk);
          if (got > 0) {
            buf.append(chunk, static_cast<size_t>(got));
            flush_lines(buf, is_err ? STDERR_FILENO : STDOUT_FILENO, k->rank, false);
          } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
            flush_lines(buf, is_err ? STDERR_FILENO : STDOUT_FILENO, k->rank, true);
            ::close(fd);
            fd = -1;
          }
        }
      }
    } else if (live > 0) {
      ::usleep(50 * 1000);
    }

    // Reap.
    for (auto& k : kids) {
      if (k.reaped || k.pid <= 0) continue;
      int st = 0;
      pid_t p = ::waitpid(k.pid, &st, WNOHANG);
      if (p == k.pid) {
        k.reaped = true;
        k.status = st;
        --live;
        int code = exit_code(st);
        if (code != 0 && first_failure == 0 && !terminating) {
          first_failure = code;
          terminating = true;
          kill_all(SIGTERM);
          kill_deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long long>(opt.term_grace_s * 1000));
        }
      }
    }
    if (int sig = g_forward_signal.exchange(0)) {
      if (!terminating) {
        terminating = true;
        if (first_failure == 0) first_failure = 128 + sig;
        kill_deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(opt.term_grace_s * 1000));
      }
      kill_all(sig);
    }
    if (terminating && std::chrono::steady_clock::now() > kill_deadline) {
      kill_all(SIGKILL);
      kill_deadline = std::chrono::steady_clock::time_point::max();
    }
    bool pipes_open = false;
    for (auto& k : kids) pipes_open = pipes_open || k.out_fd >= 0 || k.err_fd >= 0;
    if (live == 0 && !pipes_open) break;
    // A rank that exited may leave a grandchild holding its pipes: wait for them 2 s at most.
    if (live == 0) {
      if (all_exited == std::chrono::steady_clock::time_point::max()) all_exited = std::chrono::steady_clock::now();
      if (std::chrono::steady_clock::now() - all_exited > std::chrono::seconds(2)) break;
    }
  }
  for (auto& k : kids) {
    if (k.out_fd >= 0) ::close(k.out_fd);
    if (k.err_fd >= 0) ::close(k.err_fd);
  }
  return first_failure;
}

}  // namespace ddpbench
