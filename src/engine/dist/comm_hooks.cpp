#include "engine/dist/comm_hooks.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/DeviceGuard.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

#include "core/util/errors.hpp"
#include "engine/dist/collectives.hpp"

namespace ddpbench {

namespace {

using FuturePtr = c10::intrusive_ptr<c10::ivalue::Future>;
using PgPtr = c10::intrusive_ptr<c10d::ProcessGroup>;

/// powerSGD_hook.py's PowerSGDState defaults.
constexpr int64_t kMinCompressionRate = 2;
constexpr double kOrthogonalizationEpsilon = 0;  // PowerSGDState.orthogonalization_epsilon
constexpr uint64_t kPowerSgdRandomSeed = 0;      // PowerSGDState.random_seed

c10::TypePtr tensor_list_type() { return c10::ListType::create(c10::TensorType::get()); }

/// A future holding a list of tensors; CUDA-aware (events on the rank's device) on a GPU.
FuturePtr new_future(const at::Device& device) {
  std::vector<c10::Device> devices;
  if (device.is_cuda()) devices.push_back(device);
  return c10::make_intrusive<c10::ivalue::Future>(tensor_list_type(), devices);
}

c10::IValue as_tensor_list(const at::Tensor& t) { return c10::IValue(std::vector<at::Tensor>{t}); }

long long nbytes(const at::Tensor& t) { return static_cast<long long>(t.numel()) * t.element_size(); }

// ---------------------------------------------------------------- blocking collectives
// Used on a hook's communication thread; each counts its input bytes and waits at most
// `timeout`. Empty tensors are skipped (the same on every rank: shapes agree).

void allreduce_sync(const PgPtr& pg, const at::Tensor& t, CommHookStats& stats, std::chrono::milliseconds timeout) {
  if (t.numel() == 0) return;
  std::vector<at::Tensor> v{t};
  stats.wire_bytes += nbytes(t);
  wait_work(pg->allreduce(v), timeout);
}

/// Every rank's `in` (same shape on all ranks), in group rank order.
std::vector<at::Tensor> allgather_sync(const PgPtr& pg, const at::Tensor& in, CommHookStats& stats,
                                       std::chrono::milliseconds timeout) {
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < pg->getSize(); ++r) out[0].push_back(at::empty_like(in));
  std::vector<at::Tensor> inputs{in};
  stats.wire_bytes += nbytes(in);
  wait_work(pg->allgather(out, inputs), timeout);
  return out[0];
}

/// Equal-split all-to-all: chunk j of `in` goes to group rank j; `out`'s chunk j comes from j.
void alltoall_sync(const PgPtr& pg, at::Tensor& out, at::Tensor& in, CommHookStats& stats,
                   std::chrono::milliseconds timeout) {
  std::vector<int64_t> equal_splits;
  stats.wire_bytes += nbytes(in);
  wait_work(pg->alltoall_base(out, in, equal_splits, equal_splits), timeout);
}

// ---------------------------------------------------------------- hook plumbing

/// What a multi-step hook keeps of a GradBucket: the Reducer's GradBucket lives only for
/// the runHook call; its buffer and per-parameter views stay valid until the Reducer has
/// read the future's result.
struct BucketView {
  size_t index = 0;
  bool is_last = false;               ///< the last bucket of the iteration to be reduced
  at::Tensor buffer;                  ///< flat, the bucket's gradients (undivided)
  std::vector<at::Tensor> gradients;  ///< views of `buffer`, one per parameter, in its shape
};

class HookBase : public c10d::CommHookInterface {
 public:
  HookBase(CommHookContext ctx, std::shared_ptr<CommHookStats> stats)
      : ctx_(std::move(ctx)), stats_(std::move(stats)) {}

  /// The Reducer's parseCppCommHookResult, accepting a tensor or a list of tensors.
  at::Tensor parseHookResult(const c10::IValue& result) override {
    if (result.isTensor()) return result.toTensor();
    return result.toTensorVector().at(0);
  }

