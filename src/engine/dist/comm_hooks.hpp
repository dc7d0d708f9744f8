// DDP communication hooks (`--comm-hook`): C++ counterparts of PyTorch's
// torch/distributed/algorithms/ddp_comm_hooks (default_hooks.py, powerSGD_hook.py) plus
// hierarchical allreduce and top-k sparsification, each a c10d::CommHookInterface that
// c10d::Reducer::register_comm_hook takes in place of its built-in allreduce.
//
// Contract with the Reducer (torch/csrc/distributed/c10d/reducer.cpp): with a hook
// registered, the Reducer copies gradients into the bucket buffer undivided, calls
// runHook(bucket) when a bucket is ready, and at the end of backward waits for each
// future and copies the tensor it holds (here: the bucket buffer, updated in place)
// into the parameters' gradients. Every hook therefore divides by the world size itself.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/config/comm_hook_spec.hpp"
#include "engine/dist/process_group.hpp"

namespace ddpbench {

/// What a hook handed to collectives, cumulative since construction (the caller reads
/// and resets per step). Written from the hook's threads, hence atomic.
struct CommHookStats {
  /// Bytes of the input buffers this rank passed to collectives, after compression: for an
  /// allreduce the tensor's bytes, for an allgather / alltoall this rank's input bytes.
  /// Not the bytes the backend's algorithm moves on the network (a ring allreduce of B
  /// bytes sends 2(n-1)/n * B per rank). Formulas per hook: docs/METHODOLOGY.md,
  /// "Communication hooks".
  std::atomic<long long> wire_bytes{0};
  /// Buckets the hook was run on.
  std::atomic<long long> buckets{0};
  /// Set once by make_comm_hook before the hook exists, read-only afterwards: "" or a
  /// one-line caveat for the result row, e.g. bf16 on a Gloo without bfloat16 collectives.
  std::string note;
};

/// Everything a hook needs besides its spec.
struct CommHookContext {
  c10::intrusive_ptr<c10d::ProcessGroup> pg;  ///< the DDP group
  c10::intrusive_ptr<c10d::Store> store;      ///< for sub-groups (hierarchical), used under a PrefixStore
  std::vector<std::string> hosts;             ///< host of each rank of pg, in group rank order (hierarchical)
  BackendKind backend = BackendKind::kGloo;
  at::Device device{at::kCPU};                ///< the rank's device (bucket tensors live there)
  std::chrono::milliseconds timeout{300000};  ///< bound on every wait for a collective
  /// Prefix of the sub-groups' store keys; a count of hierarchical hooks built before,
  /// agreed on by the group, is appended, so hooks built one after another (sweep rows,
  /// sub-groups) never share keys.
  std::string group_name = "ddp";
};

/// The hook for `spec`, or nullptr for kind "none" (the Reducer's built-in allreduce).
/// Construction is collective over ctx.pg for "hierarchical" (every rank builds the
/// per-node sub-groups together, bounded by ctx.timeout) and for "bf16" on Gloo (one
/// 1-element bfloat16 allreduce tells whether the linked Gloo has bfloat16 collectives);
/// call it on all ranks in the same order.
///  - allreduce: bucket / world, allreduce (default_hooks.allreduce_hook).
///  - fp16, bf16: bucket cast to float16 / bfloat16 and divided by world, allreduced in
///    that type, copied back (fp16_compress_hook, bf16_compress_hook). Where Gloo has no
///    bfloat16 allreduce (torch 1.13) bf16 is emulated: the values are rounded to bfloat16
///    as Python does, but travel as float32 (stats->note says so).
///  - powersgd: PowerSGD (Vogels et al. 2019) as powerSGD_hook.py does it.
///  - hierarchical: reduce-scatter in the node, allreduce across nodes, all-gather in the node.
///  - topk: top-k sparsification with error feedback (Aji & Heafield 2017; Lin et al. 2018).
/// Multi-step hooks (powersgd, hierarchical, topk) run each bucket's chain of collectives
/// on one communication thread per hook, bucket after bucket: the order in which they
/// reach the process groups is then the same on every rank (see comm_hooks.cpp).
/// Throws UsageError for hierarchical when ctx.hosts does not match the group or the nodes
/// hold different numbers of ranks; c10::Error when a sub-group cannot be built in time.
std::unique_ptr<c10d::CommHookInterface> make_comm_hook(const CommHookSpec& spec, const CommHookContext& ctx,
                                                        std::shared_ptr<CommHookStats> stats);

/// The per-node layout the hierarchical hook uses: nodes in order of first appearance in
/// `hosts`, ranks within a node in rank order. Throws UsageError when nodes hold
/// different numbers of ranks.
struct NodeLayout {
  int nodes = 1;                          ///< number of distinct hosts
  int ranks_per_node = 1;                 ///< L
  std::vector<int> node_of;               ///< node index of each rank
  std::vector<int> local_of;              ///< position of each rank within its node
  std::vector<std::vector<int>> members;  ///< ranks of each node, ascending
};
NodeLayout node_layout(const std::vector<std::string>& hosts);

}  // namespace ddpbench
