#include "core/launch/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>

namespace ddpbench {
// The two types Supervisor::Child (a class of the header) holds, in a named namespace rather
// than the anonymous one below: a class with external linkage should not depend on types of
// internal linkage (GCC's -Wsubobject-linkage, which fires where this file is compiled inside a
// unity batch; GCC 14 crashed on the same pattern in core/telemetry/nvml.cpp).
namespace process_io {

// A file descriptor closed at scope exit.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// One of a child's output streams.
struct Stream {
  UniqueFd fd;  // our read end; closed at end of file
  OutputMode mode = OutputMode::kCapture;
  int target = STDOUT_FILENO;  // where forwarded lines go
  std::string data;            // captured bytes, or the forwarded stream's unfinished line
};

}  // namespace process_io

namespace {
using process_io::Stream;
using process_io::UniqueFd;

using Clock = std::chrono::steady_clock;
constexpr Clock::time_point kNever = Clock::time_point::max();
constexpr double kStepMaxS = 0.05;           // step() looks for exits at least this often
constexpr double kGiveUpS = 10.0;            // after SIGKILL, a child that has not exited is given up
constexpr double kReapOnDestroyS = 5.0;      // the destructor's wait for SIGKILLed children
constexpr std::size_t kMaxLine = 64 * 1024;  // a forwarded line longer than this is split

Clock::duration span(double s) {
  s = std::min(std::max(s, 0.0), 1e7);  // (1e7 s: 115 days, far from overflow)
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::runtime_error sys_error(const char* what, int err) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(err)));
}

// `fd` moved above 0-2 if needed: dup2 onto 0-2 in the child then always makes a copy,
// which clears close-on-exec (dup2 of a descriptor onto itself would not).
UniqueFd above_stdio(UniqueFd fd) {
  if (fd.get() > STDERR_FILENO) return fd;
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  if (moved < 0) throw sys_error("fcntl(F_DUPFD_CLOEXEC)", errno);
  return UniqueFd(moved);
}

void set_nonblocking(int fd) {
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) throw sys_error("fcntl(O_NONBLOCK)", errno);
}

// Both ends close-on-exec and above 0-2: {ours, the child's}. For stdin a socket pair,
// so that writing to a child that closed its stdin fails with EPIPE instead of raising
// SIGPIPE in this process (send's MSG_NOSIGNAL); for output a pipe {read, write}.
std::pair<UniqueFd, UniqueFd> channel(bool for_stdin) {
  int p[2];
  const int rc = for_stdin ? ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) : ::pipe2(p, O_CLOEXEC);
  if (rc != 0) throw sys_error(for_stdin ? "socketpair()" : "pipe2()", errno);
  UniqueFd a(p[0]), b(p[1]);
  a = above_stdio(std::move(a));
  b = above_stdio(std::move(b));
  set_nonblocking(a.get());
  return {std::move(a), std::move(b)};
}

void check_spawn_setup(int rc, const char* what) {
  if (rc != 0) throw sys_error(what, rc);
}

struct FileActions {
  posix_spawn_file_actions_t fa;
  FileActions() { check_spawn_setup(posix_spawn_file_actions_init(&fa), "posix_spawn_file_actions_init"); }
  ~FileActions() { posix_spawn_file_actions_destroy(&fa); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
};

struct SpawnAttr {
  posix_spawnattr_t a;
  SpawnAttr() { check_spawn_setup(posix_spawnattr_init(&a), "posix_spawnattr_init"); }
  ~SpawnAttr() { posix_spawnattr_destroy(&a); }
  SpawnAttr(const SpawnAttr&) = delete;
  SpawnAttr& operator=(const SpawnAttr&) = delete;
};

void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // nowhere to write to: the output is lost, the children are not stopped for it
    }
    off += static_cast<std::size_t>(n);
  }
}

// Writes the complete lines of a forwarded stream, each after `prefix`; with `final`
// (or once it grew past kMaxLine) also the unfinished rest, with a newline added.
void forward_lines(Stream& s, const std::string& prefix, bool final) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = s.data.find('\n', start)) != std::string::npos; start = nl + 1)
    out.append(prefix).append(s.data, start, nl + 1 - start);
  s.data.erase(0, start);
  if (!s.data.empty() && (final || s.data.size() > kMaxLine)) {
    out.append(prefix).append(s.data).append("\n");
    s.data.clear();
  }
  if (!out.empty()) write_all(s.target, out);
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signal != 0) {
    const char* abbrev = ::sigabbrev_np(signal);  // "KILL"; null for a number without a name
    return abbrev ? fmt::format("killed by signal {} (SIG{})", signal, abbrev)
                  : fmt::format("killed by signal {}", signal);
  }
  return fmt::format("exit code {}", code);
}