 protected:
  CommHookContext ctx_;
  std::shared_ptr<CommHookStats> stats_;
};

/// allreduce_hook (default_hooks.py): divide by the world size first (no overflow in low
/// precision), allreduce in place. The future is the collective's own.
class AllreduceHook final : public HookBase {
 public:
  using HookBase::HookBase;
  FuturePtr runHook(c10d::GradBucket& bucket) override {
    ++stats_->buckets;
    at::Tensor& buffer = bucket.getBufferRef();
    buffer.div_(ctx_.pg->getSize());
    std::vector<at::Tensor> v{buffer};
    stats_->wire_bytes += nbytes(buffer);
    return ctx_.pg->allreduce(v)->getFuture();
  }
};

/// fp16_compress_hook / bf16_compress_hook (default_hooks.py): the bucket cast to the
/// low-precision type and divided by the world size in that type, allreduced, copied back
/// into the bucket. `emulate_bf16`: the backend has no bfloat16 allreduce (Gloo in torch
/// 1.13), so the bfloat16 values travel as float32 (exact) and the sum is rounded to
/// bfloat16 once at the end, where a native bfloat16 allreduce rounds after each addition
/// (identical for 2 ranks).
class CompressHook final : public HookBase {
 public:
  CompressHook(CommHookContext ctx, std::shared_ptr<CommHookStats> stats, at::ScalarType type, bool emulate_bf16)
      : HookBase(std::move(ctx), std::move(stats)), type_(type), emulate_(emulate_bf16) {}

  FuturePtr runHook(c10d::GradBucket& bucket) override {
    ++stats_->buckets;
    at::Tensor buffer = bucket.getBufferRef();
    at::Tensor compressed = buffer.to(type_).div_(ctx_.pg->getSize());
    if (emulate_) compressed = compressed.to(at::kFloat);
    std::vector<at::Tensor> v{compressed};
    stats_->wire_bytes += nbytes(compressed);
    auto fut = ctx_.pg->allreduce(v)->getFuture();
    const bool emulate = emulate_;
    const auto type = type_;
    return fut->then(
        [buffer, compressed, emulate, type](c10::ivalue::Future& done) -> c10::IValue {
          (void)done.value();  // rethrows the collective's error
          // Decompress in place, as Python does, to keep the peak memory down.
          buffer.copy_(emulate ? compressed.to(type) : compressed);
          return as_tensor_list(buffer);
        },
        tensor_list_type());
  }

 private:
  at::ScalarType type_;
  bool emulate_;
};

/// One thread running jobs one after another, in submission order.
class SerialExecutor {
 public:
  SerialExecutor() : thread_([this] { loop(); }) {}
  ~SerialExecutor() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;

  void submit(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [this] { return stop_ || !jobs_.empty(); });
        if (stop_) return;  // the Reducer is gone: nobody waits for what is left
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members above exist
};

/// The work a multi-step hook does on one bucket, on the hook's communication thread.
class BucketAlgorithm {
 public:
  virtual ~BucketAlgorithm() = default;
  /// Reduces `b` (blocking, collectives bounded by the context's timeout) and returns the
  /// tensor the Reducer copies into the gradients: the bucket buffer, updated in place.
  virtual at::Tensor process(const BucketView& b) = 0;
};

/// A hook whose buckets each need a chain of collectives (powersgd, hierarchical, topk).
/// Python chains futures (fut.then(...)) and waits for the next collective inside each
/// callback; the callbacks then run on the backend's threads, and when two buckets are in
/// flight the order in which their later collectives reach the group differs between ranks
/// (Gloo pairs collectives by the order they are issued). Here each bucket's chain runs
/// on one communication thread per hook, bucket after bucket in the order the Reducer
/// hands them over (the same on every rank), and runHook returns a future that this thread
/// completes. Communication still overlaps the rest of the backward pass; the buckets'
/// chains do not overlap each other. After a failure (a timeout, a dead peer) every later
/// bucket's future fails at once instead of waiting out its own timeout.
class ChainedHook final : public HookBase {
 public:
  ChainedHook(CommHookContext ctx, std::shared_ptr<CommHookStats> stats, std::unique_ptr<BucketAlgorithm> algo)
      : HookBase(std::move(ctx), std::move(stats)), algo_(std::move(algo)) {}

