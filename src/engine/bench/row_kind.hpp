// The kinds of row a group of n ranks measures (DDP with one variant of its knobs, a sharded
// strategy, inference), each behind one small interface, and the one runner that measures
// any of them. The sweep picks the kinds of a model once (row_kinds) and hands each group
// to run_row_group; what differs between kinds is only what RowKind says.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/bench/measure.hpp"

namespace ddpbench {

/// One group of n ranks as a row kind sees it: the sweep's environment, the group's size,
/// its process group (ranks 0..n-1 of the job) and its name ("resnet18/ddp2": the store
/// prefix, the telemetry keys, the profiler files). `pg` is run_row_group's own reference,
/// not a copy, so destroy_process_group there drops the group's last reference (null after
/// it: RowKind::verify runs then).
struct RowGroup {
  const SweepEnv& env;
  int n = 0;
  std::string name;
  const c10::intrusive_ptr<c10d::ProcessGroup>& pg;
};

/// What a finished series left on rank 0, for RowKind::measure.
struct Measured {
  Trainer& trainer;
  const Series& series;                 ///< rank 0's own series
  const std::vector<RankStats>& stats;  ///< every rank's, in group rank order
};

/// One kind of row of one model. One instance serves every group size: build starts a group
/// afresh, and the kind keeps that group's state (its wrapper, its self-check's outcome)
/// until the next build. The runner calls, in order: build, the timed series with
/// step_check and wire_bytes, then on rank 0 make_row and measure, then on every rank of
/// the group verify.
class RowKind {
 public:
  virtual ~RowKind() = default;
  /// The model this kind trains (engine/models/registry name).
  virtual std::string model() const = 0;
  /// The group's name for n ranks ("resnet18/ddp2", "resnet18/zero2-2", "resnet18/infer2").
  virtual std::string name(int n) const = 0;
  /// The group in phases and progress lines ("DDP group resnet18/ddp2").
  virtual std::string label(int n) const = 0;
  /// Whether the row is distributed training (BenchResult::ddp), and its micro-steps per step.
  virtual bool distributed() const { return true; }
  virtual int grad_accum() const { return 1; }
  /// Whether the ranks step in lockstep (a collective in every step, so --iters auto and
  /// --duration decide over the group); false: each rank runs alone after a common start
  /// and the gather pads to the longest series.
  virtual bool lockstep() const { return true; }

  /// build: this rank's trainer for the group (model, wrapper, hooks), before any step.
  /// Collective over g.pg where the wrapper is.
  virtual Trainer build(const RowGroup& g) = 0;
  /// step: the self-check run after each step until it returns true (empty: none), on the
  /// trainer build returned.
  virtual std::function<bool()> step_check(const RowGroup& g, Trainer& trainer) { return {}; }
  /// step: the cumulative bytes a comm hook or strategy handed to collectives (empty: none).
  virtual std::function<long long()> wire_bytes() const { return {}; }
  /// The profiler file's tag after a measured series (--profile), e.g. "ddp2"; "" for none.
  virtual std::string profile_tag(int n) const { return ""; }
  /// measure: rank 0 fills this kind's sections of the row made from every rank's stats
  /// (checks, communication, compute, options, mode and label).
  virtual void measure(const RowGroup& g, BenchResult& row, const Measured& m) = 0;
  /// After the row went out and the group's process group is gone: throws SelfCheckError
  /// when the self-check failed (every rank of the group reached the same outcome).
  virtual void verify(const RowGroup& g) const {}
};

/// Measures `kind` on the first n ranks of the job (the others wait at the group's gate,
/// run_group): release and reset the memory peaks, build, start together when not in
/// lockstep, the timed series, the profiled steps, every rank's telemetry and stats to
/// rank 0, which makes the row, lets the kind measure, adds memory, telemetry and warnings
/// and passes it to `emit`; then the process group is destroyed and the kind verifies.
/// Collective over the job. Throws what the kind throws, or SelfCheckError from verify.
void run_row_group(const SweepEnv& env, RowKind& kind, int n, const RowCallback& emit);

/// `run --resume`: where `rank` (this rank of the job) is 0, emits the rows the stopped run
/// measured in benchmark group `group` (`kept_rows`: SweepEnv::kept_rows), unchanged; nothing
/// on the other ranks.
void emit_kept_rows(int rank, const std::map<std::string, std::vector<BenchResult>>& kept_rows,
                    const std::string& group, const RowCallback& emit);

/// The kinds of row `model` measures at every group size under `cfg`, in the sweep's order:
/// with --mode inference one inference kind; else one DDP kind per variant of the DDP knobs
/// (when the DDP strategy runs) then one per sharded strategy. `info`: the model's FLOPs
/// and parameters (rank 0); `self_check_hook`: the DDP self-check's test seam (may be empty).
std::vector<std::unique_ptr<RowKind>> row_kinds(const RunConfig& cfg, const std::string& model, const ModelInfo& info,
                                                const SelfCheckHook& self_check_hook);

}  // namespace ddpbench