struct Supervisor::Child {
  pid_t pid = -1;
  std::string prefix;
  std::size_t max_capture = 0;
  Stream out, err;
  UniqueFd in;  // our end of the child's stdin while stdin_data is being written
  std::string in_data;
  std::size_t in_off = 0;
  ExitStatus status;
  bool exited = false;                     // exit noticed (status final), maybe not reaped yet
  bool reaped = false;                     // waited for (or given up): its pid is no longer ours to signal
  bool finished = false;                   // reaped, output drained and closed
  Clock::time_point drain_until = kNever;  // exited: SIGKILL the rest of the group and finish then
  Clock::time_point kill_at = kNever;      // terminate_all: SIGKILL the group then
  Clock::time_point killed_at = kNever;    // when SIGKILL was sent by terminate_all's deadline

  // Keeps `n` bytes of output read from `s`.
  void take(Stream& s, const char* p, std::size_t n) {
    if (s.mode == OutputMode::kCapture) {
      s.data.append(p, std::min(n, max_capture - std::min(max_capture, s.data.size())));
    } else {
      s.data.append(p, n);
      forward_lines(s, prefix, false);
    }
  }

  // Reads what `s` holds now; at end of file closes it and forwards an unfinished line.
  void drain(Stream& s) {
    char buf[65536];
    for (int i = 0; s.fd && i < 64; ++i) {  // bounded, so one busy child cannot starve the others
      const ssize_t n = ::read(s.fd.get(), buf, sizeof buf);
      if (n > 0) {
        take(s, buf, static_cast<std::size_t>(n));
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {  // end of file: every writer closed it (or a read error)
        s.fd.reset();
        if (s.mode == OutputMode::kForward) forward_lines(s, prefix, true);
      }
    }
  }

  // Writes as much of stdin_data as the child takes now; closes stdin when done or
  // when the child closed its end.
  void feed() {
    while (in && in_off < in_data.size()) {
      const ssize_t n = ::send(in.get(), in_data.data() + in_off, in_data.size() - in_off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        in_off += static_cast<std::size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        break;  // EPIPE: the child does not read any more
      }
    }
    in.reset();
    std::string().swap(in_data);
  }

  // Notices this child's exit without reaping it, so that its pid (its group's id)
  // stays taken while the rest of the group is signalled. True when it has exited.
  bool notice_exit() {
    siginfo_t si{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      // ECHILD: reaped elsewhere (SIGCHLD set to SIG_IGN): gone, with its status unknown.
      status = ExitStatus{};
      exited = reaped = true;
      return true;
    }
    if (si.si_pid != pid) return false;
    if (si.si_code == CLD_EXITED) {
      status.code = si.si_status;
    } else {  // CLD_KILLED, CLD_DUMPED
      status.code = -1;
      status.signal = si.si_status;
    }
    exited = true;
    return true;
  }

  // Forwards what is left of forwarded streams and closes everything.
  void close_all() {
    drain(out);
    drain(err);
    for (Stream* s : {&out, &err}) {
      if (s->mode == OutputMode::kForward) forward_lines(*s, prefix, true);
      s->fd.reset();
    }
    in.reset();
  }
};

Supervisor::Supervisor(double grace_s) : grace_s_(std::max(0.0, grace_s)) {}

Supervisor::~Supervisor() {
  for (auto& c : kids_)
    if (!c->reaped) ::kill(-c->pid, SIGKILL);
  const auto until = Clock::now() + span(kReapOnDestroyS);
  for (auto& c : kids_) {
    while (!c->reaped) {
      int st = 0;
      const pid_t r = ::waitpid(c->pid, &st, WNOHANG);
      if (r == c->pid || (r < 0 && errno != EINTR)) c->reaped = true;
      else if (Clock::now() >= until) break;
      else ::usleep(10 * 1000);
    }
    if (!c->finished) c->close_all();
  }
}

std::size_t Supervisor::start(const std::vector<std::string>& argv, const ProcessOptions& opts) {
  if (argv.empty()) throw std::invalid_argument("Supervisor::start: empty argv");
  std::string path = argv[0];
  if (path.find('/') == std::string::npos) {
    path = find_program(argv[0]);
    if (path.empty()) throw std::runtime_error(fmt::format("cannot start '{}': not found on PATH", argv[0]));
  }
  auto c = std::make_unique<Child>();
  c->prefix = opts.prefix;
  c->max_capture = opts.max_capture;
  c->out.mode = opts.stdout_mode;
  c->out.target = STDOUT_FILENO;
  c->err.mode = opts.stderr_mode;
  c->err.target = STDERR_FILENO;

  FileActions fa;
  UniqueFd child_in, child_out, child_err;  // the child's ends, closed here once it started
  if (opts.stdin_data) {
    std::tie(c->in, child_in) = channel(true);
    c->in_data = *opts.stdin_data;
    check_spawn_setup(posix_spawn_file_actions_adddup2(&fa.fa, child_in.get(), STDIN_FILENO), "adddup2");
  } else {
    check_spawn_setup(posix_spawn_file_actions_addopen(&fa.fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0), "addopen");
  }
  std::tie(c->out.fd, child_out) = channel(false);
  std::tie(c->err.fd, child_err) = channel(false);
  check_spawn_setup(posix_spawn_file_actions_adddup2(&fa.fa, child_out.get(), STDOUT_FILENO), "adddup2");
  check_spawn_setup(posix_spawn_file_actions_adddup2(&fa.fa, child_err.get(), STDERR_FILENO), "adddup2");
  if (!opts.cwd.empty())
    check_spawn_setup(posix_spawn_file_actions_addchdir_np(&fa.fa, opts.cwd.c_str()), "addchdir_np");
#if __GLIBC_PREREQ(2, 34)
  // Nothing else of this process's (a socket, another child's pipe, a test runner's
  // pipe) leaks into the child, close-on-exec or not.
  check_spawn_setup(posix_spawn_file_actions_addclosefrom_np(&fa.fa, STDERR_FILENO + 1), "addclosefrom_np");
#endif

  SpawnAttr at;
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE}) sigaddset(&defaults, sig);
  check_spawn_setup(posix_spawnattr_setsigmask(&at.a, &none), "setsigmask");
  check_spawn_setup(posix_spawnattr_setsigdefault(&at.a, &defaults), "setsigdefault");
  check_spawn_setup(posix_spawnattr_setpgroup(&at.a, 0), "setpgroup");  // 0: a new group, pgid = pid
  check_spawn_setup(
      posix_spawnattr_setflags(&at.a, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF),
      "setflags");

  EnvMap env = current_env();
  for (const auto& kv : opts.env) env[kv.first] = kv.second;
  if (opts.die_with_parent) env[kParentPidEnv] = std::to_string(::getpid());
  else env.erase(kParentPidEnv);
  std::vector<std::string> env_strs;
  env_strs.reserve(env.size());
  for (const auto& kv : env) env_strs.push_back(kv.first + "=" + kv.second);
  std::vector<char*> cenv, cargv;
  for (auto& s : env_strs) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  std::vector<std::string> args = argv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, path.c_str(), &fa.fa, &at.a, cargv.data(), cenv.data());
  if (rc != 0)
    throw std::runtime_error(fmt::format("cannot start '{}'{}: {}", argv[0],
                                         opts.cwd.empty() ? "" : fmt::format(" in '{}'", opts.cwd), std::strerror(rc)));
  c->pid = pid;
  kids_.push_back(std::move(c));
  if (kids_.back()->in) kids_.back()->feed();
  return kids_.size() - 1;
}

