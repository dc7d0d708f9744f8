// `run --profile DIR`: Chrome/Perfetto traces of a few steps through libtorch's own profiler.
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <string>

namespace ddpbench {

/// Runs `step` `iters` times under libtorch's profiler and writes a Chrome trace
/// (chrome://tracing, ui.perfetto.dev) to `path`. Uses the Kineto profiler
/// (torch::autograd::profiler::enableProfiler / disableProfiler / ProfilerResult::save, CPU
/// and, on a GPU, CUDA activities) where the linked torch has Kineto, else the legacy profiler
/// (torch::autograd::profiler::RecordProfile: CPU operators only, one span per op). Which one
/// is decided once per process by a trial trace. The trace goes to a temporary file next to
/// `path` and replaces `path` only when it is whole JSON (core/result commit_file: a link or
/// special file at `path` is refused). Returns "kineto" or "legacy". Throws UsageError when
/// the linked torch has neither or `path` is not a regular file, std::runtime_error when the
/// trace cannot be written whole (a full disk). The steps are not timed: call it outside
/// measured iterations.
std::string trace_steps(const std::function<void()>& step, int iters, const std::string& path,
                        const c10::Device& device);

}  // namespace ddpbench
