#include "engine/run/teardown.hpp"

#include <dirent.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "core/launch/process.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"
#include "engine/compat.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/timing.hpp"

namespace ddpbench {
namespace {

// The threads of this process by their name (/proc/self/task/<tid>/comm, proc(5)).
std::vector<std::string> thread_names() {
  std::vector<std::string> out;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(in, name)) out.push_back(name);
  }
  ::closedir(d);
  return out;
}

// Threads the autograd engine names "pt_autograd_<device>" (torch 2.x: c10::setThreadName in
// Engine::thread_init; torch 1.13 leaves them unnamed).
std::vector<std::string> autograd_threads(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (n.rfind("pt_autograd_", 0) == 0) out.push_back(n);
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Step 5: Engine::stop() while every library is alive, then the wait until its device
// threads are gone (their thread-local destructors included). Returns the trace's detail.
std::string stop_autograd_engine() {
  auto& engine = torch::autograd::Engine::get_default_engine();
  const int started = compat::autograd_device_threads_started(engine);
  const std::vector<std::string> before = thread_names();
  const std::vector<std::string> named = autograd_threads(before);
  engine.stop();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kAutogradThreadWaitS);
  const auto wait_until = [&](const std::function<bool()>& done) {
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  };
  if (!named.empty()) {
    std::vector<std::string> left;
    const bool gone = wait_until([&] {
      left = autograd_threads(thread_names());
      return left.empty();
    });
    return gone ? fmt::format("{} device thread(s) exited ({})", named.size(), joined(named))
                : fmt::format("{} device thread(s) still running after {:g} s ({})", left.size(), kAutogradThreadWaitS,
                              joined(left));
  }
  if (started > 0) {
    // A torch that does not name them: the process must have that many threads fewer.
    const size_t target = before.size() > static_cast<size_t>(started) ? before.size() - started : 0;
    size_t now = before.size();
    const bool gone = wait_until([&] {
      now = thread_names().size();
      return now <= target;
    });
    return gone ? fmt::format("{} device thread(s) exited (unnamed in this torch: the process has {} thread(s) fewer)",
                              started, before.size() - now)
                : fmt::format(
                      "{} device thread(s) not all gone after {:g} s (unnamed in this torch: {} of {} "
                      "threads left)",
                      started, kAutogradThreadWaitS, now, before.size());
  }
  return started == 0 ? "no device threads were started" : "no device thread named pt_autograd_* was running";
}

// The rank of this process in a launched job, from the launcher's environment.
std::optional<int> launched_rank() {
  try {
    const LaunchInfo li = detect_launch(current_env());
    if (li.launcher != Launcher::kNone) return li.rank;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

void write_trace(const std::string& command) {
  const char* dir = std::getenv(kTeardownTraceEnv);
  if (dir == nullptr || *dir == '\0') return;
  const std::string path =
      std::string(dir) + "/" + teardown_trace_file_name(command, launched_rank(), static_cast<long>(::getpid()));
  std::string text;
  for (const auto& line : teardown_trace()) text += line + "\n";
  try {
    write_file_atomic(path, text);
  } catch (const std::exception& e) {
    const std::string line = fmt::format("ddpbench: warning: {}: the teardown trace was not written: {}\n",
                                         kTeardownTraceEnv, first_line(e.what()));
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
}

}  // namespace

std::string teardown_trace_file_name(const std::string& command, std::optional<int> rank, long pid) {
  return rank ? fmt::format("{}-rank{}-pid{}.txt", command, *rank, pid) : fmt::format("{}-pid{}.txt", command, pid);
}

void teardown_process(const std::string& command, int exit_code) noexcept {
  // Each step runs even when one before it failed (a CUDA error on a failed rank must not keep
  // the groups from being shut down); a failure is the step's line in the trace.
  const auto step = [](const char* event, const std::function<std::string()>& body) noexcept {
    std::string detail;
    try {
      detail = body();
    } catch (const c10::Error& e) {
      detail = "failed: " + first_line(e.what_without_backtrace());
    } catch (const std::exception& e) {
      detail = "failed: " + first_line(e.what());
    } catch (...) {
      detail = "failed: an exception that is not a std::exception";
    }
    try {
      if (!detail.empty()) record_teardown_event(std::string(event) + ": " + detail);
    } catch (...) {
    }
  };
  std::optional<c10::Device> cuda;
  step("teardown", [&] {
    set_phase("the end of the process (teardown)");
    if (launched_rank().value_or(0) != 0) pass_test_gate(kTeardownGateEnv);  // teardown.hpp: a test seam
    cuda = cuda_device_in_use();
    return fmt::format("{} returned {}", command, exit_code);
  });

  // 1. The device's queued work ends while every library is alive.
  step("device synchronized", [&]() -> std::string {
    if (!cuda) return "none (no CUDA device in use)";
    const auto bound = std::max(longest_registered_timeout(), std::chrono::milliseconds(60000));
    Deadline d(fmt::format("{} (synchronized at the end of the process)", cuda->str()), bound);
    synchronize(*cuda);
    return cuda->str();
  });

  // 2.-3. destroy_process_group() for WORLD: the groups newest first, then the stores. Both
  // record their own lines, one per group and store.
  (void)destroy_all_process_groups();
  (void)release_stores();

  // 4. The caching allocator's cached blocks, while the driver is alive.
  step("allocator emptied", [&]() -> std::string {
    if (!cuda) return "none (no CUDA device in use)";
#if DDPBENCH_HAVE_CUDA_ALLOCATOR_STATS
    compat::cuda_empty_cache();
    return "CUDA caching allocator (emptyCache)";
#else
    return "none (this build has no CUDA caching allocator)";
#endif
  });

  // 5. The autograd engine and its device threads.
  step("autograd engine stopped", [] { return stop_autograd_engine(); });

  // 6. What the command printed is out before the process ends.
  step("streams flushed", []() -> std::string {
    std::cout.flush();
    std::cerr.flush();
    const bool ok = std::fflush(stdout) == 0 && std::fflush(stderr) == 0;
    return ok ? "stdout, stderr" : "failed (a closed pipe or a full disk)";
  });

  try {
    record_teardown_event(fmt::format("main returns {}", exit_code));
    write_trace(command);
  } catch (...) {
  }
}

}  // namespace ddpbench