  FuturePtr runHook(c10d::GradBucket& bucket) override {
    ++stats_->buckets;
    BucketView b;
    b.index = bucket.getIndex();
    b.is_last = bucket.isLast();
    b.buffer = bucket.getBufferRef();
    b.gradients = bucket.getGradients();
    auto fut = new_future(ctx_.device);
    exec_.submit([this, b = std::move(b), fut] {
      if (failed_) {
        fut->setError(std::make_exception_ptr(
            std::runtime_error("comm hook: an earlier bucket's communication failed on this rank")));
        return;
      }
      try {
        c10::OptionalDeviceGuard device_guard;
        if (ctx_.device.is_cuda()) device_guard.reset_device(ctx_.device);
        at::NoGradGuard no_grad;
        fut->markCompleted(as_tensor_list(algo_->process(b)));
      } catch (...) {
        failed_ = true;
        fut->setError(std::current_exception());
      }
    });
    return fut;
  }

 private:
  std::unique_ptr<BucketAlgorithm> algo_;
  bool failed_ = false;  // only touched on the executor's thread
  SerialExecutor exec_;  // declared last: joined before algo_ is destroyed
};

/// allreduce_hook's work, blocking: divide by the world size, allreduce.
at::Tensor vanilla_allreduce(const PgPtr& pg, const at::Tensor& buffer, CommHookStats& stats,
                             std::chrono::milliseconds timeout) {
  buffer.div_(pg->getSize());
  allreduce_sync(pg, buffer, stats, timeout);
  return buffer;
}

/// Python's state.iter bookkeeping: vanilla allreduce while iter < start_iter; iter grows
/// when the iteration's last bucket has been processed (PowerSGDState.maybe_increase_iter).
class IterCounter {
 public:
  explicit IterCounter(int start) : start_(start) {}
  bool compressing() const { return iter_ >= start_; }
  void after_bucket(bool is_last) {
    if (is_last) ++iter_;
  }

