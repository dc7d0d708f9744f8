// Small collectives with explicit timeouts, and the gate that parks ranks outside
// a benchmark sub-group without letting a dead peer hang them.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ddpbench {

/// Waits for `work`, throwing c10::Error if it does not finish within `timeout`
/// or fails (e.g. a peer closed its connection).
void wait_work(const c10::intrusive_ptr<c10d::Work>& work, std::chrono::milliseconds timeout);

/// Element-wise reduction of `values` over all ranks of `pg` (SUM, MAX or MIN),
/// staged through a float64 tensor on `device`. Returns the reduced values on every rank.
std::vector<double> allreduce_values(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, std::vector<double> values,
                                     c10d::ReduceOp op, const at::Device& device, std::chrono::milliseconds timeout);

/// Gathers `len` doubles from every rank of `pg` to rank 0 of `pg` (shorter inputs are
/// zero-padded, longer ones truncated). Rank 0 gets size() vectors in rank order; the
/// other ranks get an empty result. Memory on rank 0: size() * len * 8 bytes.
std::vector<std::vector<double>> gather_to_root(const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                                const std::vector<double>& mine, size_t len, const at::Device& device,
                                                std::chrono::milliseconds timeout);

/// True when `e` says the backend lacks an operation ("ProcessGroupGloo does not support
/// reduce_scatter", "... no support ..."): the caller falls back to an emulation.
bool unsupported_by_backend(const c10::Error& e);

/// Reduce-scatter of `in` (a flat tensor of n equal chunks, n = pg->getSize()) into `out`
/// (one chunk, the caller's rank's) with `op` (SUM, PRODUCT, MAX, MIN). Uses the backend's
/// reduce_scatter; where the backend has none (Gloo in libtorch 1.13) `emulate` becomes true
/// and stays so: an all-to-all (alltoall_base) of the n chunks into `tmp` (allocated like
/// `in` when undefined), then the local reduction of the n received chunks in rank order.
/// Both put (n-1)/n of `in` on the wire per rank, as a ring reduce-scatter (nccl-tests
/// PERFORMANCE.md). Throws c10::Error on failure or after `timeout`.
void reduce_scatter_or_emulate(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, at::Tensor& out, const at::Tensor& in,
                               c10d::ReduceOp op, at::Tensor& tmp, bool& emulate, std::chrono::milliseconds timeout);

/// A reduce-scatter in flight (reduce_scatter_start): the work and the tensors it uses,
/// kept alive until reduce_scatter_finish.
struct PendingReduceScatter {
  c10::intrusive_ptr<c10d::Work> work;
  at::Tensor in, out, tmp;  ///< tmp: the emulation's receive buffer (undefined otherwise)
  c10d::ReduceOp op = c10d::ReduceOp::SUM;
  bool emulated = false;
  explicit operator bool() const { return static_cast<bool>(work); }
};

/// Starts reduce_scatter_or_emulate's collective without waiting for it: `out` holds the
/// result once reduce_scatter_finish returned. `emulate` as there; the emulation receives
/// into `tmp` when defined (shaped like `in`), else into a new buffer. Throws c10::Error
/// when the backend refuses the call.
PendingReduceScatter reduce_scatter_start(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const at::Tensor& out,
                                          const at::Tensor& in, c10d::ReduceOp op, bool& emulate,
                                          std::chrono::milliseconds timeout, const at::Tensor& tmp = {});

/// Waits for `p` (at most `timeout`, else c10::Error) and, when emulated, reduces the n
/// received chunks into `out`; then releases the buffers. No-op for an empty `p`.
void reduce_scatter_finish(PendingReduceScatter& p, std::chrono::milliseconds timeout);

/// All-gather in place: `out` holds n chunks of equal size in rank order (n =
/// pg->getSize()), this rank's chunk already filled; chunk j is broadcast from rank j into
/// the same place on every other rank, so nothing is allocated besides `out` (the emulation
/// for a backend without an in-place all-gather: Gloo in libtorch 1.13, whose list
/// all-gather stages the whole output in a buffer it allocates on its worker thread). Each
/// rank receives (n-1)/n of `out`, and n broadcasts send (n-1) chunks in all per chunk, as a
/// ring all-gather (nccl-tests PERFORMANCE.md); n collectives instead of one, so meant for
/// the few ranks a CPU emulation runs on. Returns the n works without waiting; `out` must
/// stay alive until they finished. Throws c10::Error when the backend refuses a call.
std::vector<c10::intrusive_ptr<c10d::Work>> allgather_in_place_start(const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                                                     const at::Tensor& out,
                                                                     std::chrono::milliseconds timeout);

/// Element-wise spread of `tensors` over the ranks of `pg`: every rank passes tensors of the
/// same shapes; returns {max over ranks, min over ranks}, each one flat float64 tensor of all
/// their elements concatenated (empty tensors when `tensors` is empty). Collective: two
/// allreduces (MAX, MIN). Used by the self-checks (gradients of DDP, parameters of the
/// sharded strategies).
std::pair<at::Tensor, at::Tensor> max_min_across_ranks(const std::vector<at::Tensor>& tensors,
                                                       const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                                                       std::chrono::milliseconds timeout);

/// Barrier on `pg` with a timeout (NCCL: on `device`).
void barrier(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const at::Device& device,
             std::chrono::milliseconds timeout);

/// Thrown by GroupGate::wait_done on a rank outside a group when the group's rank 0 marked it
/// failed: "benchmark group 'NAME' failed: REASON". That rank 0 reports REASON itself.
struct GroupFailedElsewhere : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Liveness protocol between a running sub-group and the ranks waiting outside it,
/// over the store (no collective can span a group and ranks outside it).
/// The sub-group's rank 0 calls beat() after every iteration and done() at the end,
/// or fail() with the reason when the group fails; outside ranks call wait_done(),
/// which returns after done(), and throws after fail() (acknowledging it first) or when
/// no beat arrived for `timeout` (a rank of the group died or hangs). fail() waits, for
/// at most `timeout` or 30 s, until the waiters acknowledged, so the reason reaches them
/// before rank 0 (which serves the store) exits.
/// Store traffic: one add per iteration from one rank; each outside rank polls every
/// `poll` with two small requests.
class GroupGate {
 public:
  /// The poll period for a job of `world_size` ranks: outside ranks poll the store that
  /// rank 0's process serves while rank 0 may be measuring, two small requests per poll, so
  /// at most about 2000 requests/s however large the job: world_size / 1000 s, within
  /// [0.5 s, 5 s] (0.5 s up to 500 ranks, 4 s at 4096).
  static std::chrono::milliseconds poll_for(int world_size);

  GroupGate(c10::intrusive_ptr<c10d::Store> store, std::string name, std::chrono::milliseconds timeout,
            std::chrono::milliseconds poll = std::chrono::milliseconds(500));
  void beat();
  void done();
  /// Marks the group failed and waits for `waiters` acknowledgements (bounded, see above).
  void fail(const std::string& reason, int waiters);
  /// Throws std::runtime_error naming the group when it failed or stalled longer than the
  /// timeout. Each poll runs under a Deadline: a store that stops answering (rank 0
  /// stopped) ends this process with one line (core/launch/watchdog.hpp).
  void wait_done();

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  std::string hb_key_, state_key_, ack_key_, name_;
  std::chrono::milliseconds timeout_, poll_;
};

}  // namespace ddpbench
