// The fault-and-bad-input suite: one table of scenarios, each a set of real
// ddpbench processes (the built-in launcher, or ranks started by hand with a torchrun-style
// environment, or a foreign listener on the rendezvous port), faults injected from the
// outside when a phase is observed (a process appears, the store's port starts to listen,
// a line shows up on stdout, or a fixed delay), and what must follow: each process's exit
// code, its one "ddpbench: error: " line on stderr (never glog lines or C++ traces), how
// long it took to exit (bounded by --timeout plus a few seconds, so a hang is a failure,
// not a ctest timeout), that no process of the case is left behind, and what became of
// the result file.
//
// The binary under test is $DDPBENCH_UNDER_TEST when set, else the one this build made,
// so the same suite measures an older binary ("before" matrix, scripts/fault-matrix.sh).
// With $DDPBENCH_FAULT_MATRIX set, every case appends one JSON line to that file: each
// process's exit code and seconds to exit, stray processes, and whether the case passed.
//
// Bad command lines and bad launcher environments that are checked before a rank starts
// are mostly in tests/e2e/test_cli_failures.cpp's BadInput table (flags); this table adds the
// launcher environments and the few flags that table does not have.
//
// The table is fault_scenarios.cpp's scenarios() (types: fault_scenario.hpp); this file runs it.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/testutil.hpp"
#include "core/launch/spawn.hpp"
#include "faults/fault_scenario.hpp"

extern char** environ;

namespace ddpbench {
namespace {

namespace fs = std::filesystem;
using testutil::slurp;
using testutil::TempDir;
using namespace fault_tests;

using Clock = std::chrono::steady_clock;

std::string binary_under_test() {
  const char* e = std::getenv("DDPBENCH_UNDER_TEST");
  return e && *e ? std::string(e) : std::string(DDPBENCH_BINARY);
}

/// "--overwrite" when the binary has it (an existing --json file is refused without it),
/// "" for binaries from before the flag, which overwrite without being asked.
const std::string& overwrite_flag() {
  static const std::string flag = [] {
    const auto o = testutil::run(binary_under_test() + " run --help");
    return o.out.find("--overwrite") != std::string::npos ? std::string("--overwrite") : std::string();
  }();
  return flag;
}

// ------------------------------------------------------------------------ the harness

/// A process seen in /proc that carries this case's marker.
struct Seen {
  pid_t pid, ppid;
  std::map<std::string, std::string> env;  ///< RANK, MASTER_PORT, DDPBENCH_LOCAL_SPAWNER
};

std::vector<Seen> marked_processes(const std::string& marker) {
  std::vector<Seen> out;
  for (const auto& d : fs::directory_iterator("/proc", fs::directory_options::skip_permission_denied)) {
    const std::string name = d.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream in(d.path() / "environ", std::ios::binary);
    if (!in) continue;
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (raw.find(marker) == std::string::npos) continue;
    Seen s{static_cast<pid_t>(std::stol(name)), 0, {}};
    bool marked = false;
    for (size_t p = 0; p < raw.size();) {
      size_t e = raw.find('\0', p);
      if (e == std::string::npos) e = raw.size();
      const std::string kv = raw.substr(p, e - p);
      if (kv == marker) marked = true;
      for (const char* k : {"RANK", "MASTER_PORT", "DDPBENCH_LOCAL_SPAWNER"})
        if (kv.rfind(std::string(k) + "=", 0) == 0) s.env[k] = kv.substr(std::strlen(k) + 1);
      p = e + 1;
    }
    if (!marked) continue;
    const std::string stat = slurp(d.path() / "stat");
    const size_t rp = stat.rfind(')');
    if (rp == std::string::npos) continue;
    std::istringstream ss(stat.substr(rp + 2));
    char state = 0;
    ss >> state >> s.ppid;
    if (state == 'Z' || state == 'X') continue;
    out.push_back(s);
  }
  return out;
}

bool port_listening(int port) {
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream ss(line);
      std::string slot, local, remote, st;
      ss >> slot >> local >> remote >> st;
      const size_t colon = local.rfind(':');
      if (st == "0A" && colon != std::string::npos && std::stoi(local.substr(colon + 1), nullptr, 16) == port)
        return true;
    }
  }
  return false;
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream ss(s);
  for (std::string t; ss >> t;) v.push_back(t);
  return v;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

/// The environment of every started process: this one's, less every variable a launcher
/// or ddpbench reads (a CI job under Slurm, a developer's MASTER_PORT), plus one thread per
/// rank, the case's marker and the process's own variables.
std::vector<std::string> child_env(const std::string& marker, const std::vector<std::string>& own) {
  static const std::vector<std::string> scrub_prefixes = {
      "RANK=",         "WORLD_SIZE=",  "LOCAL_RANK=", "LOCAL_WORLD_SIZE=",
      "MASTER_ADDR=",  "MASTER_PORT=", "GROUP_RANK=", "ROLE_",
      "TORCHELASTIC_", "SLURM_",       "OMPI_",       "PMIX_",
      "PMI_",          "MPI_LOCAL",    "DDPBENCH_",   "OMP_NUM_THREADS="};
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    if (std::none_of(scrub_prefixes.begin(), scrub_prefixes.end(),
                     [&](const std::string& p) { return kv.rfind(p, 0) == 0; }))
      env.push_back(kv);
  }
  // One thread per process, unless the case sets OMP_NUM_THREADS itself (a variable given
  // twice would be read as its first value, by getenv and the OpenMP runtime alike).
  if (std::none_of(own.begin(), own.end(), [](const std::string& kv) { return kv.rfind("OMP_NUM_THREADS=", 0) == 0; }))
    env.push_back("OMP_NUM_THREADS=1");
  env.push_back(marker);
  for (const auto& kv : own) env.push_back(kv);
  return env;
}