 private:
  int start_;
  long long iter_ = 0;
};

// ---------------------------------------------------------------- PowerSGD

/// Gram-Schmidt on the columns of `m` [rows, r] in place (powerSGD_hook.py's
/// _orthogonalize_gram_schmidt); with epsilon 0 a zero column becomes NaN, as in Python.
void orthogonalize_gram_schmidt(const at::Tensor& m, double epsilon) {
  const int64_t cols = m.size(1);
  for (int64_t i = 0; i < cols; ++i) {
    at::Tensor col = m.narrow(1, i, 1);
    if (epsilon == 0) col.div_(col.norm());
    else col.div_(col.norm() + epsilon);
    if (i + 1 < cols) {
      at::Tensor rest = m.narrow(1, i + 1, cols - i - 1);
      rest.sub_((col * rest).sum(0) * col);
    }
  }
}

/// powerSGD_hook.py's _orthogonalize: Gram-Schmidt for rank <= 2 or half types, else the
/// Q factor of a reduced QR decomposition.
void orthogonalize(const at::Tensor& m) {
  const auto dtype = m.scalar_type();
  if (m.size(1) <= 2 || dtype == at::kHalf || dtype == at::kBFloat16) {
    orthogonalize_gram_schmidt(m, kOrthogonalizationEpsilon);
  } else {
    m.copy_(std::get<0>(at::linalg_qr(m, "reduced")));
  }
}

/// powerSGD_hook (Vogels, Karimireddy and Jaggi, "PowerSGD: Practical Low-Rank Gradient
/// Compression for Distributed Optimization", NeurIPS 2019), step for step as
/// torch/distributed/algorithms/ddp_comm_hooks/powerSGD_hook.py does it, per bucket:
///  0. iterations < start_iter: vanilla allreduce;
///  1. error feedback: add the bucket's residual from the previous step, keep a copy;
///  2. each gradient viewed as a matrix [shape[0], rest]; it is compressed when
///     (n + m) * r * min_compression_rate < n * m (r = min(n, m, rank)), else (vectors,
///     small matrices) allreduced uncompressed, all such tensors in one buffer;
///  3. Q [m, r] is reused from the previous step (warm start) and orthogonalized, or drawn
///     from N(0, 1) with a seed the same on every rank and different per draw;
///  4. P = M Q; allreduce(uncompressed) / world; allreduce(P); orthogonalize P;
///     Q = M^T P; allreduce(Q) / world; M = P Q^T;
///  5. residual = input copy - result (error feedback).
/// State (residuals, P and Q memory) is kept per bucket index.
class PowerSgd final : public BucketAlgorithm {
 public:
  PowerSgd(const CommHookSpec& spec, PgPtr pg, std::shared_ptr<CommHookStats> stats, std::chrono::milliseconds timeout)
      : rank_(spec.powersgd_rank),
        error_feedback_(spec.error_feedback),
        warm_start_(spec.warm_start),
        iter_(spec.start_iter),
        pg_(std::move(pg)),
        stats_(std::move(stats)),
        timeout_(timeout),
        rng_(kPowerSgdRandomSeed) {}