std::vector<std::size_t> Supervisor::step(double max_wait_s) {
  auto now = Clock::now();
  auto wake = now + span(std::min(max_wait_s, kStepMaxS));
  std::vector<pollfd> pfds;
  std::vector<std::pair<Child*, int>> who;  // 0: stdout, 1: stderr, 2: stdin
  for (auto& cp : kids_) {
    Child& c = *cp;
    if (c.finished) continue;
    if (c.out.fd) pfds.push_back({c.out.fd.get(), POLLIN, 0}), who.emplace_back(&c, 0);
    if (c.err.fd) pfds.push_back({c.err.fd.get(), POLLIN, 0}), who.emplace_back(&c, 1);
    if (c.in) pfds.push_back({c.in.get(), POLLOUT, 0}), who.emplace_back(&c, 2);
    wake = std::min({wake, c.drain_until, c.kill_at});
    if (c.killed_at != kNever) wake = std::min(wake, c.killed_at + span(kGiveUpS));
  }
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(std::max(wake - now, Clock::duration::zero()));
  if (::poll(pfds.data(), pfds.size(), static_cast<int>(ms.count())) > 0) {
    for (std::size_t i = 0; i < pfds.size(); ++i) {
      if (pfds[i].revents == 0) continue;
      Child& c = *who[i].first;
      if (who[i].second == 2) c.feed();
      else c.drain(who[i].second == 0 ? c.out : c.err);
    }
  }

  std::vector<std::size_t> exited_now;
  now = Clock::now();
  for (std::size_t i = 0; i < kids_.size(); ++i) {
    Child& c = *kids_[i];
    if (c.finished) continue;
    if (!c.exited && c.notice_exit()) {
      exited_now.push_back(i);
      if (!c.reaped) ::kill(-c.pid, SIGTERM);  // the rest of its group: leave no process behind
      c.drain_until = now + span(grace_s_);
    }
    if (c.exited) {
      if ((!c.out.fd && !c.err.fd) || now >= c.drain_until) finish(c);
    } else if (now >= c.kill_at) {
      ::kill(-c.pid, SIGKILL);
      c.kill_at = kNever;
      c.killed_at = now;
    } else if (c.killed_at != kNever && now >= c.killed_at + span(kGiveUpS)) {
      c.status = ExitStatus{-1, SIGKILL};  // stuck in the kernel: left to the destructor
      c.exited = c.finished = true;
      c.close_all();
      exited_now.push_back(i);
    }
  }
  return exited_now;
}

