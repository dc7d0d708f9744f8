#include "core/launch/watchdog.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <condition_variable>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

using Clock = std::chrono::steady_clock;

struct Armed {
  Clock::time_point at;
  std::string message;  // "<what> did not answer within --timeout T s"
  std::string hint;     // after the phase, which is read when it fires
};

struct Watcher {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::uint64_t, Armed> armed;
  std::uint64_t next_id = 1;
  bool started = false;
  std::string name;
  std::string phase = "start-up";
  int phase_fd = -1;

  [[noreturn]] void fire(const Armed& a) {
    write_and_exit(fmt::format("ddpbench: error: {}{} (phase: {}){}\n", name.empty() ? "" : name + ": ", a.message,
                               phase, a.hint));
  }

  // No lock-taking or allocation once the line is built: the other threads may be anywhere.
  [[noreturn]] static void write_and_exit(const std::string& line) {
    ssize_t off = 0;
    while (off < static_cast<ssize_t>(line.size())) {
      const ssize_t n = ::write(2, line.data() + off, line.size() - static_cast<size_t>(off));
      if (n <= 0) break;
      off += n;
    }
    ::_exit(kExitFailure);
  }

  void loop() {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      if (armed.empty()) {
        cv.wait(lk);
        continue;
      }
      auto first = armed.begin();
      for (auto it = armed.begin(); it != armed.end(); ++it)
        if (it->second.at < first->second.at) first = it;
      if (Clock::now() >= first->second.at) fire(first->second);
      cv.wait_until(lk, first->second.at);
    }
  }
};

Watcher& watcher() {
  static Watcher* w = new Watcher;  // never destroyed: the thread may outlive static destruction
  return *w;
}

}  // namespace

void set_watchdog_name(const std::string& name) {
  Watcher& w = watcher();
  std::lock_guard<std::mutex> lk(w.mu);
  w.name = name;
}

Deadline::Deadline(std::string what, std::chrono::milliseconds timeout, std::string hint) {
  Watcher& w = watcher();
  std::string message =
      fmt::format("{} did not answer within --timeout {:g} s", what, std::chrono::duration<double>(timeout).count());
  std::lock_guard<std::mutex> lk(w.mu);
  if (!w.started) {
    std::thread([&w] { w.loop(); }).detach();
    w.started = true;
  }
  id_ = w.next_id++;
  w.armed[id_] = Armed{Clock::now() + timeout + std::chrono::seconds(2), std::move(message), std::move(hint)};
  w.cv.notify_one();
}

Deadline::~Deadline() {
  Watcher& w = watcher();
  std::lock_guard<std::mutex> lk(w.mu);
  w.armed.erase(id_);
  w.cv.notify_one();
}

void end_uncaught_exceptions_with_one_line() {
  std::set_terminate([] {
    std::string what = "an exception that is not a std::exception";
    if (const std::exception_ptr e = std::current_exception()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        what = x.what();
      } catch (...) {
      }
    } else {
      what = "std::terminate was called";
    }
    if (const auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    Watcher& w = watcher();
    // The thread that ended here may hold the lock (it never throws while holding it, but
    // a library's may have called terminate anywhere): read name and phase only if free.
    std::string name, phase = "unknown";
    if (w.mu.try_lock()) {
      name = w.name;
      phase = w.phase;
      w.mu.unlock();
    }
    Watcher::write_and_exit(
        fmt::format("ddpbench: error: {}{} (phase: {})\n", name.empty() ? "" : name + ": ", what, phase));
  });
}

void set_phase(const std::string& phase) {
  Watcher& w = watcher();
  std::lock_guard<std::mutex> lk(w.mu);
  w.phase = phase;
  if (w.phase_fd >= 0) {
    const std::string line = phase + "\n";
    if (::pwrite(w.phase_fd, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size()))
      (void)::ftruncate(w.phase_fd, static_cast<off_t>(line.size()));
  }
}

std::string current_phase() {
  Watcher& w = watcher();
  std::lock_guard<std::mutex> lk(w.mu);
  return w.phase;
}

void open_phase_file(const EnvMap& env) {
  const auto it = env.find("DDPBENCH_PHASE_FILE");
  if (it == env.end() || it->second.empty()) return;
  const int fd = ::open(it->second.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  {
    Watcher& w = watcher();
    std::lock_guard<std::mutex> lk(w.mu);
    if (w.phase_fd >= 0) ::close(w.phase_fd);
    w.phase_fd = fd;
  }
  set_phase(current_phase());
}

std::string read_phase_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line.substr(0, 200);
}

}  // namespace ddpbench