  at::Tensor process(const BucketView& b) override {
    const at::Tensor& input = b.buffer;
    if (!iter_.compressing()) {
      iter_.after_bucket(b.is_last);
      return vanilla_allreduce(pg_, input, *stats_, timeout_);
    }
    const int world = pg_->getSize();
    const size_t idx = b.index;

    at::Tensor input_copy;
    if (error_feedback_) {
      auto it = error_.find(idx);
      if (it != error_.end()) input.add_(it->second);
      else error_[idx] = at::zeros_like(input);
      input_copy = input.clone();
    }

    // Step I: which tensors to compress.
    std::vector<at::Tensor> to_compress, uncompressed;
    std::vector<int64_t> ranks;
    int64_t total_p = 0, total_q = 0;
    for (const auto& t : b.gradients) {
      if (t.dim() == 0) {
        uncompressed.push_back(t);
        continue;
      }
      at::Tensor matrix = t.view({t.size(0), -1});
      const int64_t n = matrix.size(0), m = matrix.size(1);
      const int64_t r = std::min<int64_t>({n, m, rank_});
      if ((n + m) * r * kMinCompressionRate < n * m) {
        to_compress.push_back(matrix);
        ranks.push_back(r);
        total_p += n * r;
        total_q += m * r;
      } else {
        uncompressed.push_back(t);
      }
    }

    // Step II: uncompressed tensors in one contiguous buffer.
    std::vector<at::Tensor> flat;
    for (const auto& t : uncompressed) flat.push_back(t.reshape({-1}));
    at::Tensor uncompressed_memory = flat.empty() ? at::empty({0}, input.options()) : at::cat(flat);

    // Step III: P and Q memory, reused across steps with warm start.
    bool randomize_q = false;
    if (!warm_start_ || p_memory_.count(idx) == 0) {
      randomize_q = true;
      p_memory_[idx] = at::empty({total_p}, input.options());
      q_memory_[idx] = at::empty({total_q}, input.options());
    }
    std::vector<at::Tensor> ps, qs;
    for (size_t i = 0, p_off = 0, q_off = 0; i < to_compress.size(); ++i) {
      const int64_t n = to_compress[i].size(0), m = to_compress[i].size(1), r = ranks[i];
      ps.push_back(p_memory_[idx].narrow(0, p_off, n * r).view({n, r}));
      qs.push_back(q_memory_[idx].narrow(0, q_off, m * r).view({m, r}));
      p_off += n * r;
      q_off += m * r;
    }
    if (!randomize_q) {
      for (auto& q : qs) orthogonalize(q);
    } else {
      // Python: torch.manual_seed(state.rng.randint(1_000_000_000)) in a forked RNG, then
      // randn on the CPU; here a private CPU generator with a seed drawn the same way on
      // every rank (the global generator is not touched).
      auto gen = at::detail::createCPUGenerator(std::uniform_int_distribution<uint64_t>(0, 999999999)(rng_));
      for (auto& q : qs) {
        q.copy_(at::randn(q.sizes(), gen, at::TensorOptions().dtype(at::kFloat)));
        orthogonalize(q);
      }
    }
    for (size_t i = 0; i < to_compress.size(); ++i) at::matmul_out(ps[i], to_compress[i], qs[i]);

    // Uncompressed tensors: allreduce, average, copy back.
    allreduce_sync(pg_, uncompressed_memory, *stats_, timeout_);
    uncompressed_memory.div_(world);
    for (size_t i = 0, off = 0; i < uncompressed.size(); ++i) {
      const int64_t len = uncompressed[i].numel();
      uncompressed[i].copy_(uncompressed_memory.narrow(0, off, len).view_as(uncompressed[i]));
      off += len;
    }

    // P: allreduce (no division: P is orthogonalized next), orthogonalize, Q = M^T P.
    allreduce_sync(pg_, p_memory_[idx], *stats_, timeout_);
    for (auto& p : ps) orthogonalize(p);
    for (size_t i = 0; i < to_compress.size(); ++i) at::matmul_out(qs[i], to_compress[i].t(), ps[i]);

    // Q: allreduce, average, decompress M = P Q^T into the bucket.
    allreduce_sync(pg_, q_memory_[idx], *stats_, timeout_);
    q_memory_[idx].div_(world);
    for (size_t i = 0; i < to_compress.size(); ++i) at::matmul_out(to_compress[i], ps[i], qs[i].t());

    if (error_feedback_) error_[idx] = input_copy - input;
    if (!warm_start_) {
      p_memory_.clear();
      q_memory_.clear();
    }
    iter_.after_bucket(b.is_last);
    return input;
  }

 private:
  int64_t rank_;
  bool error_feedback_, warm_start_;
  IterCounter iter_;
  PgPtr pg_;
  std::shared_ptr<CommHookStats> stats_;
  std::chrono::milliseconds timeout_;
  std::mt19937_64 rng_;
  std::map<size_t, at::Tensor> error_, p_memory_, q_memory_;
};

// ---------------------------------------------------------------- top-k

/// Top-k sparsification with error feedback (Aji and Heafield, "Sparse Communication for
/// Distributed Gradient Descent", EMNLP 2017; Lin et al., "Deep Gradient Compression",
/// ICLR 2018; Stich, Cordonnier and Jaggi, "Sparsified SGD with Memory", NeurIPS 2018).
/// Per bucket of N elements: acc = gradient + residual; the k = ceil(ratio * N) entries of
/// largest |acc| are sent as (values, int32 indices) with two allgathers; every rank
/// scatter-adds all ranks' entries into a zeroed bucket (in rank order: identical on every
/// rank) and divides by the world size; residual = acc with the sent entries zeroed.
/// Iterations < start_iter use vanilla allreduce, as PowerSGD does: the residual is kept
/// per bucket index and the buckets change when DDP rebuilds them after iteration 0.
class TopK final : public BucketAlgorithm {
 public:
  TopK(const CommHookSpec& spec, PgPtr pg, std::shared_ptr<CommHookStats> stats, std::chrono::milliseconds timeout)
      : ratio_(spec.topk_ratio),
        error_feedback_(spec.error_feedback),
        iter_(spec.start_iter),
        pg_(std::move(pg)),
        stats_(std::move(stats)),
        timeout_(timeout) {}

