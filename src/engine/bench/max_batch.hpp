// `ddpbench find-max-bs`: the largest batch per device that trains a few steps
// (forward + backward + optimizer) for a model and precision, found by growing the batch
// (doubling) and then bisecting between the last batch that fit and the first that ran
// out of memory (docs/METHODOLOGY.md, "Largest batch").
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config/run_config.hpp"
#include "core/launch/launch_env.hpp"

namespace ddpbench {

inline constexpr long long kDefaultMaxBatchBound = 65536;  ///< --max-batch: the search never tries more
inline constexpr double kDefaultBatchMargin = 0.1;         ///< --margin: fraction backed off from the maximum
inline constexpr int kDefaultSearchSteps = 3;              ///< --steps: training steps per trial
inline constexpr int kMaxSearchSteps = 1000;
inline constexpr long long kRunSearchStart = 2;  ///< `run --batch-size max` searches from batch 2

/// One trial: `steps` training steps at one batch size.
struct BatchTrial {
  long long batch = 0;
  bool fits = false;
  /// GPU: the caching allocator's peak allocated bytes during the trial (max_memory_allocated);
  /// CPU: the growth of the peak resident set (VmHWM) over the trial's start. -1: unknown.
  long long peak_memory_bytes = -1;
  double seconds = 0;  ///< wall time of the trial: model build, batch, steps (and the failure)
  std::string error;   ///< the allocator's words when it ran out of memory, else ""
};

/// The search's outcome.
struct MaxBatchSearch {
  std::vector<BatchTrial> trials;  ///< in the order tried
  long long max_batch = 0;         ///< largest batch that fit; 0 when none did
  bool bound_reached = false;      ///< max_batch is the --max-batch bound (larger ones untried)
};

/// The search itself, independent of what a trial does: tries `start`, doubling while
/// batches fit (never beyond `bound`), then bisects between the largest batch that fit and
/// the smallest that did not. When `start` itself does not fit, bisects between 0 and
/// `start`. Assumes fitting is monotonic in the batch (a batch fits when a larger one
/// does). From start 1 to a maximum M >= 1 it makes at most 2 * floor(log2 M) + 2 trials.
/// `trial(batch)` returns whether that batch fit (with its measurements).
/// Throws std::invalid_argument unless 1 <= start <= bound.
MaxBatchSearch search_max_batch(long long start, long long bound,
                                const std::function<BatchTrial(long long batch)>& trial);

/// The batch to use: floor(max_batch * (1 - margin)), at least 1 when max_batch >= 1
/// (0 when max_batch is 0). `margin` in [0, 1).
long long recommended_batch(long long max_batch, double margin);

/// What one trial runs: cfg.models.front() at cfg.image_size, cfg.num_classes,
/// cfg.precision, cfg.channels_last, cfg.freeze_backbone/head, seeded from cfg.seed,
/// on `device`, without DDP, `steps` optimizer steps per trial.
struct TrialSetup {
  RunConfig cfg;
  c10::Device device = c10::Device(c10::kCPU);
  int steps = kDefaultSearchSteps;
  /// CPU: bytes the trial may add to the process's data segment (RLIMIT_DATA, see
  /// DataLimit); GPU: the caching allocator's cap (setMemoryFraction of the device's total).
  /// nullopt: the device's own memory bounds the trial.
  std::optional<long long> memory_limit_bytes;
  double timeout_s = 600;  ///< a trial in a child process (trials_in_child) is ended after this long
};

/// Lowers the soft RLIMIT_DATA to the process's current data size (VmData) + `bytes`, less
/// the free bytes glibc already holds inside that size (mallinfo fordblks: the trial could
/// reuse them without growing it), for its lifetime, and restores the previous limit
/// afterwards. On Linux >= 4.7 RLIMIT_DATA counts brk and private writable mappings
/// (glibc's large allocations are mmaps), so an allocation past it fails and libtorch's CPU allocator throws its own
/// "can't allocate memory" c10::Error, as a GPU's allocator throws on a full device. The soft limit never rises above
/// the hard one. Throws std::runtime_error when the limit cannot be read or set.
class DataLimit {
 public:
  explicit DataLimit(long long bytes);
  ~DataLimit();
  DataLimit(const DataLimit&) = delete;
  DataLimit& operator=(const DataLimit&) = delete;
  long long base_bytes() const { return base_; }  ///< VmData when the limit was set

