#include "engine/bench/max_batch.hpp"

#include <ATen/Parallel.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <malloc.h>

#ifdef DDPBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "core/launch/process.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/row_memory.hpp"
#include "core/util/errors.hpp"
#include "engine/bench/measure.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/compat.hpp"
#include "engine/models/registry.hpp"
#include "engine/timing.hpp"
#include "engine/train/precision.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {

// A "Vm...:   123 kB" line of /proc/self/status, in bytes (core/result/row_memory.hpp); -1 when absent.
long long proc_status_bytes(const char* key) {
  return static_cast<long long>(read_proc_status_bytes("/proc/self/status", key).value_or(-1.0));
}

// Free bytes inside glibc's arenas (mallinfo's fordblks): mallinfo2 since glibc 2.33, the
// int-sized mallinfo before (clusters' older distributions; it wraps beyond 2 GiB).
long long malloc_free_bytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  return static_cast<long long>(::mallinfo2().fordblks);
#else
  return static_cast<long long>(static_cast<unsigned int>(::mallinfo().fordblks));
#endif
}

// Frees what the CUDA caching allocator holds in reserve (torch.cuda.empty_cache()), so
// the next trial starts from an empty cache and its peak is its own.
void empty_device_cache(const c10::Device& device) {
#ifdef DDPBENCH_WITH_CUDA
  if (device.is_cuda()) {
    synchronize(device);
    c10::cuda::CUDACachingAllocator::emptyCache();
  }
#else
  (void)device;
#endif
}

}  // namespace

MaxBatchSearch search_max_batch(long long start, long long bound,
                                const std::function<BatchTrial(long long batch)>& trial) {
  if (start < 1 || start > bound)
    throw std::invalid_argument(fmt::format("search_max_batch: start {} outside 1..bound {}", start, bound));
  MaxBatchSearch out;
  long long fit = 0;   // largest batch known to fit (0: none yet)
  long long fail = 0;  // smallest batch known not to fit (0: none yet)
  const auto attempt = [&](long long b) {
    BatchTrial t = trial(b);
    t.batch = b;
    out.trials.push_back(t);
    if (t.fits) fit = std::max(fit, b);
    else fail = fail == 0 ? b : std::min(fail, b);
    return t.fits;
  };
  // Grow: start, 2 start, 4 start, ... capped at the bound.
  for (long long b = start;;) {
    if (!attempt(b)) break;
    if (b == bound) {
      out.bound_reached = true;
      break;
    }
    b = b > bound / 2 ? bound : 2 * b;
  }
  // Bisect between the largest fit and the smallest failure.
  while (fail != 0 && fail - fit > 1) attempt(fit + (fail - fit) / 2);
  out.max_batch = fit;
  return out;
}

long long recommended_batch(long long max_batch, double margin) {
  if (max_batch <= 0) return 0;
  // The 1e-9 keeps a product that is whole in decimal (10 x 0.7) whole in binary.
  const auto b = static_cast<long long>(std::floor(static_cast<double>(max_batch) * (1.0 - margin) + 1e-9));
  return std::clamp(b, 1LL, max_batch);
}

DataLimit::DataLimit(long long bytes) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_DATA, &rl) != 0)
    throw std::runtime_error(fmt::format("getrlimit(RLIMIT_DATA): {}", std::strerror(errno)));
  saved_cur_ = rl.rlim_cur;
  ::malloc_trim(0);
  base_ = proc_status_bytes("VmData:");
  if (base_ < 0) throw std::runtime_error("VmData is missing from /proc/self/status: no data-size limit possible");
  // Free chunks glibc keeps inside the data size (heap holes, arenas' free space) could
  // serve the trial without growing it: they count against the budget.
  const auto free_inside = malloc_free_bytes();
  const unsigned long long want = static_cast<unsigned long long>(std::max(base_, base_ + bytes - free_inside));
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min<unsigned long long>(want, rl.rlim_max);
  if (::setrlimit(RLIMIT_DATA, &rl) != 0)
    throw std::runtime_error(fmt::format("setrlimit(RLIMIT_DATA): {}", std::strerror(errno)));
}