  at::Tensor process(const BucketView& b) override {
    const at::Tensor& acc = b.buffer;
    if (!iter_.compressing()) {
      iter_.after_bucket(b.is_last);
      return vanilla_allreduce(pg_, acc, *stats_, timeout_);
    }
    const int64_t n = acc.numel();
    if (n > std::numeric_limits<int32_t>::max())
      throw std::runtime_error("topk comm hook: a bucket of more than 2^31 elements; lower --bucket-cap-mb");
    if (error_feedback_) {
      auto it = residual_.find(b.index);
      if (it != residual_.end()) acc.add_(it->second);
    }
    const int64_t k = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(ratio_ * static_cast<double>(n))), 1, n);
    at::Tensor index = std::get<1>(at::topk(acc.abs(), k, 0, /*largest=*/true, /*sorted=*/false));
    at::Tensor values = acc.index_select(0, index);
    if (error_feedback_) residual_[b.index] = acc.clone().index_fill_(0, index, 0);

    const auto all_values = allgather_sync(pg_, values, *stats_, timeout_);
    const auto all_index = allgather_sync(pg_, index.to(at::kInt), *stats_, timeout_);
    acc.zero_();
    for (size_t r = 0; r < all_values.size(); ++r) acc.index_add_(0, all_index[r].to(at::kLong), all_values[r]);
    acc.div_(pg_->getSize());
    iter_.after_bucket(b.is_last);
    return acc;
  }

 private:
  double ratio_;
  bool error_feedback_;
  IterCounter iter_;
  PgPtr pg_;
  std::shared_ptr<CommHookStats> stats_;
  std::chrono::milliseconds timeout_;
  std::map<size_t, at::Tensor> residual_;
};

// ---------------------------------------------------------------- hierarchical

/// Hierarchical allreduce on per-node sub-groups (L ranks per node, M nodes), per bucket
/// of N elements, padded to L * c (c = ceil(N / L)):
///  1. reduce-scatter within the node: Gloo (torch 1.13) has no reduce_scatter, so it is an
///     equal-split all-to-all (alltoall_base: chunk j of every local rank goes to local
///     rank j) followed by a local sum of the L chunks received. Each rank sends the same
///     (L-1)/L * N elements a reduce-scatter sends; "allreduce + keep my slice" would send
///     twice that.
///  2. allreduce of the reduced chunk (c elements) across nodes, among the ranks with the
///     same position in their node;
///  3. all-gather of the chunks within the node; the first N elements back into the bucket.
/// Division by the world size happens first (allreduce_hook does the same). One node: steps
/// 1 and 3 on the DDP group itself; one rank per node: step 2 alone on the DDP group.
class Hierarchical final : public BucketAlgorithm {
 public:
  /// `owned`: groups built for this hook, destroyed with it (not the DDP group).
  Hierarchical(PgPtr intra, PgPtr cross, std::vector<PgPtr> owned, int world, std::shared_ptr<CommHookStats> stats,
               std::chrono::milliseconds timeout)
      : intra_(std::move(intra)),
        cross_(std::move(cross)),
        owned_(std::move(owned)),
        world_(world),
        stats_(std::move(stats)),
        timeout_(timeout) {}
  ~Hierarchical() override {
    intra_.reset();
    cross_.reset();
    for (auto& pg : owned_) destroy_process_group(pg);
  }