 private:
  unsigned long long saved_cur_ = 0;
  long long base_ = 0;
};

/// Whether trials run in a child process: on the CPU under a memory limit. There an
/// allocation that fails in a library that does not check it (oneDNN's primitive creation,
/// libtorch 1.13 here) crashes the process instead of throwing; a fresh process per trial
/// keeps the search going and starts every trial from the same clean heap.
bool trials_in_child(const TrialSetup& setup);

/// Runs setup.steps training steps at `batch` from a fresh model (as `ddpbench run`'s
/// no-DDP baseline builds it) and returns whether they fit. Out of memory (compat::
/// is_out_of_memory) is caught: everything the trial allocated is freed, the CUDA caching
/// allocator emptied, and the trial reported as not fitting with the allocator's words.
/// Any other error propagates.
BatchTrial try_batch(const TrialSetup& setup, long long batch);

/// `ddpbench find-max-bs --trial-child B ...` with setup's workload: the trial in a fresh
/// process of this executable (/proc/self/exe), OMP_NUM_THREADS as this process's intra-op
/// threads, ended after setup.timeout_s. The child prints "DDPBENCH_TRIAL <json>" (one
/// BatchTrial) and exits 0; a child that a signal killed under the limit did not fit (the
/// error names the signal). Throws std::runtime_error when the child fails otherwise (its
/// first error line) or runs past the timeout.
BatchTrial try_batch_in_child(const TrialSetup& setup, long long batch);

/// One trial where it belongs: try_batch_in_child when trials_in_child(setup), else try_batch.
BatchTrial run_trial(const TrialSetup& setup, long long batch);

/// The line a --trial-child process prints for `t`, and its inverse (nullopt when `out`
/// holds no such line).
std::string trial_line(const BatchTrial& t);
std::optional<BatchTrial> parse_trial_line(const std::string& out);

/// Sets the process up for a search on setup.device: the math modes of the precision,
/// the GPU memory cap (memory_limit_bytes on a GPU: setMemoryFraction of the device's
/// total), and on the CPU the intra-op threads started before any limit (their stacks are
/// the process's, not a trial's). Call once before the first in-process try_batch.
void prepare_search(const TrialSetup& setup);

/// The search as the JSON the result file holds under "max_batch" (docs/METHODOLOGY.md,
/// "Largest batch"):
/// {model, device, intra_op_threads (at::get_num_threads(): on the CPU the trials' thread
/// count, which moves the limit's edge), precision, image_size, channels_last, num_classes,
/// freeze_backbone, steps,
/// start, bound, memory_limit_bytes (null when none), limit_method, margin, trials[{batch,
/// fits, peak_memory_bytes, seconds, error}], max_batch, bound_reached, recommended_batch}.
nlohmann::json max_batch_json(const TrialSetup& setup, long long start, long long bound, double margin,
                              const MaxBatchSearch& search);

/// `run --batch-size max`: every rank searches on its own device (setup.device), from
/// kRunSearchStart up to kDefaultMaxBatchBound, then the
/// ranks agree through `store` on the minimum of their recommended batches (each rank
/// publishes its own under "find-max-bs/<rank>" and reads all; every read bounded by
/// `timeout`). Returns {batch (that minimum), per_rank: [rank's max_batch_json...] on
/// rank 0 only, margin}. Throws UsageError when no batch fits on some rank (naming it),
/// std::runtime_error when a rank does not answer within `timeout`.
nlohmann::json resolve_max_batch_over_ranks(const TrialSetup& setup, double margin, const LaunchInfo& li,
                                            const c10::intrusive_ptr<c10d::Store>& store,
                                            std::chrono::milliseconds timeout);

}  // namespace ddpbench
