// The `--comm-hook` values: which DDP communication hook replaces the Reducer's
// built-in allreduce, and its parameters. Torch-free; the hooks themselves are in
// engine/dist/comm_hooks.hpp.
#pragma once

#include <string>

namespace ddpbench {

/// One `--comm-hook` item, parsed. Defaults follow PyTorch's
/// torch/distributed/algorithms/ddp_comm_hooks (PowerSGDState) where it has them.
struct CommHookSpec {
  /// none | allreduce | fp16 | bf16 | powersgd | hierarchical | topk.
  /// "none" leaves the Reducer's built-in allreduce in place (no hook registered).
  std::string kind = "none";
  /// powersgd: matrix_approximation_rank ("powersgd:R"), 1..1024.
  int powersgd_rank = 1;
  /// topk: fraction of a bucket's elements each rank sends ("topk:RATIO"), in (0, 1].
  double topk_ratio = 0.01;
  /// powersgd and topk: plain allreduce for iterations 0 .. start_iter-1 (PowerSGDState's
  /// start_powerSGD_iter). Python requires > 1 with error feedback or warm start, because
  /// DDP rebuilds its buckets after iteration 0 and per-bucket state kept before that
  /// would no longer match the buckets.
  int start_iter = 2;
  /// powersgd, topk: add the previous step's compression error (residual) to the gradient
  /// before compressing. Off only for tests and ablations.
  bool error_feedback = true;
  /// powersgd: reuse Q from the previous step (PowerSGDState.warm_start).
  bool warm_start = true;

  /// Canonical text, recorded in a row's ddp_options.comm_hook: "none", "allreduce",
  /// "fp16", "bf16", "hierarchical", "powersgd:R" (R always written, "powersgd" gives
  /// "powersgd:1"), "topk:RATIO" (RATIO in the shortest form that reads back exactly,
  /// e.g. "topk:0.01").
  std::string name() const;
};

/// Parses one item of `--comm-hook` ("fp16", "powersgd:4", "topk:0.01"; case-sensitive,
/// no spaces). Throws UsageError for anything else, naming the value and the accepted
/// forms: "--comm-hook 'x' is unknown; use none, allreduce, fp16, bf16, powersgd[:RANK],
/// hierarchical or topk:RATIO", or a message about the out-of-range rank (1..1024) or
/// ratio ((0, 1]).
CommHookSpec parse_comm_hook(const std::string& text);

}  // namespace ddpbench