  at::Tensor process(const BucketView& b) override {
    const at::Tensor& buffer = b.buffer;
    buffer.div_(world_);
    if (!intra_) {  // one rank per node
      allreduce_sync(cross_, buffer, *stats_, timeout_);
      return buffer;
    }
    const int64_t local_size = intra_->getSize();
    const int64_t n = buffer.numel();
    const int64_t chunk = (n + local_size - 1) / local_size;
    at::Tensor padded = buffer;
    if (chunk * local_size != n) {
      padded = at::zeros({chunk * local_size}, buffer.options());
      padded.narrow(0, 0, n).copy_(buffer);
    }
    at::Tensor received = at::empty_like(padded);
    alltoall_sync(intra_, received, padded, *stats_, timeout_);
    at::Tensor mine = received.view({local_size, chunk}).sum(0);
    if (cross_) allreduce_sync(cross_, mine, *stats_, timeout_);
    const auto chunks = allgather_sync(intra_, mine, *stats_, timeout_);
    buffer.copy_(at::cat(chunks).narrow(0, 0, n));
    return buffer;
  }

 private:
  PgPtr intra_;  ///< this rank's node (null with one rank per node)
  PgPtr cross_;  ///< ranks at this rank's position in every node (null with one node)
  std::vector<PgPtr> owned_;
  int world_;
  std::shared_ptr<CommHookStats> stats_;
  std::chrono::milliseconds timeout_;
};

/// How many hierarchical hooks this process has built; it keeps the store keys of
/// successive hooks' sub-groups apart. Ranks of a group may have built different numbers
/// (a sweep builds hooks only on the ranks of each sub-group), so the group agrees on the
/// largest count first.
std::atomic<int> g_hierarchical_count{0};

std::unique_ptr<BucketAlgorithm> make_hierarchical(const CommHookContext& ctx,
                                                   const std::shared_ptr<CommHookStats>& stats) {
  const int world = ctx.pg->getSize(), rank = ctx.pg->getRank();
  if (static_cast<int>(ctx.hosts.size()) != world)
    throw UsageError(fmt::format("--comm-hook hierarchical: {} host names for {} ranks; every rank's host is needed",
                                 ctx.hosts.size(), world));
  if (!ctx.store) throw std::invalid_argument("hierarchical comm hook: CommHookContext.store is null");
  const NodeLayout lay = node_layout(ctx.hosts);
  const int generation = static_cast<int>(allreduce_values(ctx.pg, {static_cast<double>(g_hierarchical_count.load())},
                                                           c10d::ReduceOp::MAX, ctx.device, ctx.timeout)[0]);
  g_hierarchical_count = generation + 1;
  const std::string base = fmt::format("{}/hierarchical{}", ctx.group_name, generation);
  const int node = lay.node_of[rank], local = lay.local_of[rank];
  PgPtr intra, cross;
  std::vector<PgPtr> owned;
  if (lay.ranks_per_node > 1) {
    if (lay.nodes == 1) {
      intra = ctx.pg;
    } else {
      auto store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("{}/node{}/", base, node), ctx.store);
      intra = make_process_group(ctx.backend, store, local, lay.ranks_per_node, ctx.device, ctx.timeout);
      owned.push_back(intra);
    }
  }
  if (lay.nodes > 1) {
    if (lay.ranks_per_node == 1) {
      cross = ctx.pg;
    } else {
      auto store = c10::make_intrusive<c10d::PrefixStore>(fmt::format("{}/local{}/", base, local), ctx.store);
      cross = make_process_group(ctx.backend, store, node, lay.nodes, ctx.device, ctx.timeout);
      owned.push_back(cross);
    }
  }
  if (!intra && !cross) cross = ctx.pg;  // a single rank
  return std::make_unique<Hierarchical>(intra, cross, std::move(owned), world, stats, ctx.timeout);
}

/// Whether ctx.pg takes a bfloat16 allreduce: one 1-element allreduce, on every rank. Gloo
/// in torch 1.13 fails it on each rank alike before any data moves ("Invalid scalar type",
/// from the type switch of its collectives); any other failure is rethrown.
bool has_bf16_allreduce(const CommHookContext& ctx) {
  std::vector<at::Tensor> v{at::zeros({1}, at::TensorOptions().dtype(at::kBFloat16).device(ctx.device))};
  try {
    wait_work(ctx.pg->allreduce(v), ctx.timeout);
  } catch (const c10::Error& e) {
    const std::string msg = e.msg();
    if (msg.find("scalar type") != std::string::npos || msg.find("BFloat16") != std::string::npos) return false;
    throw;
  }
  return true;
}

}  // namespace