DataLimit::~DataLimit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_DATA, &rl) != 0) return;
  rl.rlim_cur = saved_cur_;
  (void)::setrlimit(RLIMIT_DATA, &rl);
}

void prepare_search(const TrialSetup& setup) {
  (void)apply_math_modes({setup.cfg.precision, setup.cfg.cudnn_benchmark});
  if (setup.device.is_cpu()) {
    // Start the intra-op threads now: their stacks (8 MiB each) belong to the process,
    // not to the first trial's budget.
    at::init_num_threads();
    at::parallel_for(0, std::max(1, at::get_num_threads()), 1, [](int64_t, int64_t) {});
  }
#ifdef DDPBENCH_WITH_CUDA
  if (setup.device.is_cuda()) {
    set_current_device(setup.device);
    // --memory-limit on a GPU: the caching allocator refuses beyond that share of the
    // device (torch.cuda.set_per_process_memory_fraction); 1.0 (the whole device) otherwise.
    double fraction = 1.0;
    if (setup.memory_limit_bytes) {
      size_t free_b = 0, total_b = 0;
      if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && total_b > 0)
        fraction = std::min(1.0, static_cast<double>(*setup.memory_limit_bytes) / static_cast<double>(total_b));
    }
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, setup.device.index());
  }
#endif
}

BatchTrial try_batch(const TrialSetup& setup, long long batch) {
  BatchTrial t;
  t.batch = batch;
  set_phase(fmt::format("the find-max-bs trial of {} at batch {}", setup.cfg.models.front(), batch));
  release_free_host_memory(setup.device);
  empty_device_cache(setup.device);
  reset_peak_memory(setup.device);
  const long long rss_before = setup.device.is_cpu() ? proc_status_bytes("VmRSS:") : 0;
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::optional<DataLimit> limit;
    if (setup.device.is_cpu() && setup.memory_limit_bytes) limit.emplace(*setup.memory_limit_bytes);
    try {
      // The trial's tensors live in this scope: an exception frees them on the way out.
      Trainer trainer(build_model(setup.cfg, setup.cfg.models.front(), setup.device), nullptr,
                      synthetic_batch_for(setup.cfg, setup.cfg.models.front(), batch, setup.device,
                                          static_cast<uint64_t>(setup.cfg.seed) + 1000),
                      setup.device, setup.cfg.precision, 1, zero_grad_set_to_none(setup.cfg));
      for (int s = 0; s < setup.steps; ++s) trainer.step();
      synchronize(setup.device);
      t.fits = true;
    } catch (const std::exception& e) {
      // Under the CPU data-size limit, oneDNN's failure to create a primitive is its allocation
      // failing (torch 2.x's oneDNN allocates primitives' scratchpads itself): out of memory too.
      if (!compat::is_out_of_memory(e) && !(limit && compat::is_onednn_primitive_failure(e))) throw;
      const auto* ce = dynamic_cast<const c10::Error*>(&e);
      t.error = out_of_memory_words(first_line(ce ? ce->what_without_backtrace() : e.what()));
    }
  }
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long long peak = peak_memory_bytes(setup.device);
  if (peak >= 0) t.peak_memory_bytes = setup.device.is_cpu() ? std::max(0LL, peak - rss_before) : peak;
  release_free_host_memory(setup.device);
  empty_device_cache(setup.device);
  return t;
}

// A hint for a trial's error that is not out of memory: BatchNorm refuses one value per
// channel (a batch of 1 where the last feature map is 1x1, e.g. ResNets at 32 px).
static std::string batch_hint(const std::string& error) {
  return error.find("more than 1 value per channel") != std::string::npos
             ? "; BatchNorm needs a batch of at least 2 at this image size: use --start 2 or a larger --image-size"
             : "";
}

bool trials_in_child(const TrialSetup& setup) { return setup.device.is_cpu() && setup.memory_limit_bytes.has_value(); }

std::string trial_line(const BatchTrial& t) {
  const nlohmann::json j{{"batch", t.batch},
                         {"fits", t.fits},
                         {"peak_memory_bytes", t.peak_memory_bytes},
                         {"seconds", t.seconds},
                         {"error", t.error}};
  return "DDPBENCH_TRIAL " + j.dump();
}