/// Starts argv[0] (a path) in its own process group, stdin /dev/null, stdout and stderr to
/// files, no core dumps, default signal actions (a shell's background job ignores SIGINT).
pid_t start_process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& out,
                    const fs::path& err) {
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  const std::string o = out.string(), r = err.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    const int fo = ::open(o.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int fe = ::open(r.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || fo < 0 || fe < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(fo, 1);
    ::dup2(fe, 2);
    struct rlimit no_core {
      0, 0
    };
    ::setrlimit(RLIMIT_CORE, &no_core);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(a[0], a.data(), e.data());
    ::_exit(127);
  }
  return pid;
}

/// A foreign listener on 127.0.0.1:`port`, in a child process of its own: it accepts
/// every connection and reads what comes; it writes `sends` on each new connection, or, when
/// that is empty, never answers, as `python3 -m http.server` does to the store's binary
/// requests (it waits for a request line that never ends).
pid_t start_foreign_listener(int port, const std::string& sends) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setpgid(0, 0);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 64) != 0) ::_exit(1);
  std::vector<pollfd> fds{{fd, POLLIN, 0}};
  char buf[4096];
  for (;;) {
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (i == 0) {
        const int c = ::accept(fd, nullptr, nullptr);
        if (c >= 0 && !sends.empty()) (void)!::send(c, sends.data(), sends.size(), MSG_NOSIGNAL);
        if (c >= 0) fds.push_back({c, POLLIN, 0});
      } else if (::read(fds[i].fd, buf, sizeof buf) <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores it
      }
    }
  }
}

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

/// One process of a running case: started by the case (`spec` set) or a rank its
/// launcher started (seen in /proc).
struct Live {
  const Proc* spec = nullptr;
  std::string role;
  pid_t pid = -1;
  bool started = false, exited = false, hung = false;
  int code = -1;
  Clock::time_point start, end;
  fs::path out, err;
  std::map<std::string, std::string> env;  ///< MASTER_PORT etc. (a launcher's rank: as seen)
};

struct Outcome {
  std::vector<Live> procs;  ///< the case's processes in table order, then launchers' ranks
  std::vector<std::string> failures;
  int stray = 0;
  std::optional<Clock::time_point> first_fault;
  Clock::time_point t0;
};

std::vector<std::string> stderr_lines(const fs::path& p) {
  std::vector<std::string> v;
  std::istringstream ss(slurp(p));
  for (std::string l; std::getline(ss, l);)
    if (!l.empty()) v.push_back(l);
  return v;
}

class Runner {
 public:
  Runner(const Scenario& sc, const fs::path& dir) : sc_(sc), dir_(dir) {
    static int counter = 0;
    marker_ = "DDPBENCH_FAULT_CASE=" + sc.name + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
    port_ = find_free_port();
    json_ = dir / "r.json";
    if (sc.json == ResultFile::kEarlier) std::ofstream(json_) << kEarlier;
  }