void Supervisor::finish(Child& c) {
  if (!c.reaped) {
    ::kill(-c.pid, SIGKILL);  // what is left of its group; the zombie leader keeps the pgid taken
    int st = 0;
    while (::waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {
    }
    c.reaped = true;
  }
  c.close_all();
  c.finished = true;
}

bool Supervisor::running() const {
  return std::any_of(kids_.begin(), kids_.end(), [](const auto& c) { return !c->finished; });
}

void Supervisor::terminate_all(int sig) {
  const auto at = Clock::now() + span(grace_s_);
  for (auto& c : kids_) {
    if (c->finished || c->reaped) continue;
    ::kill(-c->pid, sig);
    // A stopped process (SIGSTOP, a debugger) acts on the signal only once continued.
    if (sig != SIGKILL && sig != SIGCONT) ::kill(-c->pid, SIGCONT);
    if (!c->exited && c->kill_at == kNever && c->killed_at == kNever) c->kill_at = at;
  }
}

std::size_t Supervisor::size() const { return kids_.size(); }
pid_t Supervisor::pid(std::size_t i) const { return kids_.at(i)->pid; }
bool Supervisor::exited(std::size_t i) const { return kids_.at(i)->exited; }
const ExitStatus& Supervisor::status(std::size_t i) const { return kids_.at(i)->status; }

const std::string& Supervisor::out(std::size_t i) const {
  static const std::string none;
  const Stream& s = kids_.at(i)->out;
  return s.mode == OutputMode::kCapture ? s.data : none;
}

const std::string& Supervisor::err(std::size_t i) const {
  static const std::string none;
  const Stream& s = kids_.at(i)->err;
  return s.mode == OutputMode::kCapture ? s.data : none;
}

namespace {
std::atomic<int> g_caught_signal{0};
extern "C" void on_interrupt(int sig) { g_caught_signal.store(sig); }
}  // namespace

InterruptCatcher::InterruptCatcher() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  g_caught_signal.store(0);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

InterruptCatcher::~InterruptCatcher() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int InterruptCatcher::take() { return g_caught_signal.exchange(0); }

bool die_with_parent_from_env() {
  const char* v = std::getenv(kParentPidEnv);
  if (!v) return true;
  const std::string parent = v;
  ::unsetenv(kParentPidEnv);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // Gone before prctl took effect: re-parented (to init or a subreaper).
  return parent == std::to_string(::getppid());
}

CaptureResult run_capture(const std::vector<std::string>& argv, const ProcessOptions& opts, double timeout_s,
                          double grace_s, bool forward_interrupts) {
  std::optional<InterruptCatcher> catcher;
  if (forward_interrupts) catcher.emplace();
  Supervisor sup(grace_s);
  sup.start(argv, opts);
  CaptureResult r;
  const auto deadline = Clock::now() + span(timeout_s);
  while (sup.running()) {
    if (catcher)
      if (const int sig = catcher->take()) {
        r.interrupted = sig;
        sup.terminate_all(sig);
      }
    const auto now = Clock::now();
    if (!r.timed_out && !sup.exited(0) && now >= deadline) {
      r.timed_out = true;
      sup.terminate_all(SIGTERM);
    }
    const double left = std::chrono::duration<double>(deadline - now).count();
    sup.step(r.timed_out || left <= 0 ? kStepMaxS : left);
  }
  r.status = sup.status(0);
  r.out = sup.out(0);
  r.err = sup.err(0);
  return r;
}

std::string find_program(const std::string& name) {
  const auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "/bin:/usr/bin";
  for (std::size_t start = 0;;) {
    const std::size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";  // an empty PATH entry is the current directory
    const std::string candidate = dir + "/" + name;
    // Absolute, so that a child started in another working directory runs the same file.
    if (executable(candidate)) return std::filesystem::absolute(candidate).lexically_normal().string();
    if (colon == std::string::npos) return "";
    start = colon + 1;
  }
}

void pass_test_gate(const char* env_var) noexcept {
  const char* gate = std::getenv(env_var);
  if (gate == nullptr || *gate == '\0') return;
  const int fd = ::open(gate, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[256];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
  ::close(fd);
}

}  // namespace ddpbench