std::optional<BatchTrial> parse_trial_line(const std::string& out) {
  const std::string marker = "DDPBENCH_TRIAL ";
  const size_t at = out.rfind(marker);
  if (at == std::string::npos || (at > 0 && out[at - 1] != '\n')) return std::nullopt;
  const size_t end = out.find('\n', at);
  try {
    const auto j = nlohmann::json::parse(
        out.substr(at + marker.size(), end == std::string::npos ? end : end - at - marker.size()));
    BatchTrial t;
    t.batch = j.at("batch").get<long long>();
    t.fits = j.at("fits").get<bool>();
    t.peak_memory_bytes = j.at("peak_memory_bytes").get<long long>();
    t.seconds = j.at("seconds").get<double>();
    t.error = j.at("error").get<std::string>();
    return t;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

BatchTrial try_batch_in_child(const TrialSetup& setup, long long batch) {
  const RunConfig& c = setup.cfg;
  // /proc/self/exe, not its target: a rebuilt binary leaves the search running the same one.
  std::vector<std::string> argv{"/proc/self/exe", "find-max-bs",
                                "--trial-child",  std::to_string(batch),
                                "--model",        c.models.front(),
                                "--image-size",   std::to_string(c.image_size),
                                "--num-classes",  std::to_string(c.num_classes),
                                "--precision",    c.precision,
                                "--seed",         std::to_string(c.seed),
                                "--device",       "cpu",
                                "--steps",        std::to_string(setup.steps),
                                "--seq-len",      std::to_string(c.seq_len),
                                "--model-layers", std::to_string(c.model_layers),
                                "--model-width",  std::to_string(c.model_width)};
  if (setup.memory_limit_bytes) {
    argv.push_back("--memory-limit");
    argv.push_back(std::to_string(*setup.memory_limit_bytes));
  }
  if (c.channels_last) argv.push_back("--channels-last");
  if (!c.cudnn_benchmark) argv.push_back("--no-cudnn-benchmark");
  if (c.freeze_backbone) {
    argv.push_back("--freeze-backbone");
    argv.push_back("--head");
    argv.push_back(c.head);
  }
  ProcessOptions opts;
  opts.env["OMP_NUM_THREADS"] = std::to_string(at::get_num_threads());
  // The child runs in a process group of its own (the supervisor ends it as a group), so a
  // Ctrl-C at the terminal reaches only this process: the child ends with it (exit_with_parent,
  // core/launch/spawn), also when this process is killed.
  opts.env["DDPBENCH_LOCAL_SPAWNER"] = std::to_string(::getpid());
  set_phase(fmt::format("the find-max-bs trial of {} at batch {} (child process)", c.models.front(), batch));
  const auto t0 = std::chrono::steady_clock::now();
  const CaptureResult r = run_capture(argv, opts, setup.timeout_s);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.timed_out)
    throw std::runtime_error(fmt::format("the find-max-bs trial at batch {} ran past {:g} s (a hung child process)",
                                         batch, setup.timeout_s));
  if (r.status.signal != 0) {
    BatchTrial t;
    t.batch = batch;
    t.seconds = wall_s;
    t.error = fmt::format(
        "the trial process was {} under the memory limit: an allocation failed in a library "
        "that does not check it (oneDNN's primitive creation, for one)",
        r.status.describe());
    return t;
  }
  if (auto t = parse_trial_line(r.out); t && r.status.success()) return *t;
  std::string line = first_line(r.err.empty() ? r.out : r.err);
  if (const std::string p = "ddpbench: error: "; line.rfind(p, 0) == 0) line = line.substr(p.size());
  throw std::runtime_error(fmt::format("the find-max-bs trial at batch {} failed ({}): {}{}", batch,
                                       r.status.describe(), line, batch_hint(line)));
}

BatchTrial run_trial(const TrialSetup& setup, long long batch) {
  if (trials_in_child(setup)) return try_batch_in_child(setup, batch);
  try {
    return try_batch(setup, batch);
  } catch (const c10::Error& e) {
    const std::string line = first_line(e.what_without_backtrace());
    throw std::runtime_error(
        fmt::format("the find-max-bs trial at batch {} failed: {}{}", batch, line, batch_hint(line)));
  }
}

nlohmann::json max_batch_json(const TrialSetup& setup, long long start, long long bound, double margin,
                              const MaxBatchSearch& search) {
  const RunConfig& c = setup.cfg;
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : search.trials)
    trials.push_back({{"batch", t.batch},
                      {"fits", t.fits},
                      {"peak_memory_bytes", t.peak_memory_bytes},
                      {"seconds", t.seconds},
                      {"error", t.error}});
  const nlohmann::json null(nullptr);
  return {{"model", c.models.front()},
          {"device", setup.device.str()},
          {"intra_op_threads", at::get_num_threads()},
          {"precision", c.precision},
          {"image_size", c.image_size},
          {"channels_last", c.channels_last},
          {"num_classes", c.num_classes},
          {"freeze_backbone", c.freeze_backbone},
          {"steps", setup.steps},
          {"start", start},
          {"bound", bound},
          {"memory_limit_bytes", setup.memory_limit_bytes ? nlohmann::json(*setup.memory_limit_bytes) : null},
          {"limit_method", !setup.memory_limit_bytes ? "device memory"
                           : setup.device.is_cpu()   ? "RLIMIT_DATA: data size + limit, one child process per trial"
                                                     : "CUDA caching allocator memory fraction"},
          {"margin", margin},
          {"trials", trials},
          {"max_batch", search.max_batch},
          {"bound_reached", search.bound_reached},
          {"recommended_batch", recommended_batch(search.max_batch, margin)}};
}

