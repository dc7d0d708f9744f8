#include "engine/profile.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>
#if __has_include(<torch/csrc/autograd/profiler_legacy.h>)
#include <torch/csrc/autograd/profiler_legacy.h>
#define DDPBENCH_HAVE_LEGACY_PROFILER 1
#endif

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>

#include "core/result/result.hpp"
#include "core/util/errors.hpp"
#include "engine/timing.hpp"

namespace ddpbench {
namespace {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

std::set<ActivityType> activities(const c10::Device& device) {
  std::set<ActivityType> a{ActivityType::CPU};
  if (device.is_cuda()) a.insert(ActivityType::CUDA);
  return a;
}

// Runs `body` under the Kineto profiler and saves the trace; throws c10::Error where the
// linked torch was built without Kineto (its ProfilerResult::save refuses).
void kineto_trace(const std::function<void()>& body, const std::string& path, const c10::Device& device) {
  const ProfilerConfig config(ProfilerState::KINETO);
  prof::prepareProfiler(config, activities(device));
  prof::enableProfiler(config, activities(device));
  try {
    body();
    synchronize(device);
  } catch (...) {
    (void)prof::disableProfiler();
    throw;
  }
  prof::disableProfiler()->save(path);
}

// Whether Kineto traces can be written with this torch: one trial on an empty body.
bool kineto_works(const c10::Device& device) {
  static std::optional<bool> works;
  if (works) return *works;
  char tmpl[] = "/tmp/ddpbench-kineto-probe-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return *(works = false);
  ::close(fd);
  try {
    kineto_trace([] {}, tmpl, device);
    works = true;
  } catch (const std::exception&) {
    works = false;
  }
  std::remove(tmpl);
  return *works;
}

}  // namespace

std::string trace_steps(const std::function<void()>& step, int iters, const std::string& path,
                        const c10::Device& device) {
  const auto body = [&] {
    for (int i = 0; i < iters; ++i) step();
  };
  // The profiler writes a temporary file of its own (mkstemp: a link planted at `path` is
  // never followed), checked whole before it replaces `path` through the one writer path:
  // torch's trace writers do not report a failed write (a full disk leaves a truncated file).
  const std::string tmp = temp_file_next_to(path);
  std::string profiler;
  try {
    if (kineto_works(device)) {
      kineto_trace(body, tmp, device);
      profiler = "kineto";
    } else {
#ifdef DDPBENCH_HAVE_LEGACY_PROFILER
      {
        // Writes the trace when it goes out of scope.
        prof::RecordProfile guard(tmp);
        body();
        synchronize(device);
      }
      profiler = "legacy";
#else
      throw UsageError(
          "--profile: this ddpbench is linked with a torch without Kineto and without the legacy profiler; "
          "drop --profile");
#endif
    }
    if (!nlohmann::json::accept(read_text_file(tmp)))
      throw std::runtime_error(fmt::format(
          "the profiler's trace for '{}' is empty or not whole JSON (is the disk full?); free space and run again",
          path));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  commit_file(tmp, path);
  return profiler;
}

}  // namespace ddpbench
