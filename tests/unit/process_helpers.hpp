// Helpers for the process-layer tests (test_process.cpp, test_spawn.cpp): is a process
// still there, read a pid a script wrote, capture what this process writes to fd 1 or 2.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/testutil.hpp"

namespace ddpbench::testutil {

/// True while a process `pid` named `comm` (its /proc/<pid>/comm) runs; false once it
/// is gone or a zombie (dead, not yet reaped by whoever inherited it).
inline bool running(pid_t pid, const std::string& comm) {
  const std::string dir = "/proc/" + std::to_string(pid);
  std::ifstream stat(dir + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return false;
  const char state = line[paren + 2];
  if (state == 'Z' || state == 'X' || state == 'x') return false;
  std::string name;
  std::ifstream(dir + "/comm") >> name;
  return name == comm;
}

/// Waits (10 s at most) for `pid` to be running() as `comm`: a child whose pid `$!` gave is
/// still the shell's copy until it has exec'd. True when it is.
inline bool starts_soon(pid_t pid, const std::string& comm) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!running(pid, comm)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

/// Waits (10 s at most) for `pid` to stop running(); true when it did.
inline bool ends_soon(pid_t pid, const std::string& comm) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (running(pid, comm)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

/// The pid a script wrote to `file` (`echo $! > file`), waiting 10 s at most for it;
/// -1 when it did not appear.
inline pid_t read_pid(const std::filesystem::path& file) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    const std::string s = slurp(file);
    if (!s.empty() && s.back() == '\n') return static_cast<pid_t>(std::stol(s));
    if (std::chrono::steady_clock::now() > until) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// Runs fn with this process's file descriptor `fd` (1 or 2) redirected to `file`;
/// returns what was written to it.
template <typename F>
std::string capture_fd(int fd, const std::filesystem::path& file, F fn) {
  struct Restore {  // also when fn throws
    int fd, saved;
    ~Restore() {
      std::fflush(stdout);
      std::fflush(stderr);
      ::dup2(saved, fd);
      ::close(saved);
    }
  };
  std::fflush(stdout);
  std::fflush(stderr);
  {
    // Close-on-exec copies: a child must not hold the real stdout/stderr (ctest's pipe).
    Restore restore{fd, ::fcntl(fd, F_DUPFD_CLOEXEC, 0)};
    const int f = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ::dup2(f, fd);
    ::close(f);
    fn();
  }
  return slurp(file);
}

}  // namespace ddpbench::testutil