nlohmann::json resolve_max_batch_over_ranks(const TrialSetup& setup, double margin, const LaunchInfo& li,
                                            const c10::intrusive_ptr<c10d::Store>& store,
                                            std::chrono::milliseconds timeout) {
  if (!trials_in_child(setup)) prepare_search(setup);
  // From 2: a batch of 1 tells nothing about DDP throughput, and BatchNorm refuses it where
  // the last feature map is 1x1; batch 1 is still tried when 2 does not fit.
  const MaxBatchSearch search =
      search_max_batch(kRunSearchStart, kDefaultMaxBatchBound, [&](long long b) { return run_trial(setup, b); });
  nlohmann::json mine = max_batch_json(setup, kRunSearchStart, kDefaultMaxBatchBound, margin, search);
  mine["rank"] = li.rank;
#ifdef DDPBENCH_WITH_CUDA
  if (setup.device.is_cuda()) c10::cuda::CUDACachingAllocator::setMemoryFraction(1.0, setup.device.index());
#endif
  set_phase("the exchange of the ranks' largest batches");
  const std::string key = "find-max-bs/" + std::to_string(li.rank);
  {
    const std::string text = mine.dump();
    store->set(key, std::vector<uint8_t>(text.begin(), text.end()));
  }
  std::vector<std::string> keys;
  for (int r = 0; r < li.world_size; ++r) keys.push_back("find-max-bs/" + std::to_string(r));
  {
    Deadline d("the store (rank 0), waiting for every rank's largest batch", timeout);
    store->wait(keys, timeout);
  }
  nlohmann::json per_rank = nlohmann::json::array();
  long long min_max = -1;
  std::vector<int> none;
  for (int r = 0; r < li.world_size; ++r) {
    const auto bytes = store->get(keys[static_cast<size_t>(r)]);
    nlohmann::json j = nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
    const long long m = j.at("max_batch").get<long long>();
    if (m == 0) none.push_back(r);
    min_max = min_max < 0 ? m : std::min(min_max, m);
    if (li.rank == 0) per_rank.push_back(std::move(j));
  }
  if (!none.empty())
    throw UsageError(
        fmt::format("--batch-size max: not even batch 1 of {} fits on rank(s) {}{}; use a smaller "
                    "--image-size, --precision bf16, or a larger --memory-limit",
                    setup.cfg.models.front(), fmt::join(none, ", "),
                    search.max_batch == 0 ? " (" + search.trials.back().error + ")" : std::string()));
  return {{"batch", recommended_batch(min_max, margin)},
          {"source", "find-max-bs"},
          {"max_batch_min_over_ranks", min_max},
          {"margin", margin},
          {"per_rank", per_rank}};
}

}  // namespace ddpbench