NodeLayout node_layout(const std::vector<std::string>& hosts) {
  NodeLayout lay;
  std::vector<std::string> names;
  for (size_t r = 0; r < hosts.size(); ++r) {
    const auto it = std::find(names.begin(), names.end(), hosts[r]);
    const int node = static_cast<int>(it - names.begin());
    if (it == names.end()) {
      names.push_back(hosts[r]);
      lay.members.emplace_back();
    }
    lay.node_of.push_back(node);
    lay.local_of.push_back(static_cast<int>(lay.members[node].size()));
    lay.members[node].push_back(static_cast<int>(r));
  }
  lay.nodes = static_cast<int>(names.size());
  lay.ranks_per_node = lay.members.empty() ? 0 : static_cast<int>(lay.members[0].size());
  for (size_t n = 0; n < names.size(); ++n) {
    if (static_cast<int>(lay.members[n].size()) != lay.ranks_per_node) {
      std::vector<std::string> counts;
      for (size_t i = 0; i < names.size(); ++i)
        counts.push_back(fmt::format("{}: {}", names[i], lay.members[i].size()));
      throw UsageError(
          fmt::format("--comm-hook hierarchical needs the same number of ranks on every node, got {}; "
                      "start as many ranks per node on each, or use another --comm-hook",
                      fmt::join(counts, ", ")));
    }
  }
  return lay;
}

std::unique_ptr<c10d::CommHookInterface> make_comm_hook(const CommHookSpec& spec, const CommHookContext& ctx,
                                                        std::shared_ptr<CommHookStats> stats) {
  if (spec.kind == "none") return nullptr;
  if (!ctx.pg) throw std::invalid_argument("make_comm_hook: CommHookContext.pg is null");
  if (!stats) stats = std::make_shared<CommHookStats>();
  if (spec.kind == "allreduce") return std::make_unique<AllreduceHook>(ctx, stats);
  if (spec.kind == "fp16") return std::make_unique<CompressHook>(ctx, stats, at::kHalf, false);
  if (spec.kind == "bf16") {
    const bool native = ctx.backend != BackendKind::kGloo || has_bf16_allreduce(ctx);
    if (!native)
      stats->note =
          "bf16: this Gloo has no bfloat16 allreduce; values rounded to bfloat16 as Python's "
          "bf16_compress_hook does, sent as float32 (4 bytes per element)";
    return std::make_unique<CompressHook>(ctx, stats, at::kBFloat16, !native);
  }
  if (spec.kind == "powersgd" || spec.kind == "topk") {
    const bool keeps_state = spec.error_feedback || (spec.kind == "powersgd" && spec.warm_start);
    if (keeps_state && spec.start_iter <= 1)
      throw std::invalid_argument(
          "comm hook: start_iter must be > 1 with error feedback or warm start (DDP rebuilds its buckets "
          "after iteration 0)");
    std::unique_ptr<BucketAlgorithm> algo;
    if (spec.kind == "powersgd") algo = std::make_unique<PowerSgd>(spec, ctx.pg, stats, ctx.timeout);
    else algo = std::make_unique<TopK>(spec, ctx.pg, stats, ctx.timeout);
    return std::make_unique<ChainedHook>(ctx, stats, std::move(algo));
  }
  if (spec.kind == "hierarchical") return std::make_unique<ChainedHook>(ctx, stats, make_hierarchical(ctx, stats));
  throw UsageError(fmt::format("--comm-hook '{}' is unknown", spec.kind));
}

}  // namespace ddpbench