  Outcome run() {
    Outcome o;
    o.t0 = Clock::now();
    for (const auto& p : sc_.procs) {
      Live l;
      l.spec = &p;
      l.role = p.role;
      l.out = dir_ / (p.role + ".out");
      l.err = dir_ / (p.role + ".err");
      for (const auto& kv : split_ws(subst(p.env))) {
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) l.env[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      o.procs.push_back(l);
    }
    std::vector<bool> fired(sc_.faults.size(), false);
    std::map<std::string, Clock::time_point> since;  // role -> when its trigger condition first held
    const double hard_base = 3 * sc_.timeout_s + 30;
    int tick = 0;
    for (;; ++tick) {
      const auto now = Clock::now();
      // Exits of the processes the case started.
      for (auto& l : o.procs) {
        if (!l.spec || !l.started || l.exited) continue;
        int st = 0;
        if (::waitpid(l.pid, &st, WNOHANG) == l.pid) {
          l.exited = true;
          l.end = Clock::now();
          l.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
      }
      // Ranks of launchers, as /proc shows them (every tick while a trigger waits for one).
      const bool want_scan = tick % 5 == 0 || waiting_for_rank(o, fired);
      if (want_scan) scan(o);
      // Starts.
      for (auto& l : o.procs)
        if (l.spec && !l.started && due(l.spec->start, o, since, "start:" + l.role)) start(l);
      // Faults.
      for (size_t i = 0; i < sc_.faults.size(); ++i) {
        if (fired[i]) continue;
        const Fault& f = sc_.faults[i];
        if (!due(f.when, o, since, "fault:" + std::to_string(i))) continue;
        Live* t = find(o, f.target);
        if (!t || t->exited) continue;
        ::kill(t->pid, f.sig);
        fired[i] = true;
        if (!o.first_fault) o.first_fault = Clock::now();
      }
      // Hard deadline: a process that outlives it is hung; kill its group.
      for (auto& l : o.procs) {
        if (!l.spec || !l.started || l.exited || l.hung || l.spec->victim) continue;
        double limit = hard_base;
        if (o.first_fault) limit = std::max(limit, secs(*o.first_fault - l.start) + bound(l.spec->expect) + 15);
        if (secs(now - l.start) > limit) {
          ::kill(-l.pid, SIGKILL);
          ::kill(l.pid, SIGKILL);
          l.hung = true;
        }
      }
      // Done when every checked process exited and nothing else can start.
      bool busy = false;
      for (const auto& l : o.procs) {
        if (!l.spec || l.spec->victim) continue;
        if (l.started && !l.exited) busy = true;
        if (!l.started && !can_never_start(l, o) && secs(now - o.t0) < hard_base) busy = true;
      }
      if (!busy) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (size_t i = 0; i < sc_.faults.size(); ++i)
      if (!fired[i])
        o.failures.push_back("fault " + std::to_string(i) + " (signal " + std::to_string(sc_.faults[i].sig) + " to " +
                             sc_.faults[i].target + ") was never sent: its phase was not reached");
    for (const auto& l : o.procs)
      if (l.spec && !l.spec->victim && !l.started) o.failures.push_back(l.role + " was never started");
    // Victims (the stopped rank, the foreign listener) end now; then what is left is stray.
    for (auto& l : o.procs) {
      if (!l.spec || !l.spec->victim || !l.started || l.exited) continue;
      ::kill(-l.pid, SIGKILL);
      ::kill(l.pid, SIGKILL);
      ::kill(l.pid, SIGCONT);
      int st = 0;
      ::waitpid(l.pid, &st, 0);
      l.exited = true;
      l.end = Clock::now();
      l.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    const auto settle = Clock::now() + std::chrono::seconds(5);
    std::vector<Seen> left;
    for (;;) {
      scan(o);
      left = marked_processes(marker_);
      if (left.empty() || Clock::now() > settle) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    o.stray = static_cast<int>(left.size());
    for (const auto& s : left) {
      ::kill(s.pid, SIGKILL);
      ::kill(s.pid, SIGCONT);
    }
    for (int i = 0; i < 100 && !marked_processes(marker_).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    check(o);
    return o;
  }

  int port() const { return port_; }
  /// A setup or teardown command with @DIR and @SRC replaced.
  std::string shell(const std::string& cmd) const { return subst(cmd); }
  /// Seconds a process may take to exit, from its start or the case's first fault.
  double bound(const Expect& e) const { return e.per_timeout * sc_.timeout_s + e.plus_s; }
  const fs::path& json() const { return json_; }
  static constexpr const char* kEarlier = "{\"earlier\": \"result\"}\n";

 private:
  const Scenario& sc_;
  fs::path dir_, json_;
  std::string marker_;
  int port_ = 0;

  std::string subst(const std::string& s) const {
    std::string r = replace_all(s, "@PORT", std::to_string(port_));
    r = replace_all(r, "@DIR", dir_.string());
    r = replace_all(r, "@SRC", DDPBENCH_SOURCE_DIR);
    r = replace_all(r, "@T", "--timeout " + std::to_string(static_cast<int>(sc_.timeout_s)));
    // An earlier result is replaced only with --overwrite, once a run completes.
    const std::string ow = sc_.json == ResultFile::kEarlier && !overwrite_flag().empty() ? " " + overwrite_flag() : "";
    return replace_all(r, "@JSON", "--json " + json_.string() + ow);
  }

  void start(Live& l) {
    std::vector<std::string> argv, own;
    for (const auto& [k, v] : l.env) own.push_back(k + "=" + v);
    l.start = Clock::now();
    l.started = true;
    if (l.spec->listener) {
      l.pid = start_foreign_listener(port_, l.spec->listener_sends);
      return;
    }
    argv = {binary_under_test()};
    for (const auto& a : split_ws(subst(l.spec->args))) argv.push_back(a);
    l.pid = start_process(argv, child_env(marker_, own), l.out, l.err);
  }

  static Live* find(Outcome& o, const std::string& role) {
    for (auto& l : o.procs)
      if (l.role == role && l.started) return &l;
    return nullptr;
  }

  // A launcher's ranks: marked processes whose parent is a process the case started.
  void scan(Outcome& o) {
    const auto seen = marked_processes(marker_);
    const auto now = Clock::now();
    std::set<pid_t> alive;
    for (const auto& s : seen) alive.insert(s.pid);
    for (const auto& s : seen) {
      if (!s.env.count("DDPBENCH_LOCAL_SPAWNER") || !s.env.count("RANK")) continue;
      const Live* parent = nullptr;
      for (const auto& l : o.procs)
        if (l.spec && l.started && l.pid == s.ppid) parent = &l;
      if (!parent) continue;
      bool known = false;
      for (const auto& l : o.procs) known = known || (!l.spec && l.pid == s.pid);
      if (known) continue;
      Live l;
      l.role = parent->role + "/rank" + s.env.at("RANK");
      l.pid = s.pid;
      l.started = true;
      l.start = now;
      l.env = s.env;
      o.procs.push_back(l);
    }
    for (auto& l : o.procs)
      if (!l.spec && !l.exited && !alive.count(l.pid)) {
        l.exited = true;
        l.end = now;
      }
  }

  bool waiting_for_rank(const Outcome& o, const std::vector<bool>& fired) const {
    auto unseen = [&](const std::string& role) {
      if (role.find('/') == std::string::npos) return false;
      for (const auto& l : o.procs)
        if (l.role == role) return false;
      return true;
    };
    for (size_t i = 0; i < sc_.faults.size(); ++i)
      if (!fired[i] && (unseen(sc_.faults[i].when.role) || unseen(sc_.faults[i].target))) return true;
    return false;
  }

  bool condition(const When& w, Outcome& o) {
    switch (w.kind) {
      case When::kAt: return true;
      case When::kAppears: {
        const Live* l = find(o, w.role);
        return l && !l->exited;
      }
      case When::kListening: {
        const Live* l = find(o, w.role);
        if (!l || l->exited || !l->env.count("MASTER_PORT")) return false;
        return port_listening(std::atoi(l->env.at("MASTER_PORT").c_str()));
      }
      case When::kOutput: {
        const std::string role = w.role.substr(0, w.role.find('/'));
        const Live* l = find(o, role);
        return l && slurp(l->out).find(w.text) != std::string::npos;
      }
    }
    return false;
  }

  // True once `w`'s condition has held for its delay (kAt: since the case started).
  bool due(const When& w, Outcome& o, std::map<std::string, Clock::time_point>& since, const std::string& key) {
    const auto now = Clock::now();
    if (w.kind == When::kAt) return secs(now - o.t0) >= w.delay_s;
    if (!since.count(key)) {
      if (!condition(w, o)) return false;
      since[key] = now;
    }
    return secs(now - since[key]) >= w.delay_s;
  }

  // A process whose start waits for another that has exited (or that never started) will not start.
  bool can_never_start(const Live& l, const Outcome& o) const {
    const When& w = l.spec->start;
    if (w.kind == When::kAt) return false;
    const std::string role = w.role.substr(0, w.role.find('/'));
    for (const auto& p : o.procs)
      if (p.role == role) return p.exited;
    return true;
  }

  void check(Outcome& o) const {
    static const std::regex clean(R"(^(\[rank [0-9]+\] )?ddpbench: (error|note|warning): .*)");
    // run's progress on stderr when it is not a terminal, one line per row (core/launch/progress):
    // ddpbench's own, not an error; skipped here so the error line stays the one counted.
    static const std::regex progress(R"(^(\[rank [0-9]+\] )?\[[0-9]+/[0-9]+\] .*)");
    auto& f = o.failures;
    for (const auto& l : o.procs) {
      if (!l.spec || l.spec->victim || !l.started) continue;
      const Expect& e = l.spec->expect;
      const std::string who = l.role + ": ";
      if (l.hung) {
        f.push_back(who + "hung, killed at " + num(secs(l.end - l.start)) + " s");
        continue;
      }
      if (std::find(e.codes.begin(), e.codes.end(), l.code) == e.codes.end())
        f.push_back(who + "exit code " + std::to_string(l.code) + ", expected " + join(e.codes));
      const auto lines = stderr_lines(l.err);
      int errors = 0, notes = 0;
      bool found = e.line_has.empty(), note_found = e.note_has.empty();
      for (const auto& line : lines) {
        if (std::regex_match(line, progress)) continue;
        if (!std::regex_match(line, clean)) {
          f.push_back(who + "stderr line that is not ddpbench's error or note: " + line.substr(0, 300));
          break;
        }
        if (line.find("ddpbench: error: ") != std::string::npos) {
          ++errors;
          found = found || std::all_of(e.line_has.begin(), e.line_has.end(),
                                       [&](const std::string& h) { return line.find(h) != std::string::npos; });
        } else {
          ++notes;
          note_found = note_found || std::all_of(e.note_has.begin(), e.note_has.end(), [&](const std::string& h) {
                         return line.find(h) != std::string::npos;
                       });
        }
      }
      if (errors < e.min_errors || errors > e.max_errors)
        f.push_back(who + std::to_string(errors) + " error line(s) on stderr, expected " +
                    std::to_string(e.min_errors) +
                    (e.max_errors != e.min_errors ? ".." + std::to_string(e.max_errors) : ""));
      if (notes > e.max_notes) f.push_back(who + std::to_string(notes) + " note line(s) on stderr");
      if (!note_found) {
        std::string want;
        for (const auto& h : e.note_has) want += (want.empty() ? "'" : ", '") + h + "'";
        f.push_back(who + "no note line contains " + want);
      }
      if (!found) {
        std::string want;
        for (const auto& h : e.line_has) want += (want.empty() ? "'" : ", '") + h + "'";
        f.push_back(who + "no error line contains " + want);
      }
      const auto from = (!e.since_start && o.first_fault) ? *o.first_fault : l.start;
      const double took = secs(l.end - from);
      if (took > bound(e))
        f.push_back(who + "exited " + num(took) + " s after its " + (from == l.start ? "start" : "fault") + ", bound " +
                    num(bound(e)) + " s");
      if (e.stdout_empty && !slurp(l.out).empty()) f.push_back(who + "wrote to stdout: " + slurp(l.out).substr(0, 200));
    }
    if (o.stray > 0) f.push_back(std::to_string(o.stray) + " process(es) of the case still running 5 s after the end");
    check_result(f);
  }

  void check_result(std::vector<std::string>& f) const {
    if (sc_.result == ResultState::kAny) return;
    const bool exists = fs::exists(json_);
    if (sc_.result == ResultState::kComplete) {
      try {
        const auto j = nlohmann::json::parse(slurp(json_));
        if (j.at("results").empty()) f.push_back("result file: no rows");
        const auto& rdzv = j.at("environment").at("rendezvous");
        if (rdzv.at("master_port") != port_)
          f.push_back("result file: rendezvous on port " + rdzv.at("master_port").dump() + ", MASTER_PORT was " +
                      std::to_string(port_));
      } catch (const std::exception& ex) {
        f.push_back(std::string("result file: not a complete result (") + ex.what() + ")");
      }
      return;
    }
    if (sc_.json == ResultFile::kFresh && exists) f.push_back("result file: written by a run that did not finish");
    if (sc_.json == ResultFile::kEarlier && slurp(json_) != kEarlier)
      f.push_back("result file: the earlier result was overwritten by a run that did not finish");
    if (sc_.result == ResultState::kPartial) {
      const fs::path partial = json_.string() + ".partial";
      if (!fs::exists(partial)) {
        f.push_back("result file: no " + partial.filename().string() + " with the rows measured before the fault");
        return;
      }
      try {
        const auto j = nlohmann::json::parse(slurp(partial));
        if (j.value("complete", true) != false) f.push_back("result file: .partial does not say \"complete\": false");
        if (j.value("results", nlohmann::json::array()).empty()) f.push_back("result file: .partial has no rows");
      } catch (const std::exception& ex) {
        f.push_back(std::string(".partial is not JSON: ") + ex.what());
      }
    }
  }

  static std::string num(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", x);
    return b;
  }
  static std::string join(const std::vector<int>& v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : " or ") + std::to_string(x);
    return s;
  }
};

void append_matrix_line(const Scenario& sc, const Outcome& o, const Runner& runner) {
  const char* path = std::getenv("DDPBENCH_FAULT_MATRIX");
  if (!path || !*path) return;
  nlohmann::json procs = nlohmann::json::array();
  for (const auto& l : o.procs) {
    if (!l.started) continue;
    nlohmann::json p;
    p["role"] = l.role;
    p["code"] = l.spec ? nlohmann::json(l.code) : nlohmann::json(nullptr);  // a launcher's rank: its launcher reaps it
    p["seconds"] = l.exited ? nlohmann::json(std::round(secs(l.end - l.start) * 10) / 10) : nlohmann::json(nullptr);
    p["after_fault"] = l.exited && o.first_fault && l.end > *o.first_fault
                           ? nlohmann::json(std::round(secs(l.end - *o.first_fault) * 10) / 10)
                           : nlohmann::json(nullptr);
    p["hung"] = l.hung;
    if (l.spec && !l.spec->victim && l.exited) {  // what the time bound was checked against
      const Expect& e = l.spec->expect;
      const bool from_fault = !e.since_start && o.first_fault;
      p["bound_s"] = runner.bound(e);
      p["measured_s"] = std::round(secs(l.end - (from_fault ? *o.first_fault : l.start)) * 10) / 10;
    }
    p["victim"] = l.spec ? l.spec->victim : false;
    if (l.spec && !l.spec->listener) {
      const auto lines = stderr_lines(l.err);
      p["stderr_lines"] = lines.size();
      p["first_line"] = lines.empty() ? "" : lines.front().substr(0, 300);
      std::string error_line;  // the first of ddpbench's own error lines, if any
      for (const auto& x : lines)
        if (error_line.empty() && x.find("ddpbench: error: ") != std::string::npos) error_line = x.substr(0, 300);
      p["error_line"] = error_line;
    }
    procs.push_back(p);
  }
  nlohmann::json line = {{"case", sc.name},           {"binary", fs::path(binary_under_test()).filename().string()},
                         {"timeout_s", sc.timeout_s}, {"procs", procs},
                         {"stray", o.stray},          {"passed", o.failures.empty()},
                         {"failures", o.failures}};
  std::ofstream(path, std::ios::app) << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

class Faults : public ::testing::TestWithParam<Scenario> {};

TEST_P(Faults, EndsAsExpected) {
  const Scenario& sc = GetParam();
  if (sc.needs_root && ::geteuid() != 0) GTEST_SKIP() << "needs root (it mounts a small tmpfs)";
  TempDir dir;
  Runner runner(sc, dir.path);
  struct Teardown {
    const Runner& r;
    const std::string& cmd;
    ~Teardown() {
      if (!cmd.empty()) (void)std::system(r.shell(cmd).c_str());
    }
  } teardown{runner, sc.teardown};
  if (!sc.setup.empty()) ASSERT_EQ(std::system(runner.shell(sc.setup).c_str()), 0) << runner.shell(sc.setup);
  Outcome o = runner.run();
  if (!sc.after.empty() && std::system(runner.shell(sc.after).c_str()) != 0)
    o.failures.push_back("after the case, '" + sc.after + "' failed");
  append_matrix_line(sc, o, runner);
  for (const auto& f : o.failures) ADD_FAILURE() << f;
  if (!o.failures.empty()) {
    std::string log;
    for (const auto& l : o.procs) {
      if (!l.spec || l.spec->listener) continue;
      log += "--- " + l.role + " (exit " + std::to_string(l.code) + ", " + std::to_string(secs(l.end - l.start)) +
             " s) stderr:\n" + slurp(l.err).substr(0, 3000);
    }
    std::cerr << log;
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Faults, ::testing::ValuesIn(scenarios()), testutil::ParamName());
}  // namespace
}  // namespace ddpbench
