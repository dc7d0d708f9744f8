#include "engine/bench/row_kind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/config/comm_hook_spec.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/bench_table.hpp"
#include "core/util/errors.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/comm_hooks.hpp"
#include "engine/dist/sharded.hpp"
#include "engine/timing.hpp"

namespace ddpbench {
namespace {

// The self-check passes when every gradient is finite and the ranks agree within the
// limit; written so that NaN anywhere fails it.
bool check_passed(const std::optional<GradSpread>& s, double limit) {
  return s && std::isfinite(s->max_abs_grad) && s->max_abs_diff <= limit;
}

// A communication hook registered on a group's Reducer.
struct HookInstall {
  std::function<long long()> wire_bytes;  ///< cumulative bytes the hook passed to collectives; empty: no hook
  std::string note;                       ///< the hook's caveat for the row ("" when none)
};

// The host of every rank of `pg`, as every rank of it sees them (the hierarchical hook's
// node layout): each rank contributes a 52-bit hash of its host name at its own index of
// a SUM allreduce on `device` within `timeout` (8 bytes per rank; hashes are exact in a
// double). Collective over `pg`.
std::vector<std::string> group_hosts(const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const c10::Device& device,
                                     std::chrono::milliseconds timeout) {
  std::vector<double> ids(static_cast<size_t>(pg->getSize()), 0.0);
  ids[static_cast<size_t>(pg->getRank())] =
      static_cast<double>(std::hash<std::string>{}(host_name()) & ((1ULL << 52) - 1));
  ids = allreduce_values(pg, ids, c10d::ReduceOp::SUM, device, timeout);
  std::vector<std::string> hosts;
  for (double id : ids) hosts.push_back(fmt::format("host-{:.0f}", id));
  return hosts;
}

// Registers the variant's communication hook (engine/dist/comm_hooks.hpp) on `ddp`
// before its first forward. Collective over `pg` (the hierarchical hook builds per-node
// sub-groups). The hook runs with the job's backend, device and timeout (`job`). Nothing for "none".
HookInstall install_comm_hook(const JobEnv& job, const DdpVariant& v, DistributedDataParallel& ddp,
                              const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                              const c10::intrusive_ptr<c10d::Store>& store, const std::string& name) {
  const CommHookSpec spec = parse_comm_hook(v.comm_hook);
  if (spec.kind == "none") return {};
  CommHookContext ctx;
  ctx.pg = pg;
  ctx.store = store;
  if (spec.kind == "hierarchical") ctx.hosts = group_hosts(pg, job.device, job.timeout);
  ctx.backend = job.backend;
  ctx.device = job.device;
  ctx.timeout = job.timeout;
  ctx.group_name = name;
  auto stats = std::make_shared<CommHookStats>();
  ddp.register_comm_hook(make_comm_hook(spec, ctx, stats), spec.name());
  HookInstall out;
  out.note = stats->note;
  out.wire_bytes = [stats] { return stats->wire_bytes.load(); };
  return out;
}

// "bucket cap 5 MiB, comm hook fp16, grad accum 4": what sets a variant apart, for phases
// (the words of ConfigKey::knob_label, with the bucket cap always named).
std::string variant_words(const DdpVariant& v) {
  std::string out = fmt::format("bucket cap {} MiB", v.bucket_cap_mb);
  if (v.comm_hook != "none") out += ", comm hook " + v.comm_hook;
  if (v.grad_accum > 1) out += fmt::format(", grad accum {}", v.grad_accum);
  return out;
}

// DDP on the group's process group with one variant of the DDP knobs (bucket cap, comm
// hook, micro-steps). The self-check: the gradients are equal on every rank after the first
// synchronised step (max spread within grad_check_tol relative to max |grad|). Rank 0's row
// carries the check's values even when it fails; verify then throws on every rank.
class DdpRows : public RowKind {
 public:
  DdpRows(std::string model, const ModelInfo& info, size_t vi, size_t variants, DdpVariant variant,
          SelfCheckHook self_check_hook)
      : model_(std::move(model)),
        info_(info),
        vi_(vi),
        variants_(variants),
        variant_(std::move(variant)),
        self_check_hook_(std::move(self_check_hook)) {}

  std::string model() const override { return model_; }
  std::string name(int n) const override { return ddp_group(model_, n, vi_, variants_); }
  std::string label(int n) const override {
    return variants_ > 1 ? fmt::format("DDP group {}/ddp{} ({})", model_, n, variant_words(variant_))
                         : fmt::format("DDP group {}", name(n));
  }
  int grad_accum() const override { return variant_.grad_accum; }
  std::string profile_tag(int n) const override {
    return variants_ > 1 ? fmt::format("ddp{}-v{}", n, vi_) : fmt::format("ddp{}", n);
  }

  Trainer build(const RowGroup& g) override {
    spread_.reset();
    limit_ = g.env.cfg.grad_check_tol;  // as if max |grad| were at most 1, until the check runs
    const SweepEnv& env = g.env;
    auto module = build_model(env, model_);
    auto ddp = std::make_unique<DistributedDataParallel>(module, g.pg, ddp_options_of(env.cfg, variant_), env.device);
    hook_ = install_comm_hook(env, variant_, *ddp, g.pg, make_group_store(env.store, g.name), g.name);
    return make_trainer(env, module, std::move(ddp), batch_per_rank(env.cfg, g.n), variant_.grad_accum);
  }

  std::function<bool()> step_check(const RowGroup& g, Trainer& trainer) override {
    return [this, &g, &trainer]() -> bool {
      // A step skipped for fp16 overflow has inf/NaN gradients by design (identical on
      // every rank, since found_inf comes from the reduced gradients): check the next one.
      if (trainer.scaler() && !trainer.scaler()->last_step_finite()) return false;
      torch::NoGradGuard ng;
      const auto& params = trainer.ddp()->parameters();
      if (g.n > 1 && self_check_hook_) self_check_hook_(g.env.launch.rank, g.n, params);
      spread_ = grad_spread_across_ranks(params, g.pg, g.env.timeout);
      limit_ = g.env.cfg.grad_check_tol * std::max(1.0, spread_->max_abs_grad);
      return true;
    };
  }
  std::function<long long()> wire_bytes() const override { return hook_.wire_bytes; }

  void measure(const RowGroup& g, BenchResult& row, const Measured& m) override {
    const SweepEnv& env = g.env;
    DistributedDataParallel& ddp = *m.trainer.ddp();
    const GradSpread measured = spread_.value_or(GradSpread{});
    row.ddp_options = row_ddp_options(env.cfg, variant_);
    const auto buckets = ddp.bucket_sizes_bytes();
    row.checks.grad_max_abs_diff_across_ranks = measured.max_abs_diff;
    row.checks.grad_max_abs = measured.max_abs_grad;
    row.checks.grad_check_limit = limit_;
    row.checks.grad_check_passed = check_passed(spread_, limit_);
    row.checks.grad_check_ran = spread_.has_value();
    row.checks.buckets_rebuilt = ddp.buckets_rebuilt();
    row.checks.bucket_sizes_bytes = std::vector<long long>(buckets.begin(), buckets.end());
    if (!hook_.note.empty()) row.telemetry.comm_hook_note = hook_.note;
    annotate(env, info_, row, m.trainer, m.series);
    // What DDP reduces: every bucket once per optimizer step (the gradients of the
    // trainable parameters). Steps per epoch at this group's global batch.
    long long per_step = 0;
    for (auto b : buckets) per_step += b;
    const long long examples = row.global_batch * variant_.grad_accum;
    const long long steps = (env.cfg.dataset_size + examples - 1) / examples;
    RowCommunication& c = row.communication;
    c.trainable_parameters = info_.trainable_parameters;
    c.buckets = static_cast<long long>(buckets.size());
    c.bucket_sizes_bytes = std::vector<long long>(buckets.begin(), buckets.end());
    c.allreduce_bytes_per_step = per_step;
    c.dataset_size = env.cfg.dataset_size;
    c.steps_per_epoch = steps;
    c.allreduce_bytes_per_epoch = per_step * steps;
    // Without a hook's count, the Reducer's allreduce of every bucket.
    c.wire_bytes_per_step = m.stats.front().wire_bytes_per_step.value_or(static_cast<double>(per_step));
    // The bandwidth the gradient allreduce achieved: its bytes over the Reducer's
    // communication span (first bucket launched .. last finished), busbw as nccl-tests.
    if (g.n > 1) {
      const double comm_s = row.breakdown.mean(Phase::backward_comm).value_or(0.0);
      if (comm_s > 0) {
        const double algbw = static_cast<double>(per_step) / comm_s / 1e9;
        c.effective_algbw_gbps = algbw;
        c.effective_busbw_gbps = algbw * 2.0 * (g.n - 1) / g.n;
      }
    }
  }

  void verify(const RowGroup& g) const override {
    if (!spread_)
      throw SelfCheckError(
          fmt::format("{} on {} ranks: every step's fp16 gradients overflowed, so the self-check never "
                      "ran; the loss scaler did not recover",
                      model_, g.n));
    if (!check_passed(spread_, limit_))
      throw SelfCheckError(fmt::format(
          "{} on {} ranks{}: gradients differ across ranks by {:.3g} after the first DDP step (limit {:.3g}); "
          "the allreduce is not averaging, so no timing of this group is valid",
          model_, g.n, variants_ > 1 ? " (" + variant_words(variant_) + ")" : "", spread_->max_abs_diff, limit_));
  }

 private:
  std::string model_;
  ModelInfo info_;
  size_t vi_, variants_;  // the variant's index among `variants_` (several: names and files say which)
  DdpVariant variant_;
  SelfCheckHook self_check_hook_;
  // This group's:
  HookInstall hook_;
  std::optional<GradSpread> spread_;  // set once the self-check ran
  double limit_ = 0;
};

// --strategy zero2|fsdp (engine/dist/sharded.hpp) on the group's process group. The
// self-check: the parameters are equal on every rank after the first step (max spread over
// ranks within grad_check_tol relative to max |p|).
class ShardedRows : public RowKind {
 public:
  ShardedRows(std::string model, const ModelInfo& info, std::string strategy)
      : model_(std::move(model)), info_(info), strategy_(std::move(strategy)) {}

  std::string model() const override { return model_; }
  std::string name(int n) const override { return sharded_group(model_, strategy_, n); }
  std::string label(int n) const override { return fmt::format("{} group {}", strategy_, name(n)); }

  Trainer build(const RowGroup& g) override {
    spread_.reset();
    max_abs_ = 0;
    limit_ = g.env.cfg.grad_check_tol;  // as if max |p| were at most 1, until the check runs
    const SweepEnv& env = g.env;
    auto module = build_model(env, model_);
    Trainer trainer = make_trainer(env, module, nullptr, batch_per_rank(env.cfg, g.n), 1);
    ShardedOptions so;
    so.bucket_cap_bytes = static_cast<int64_t>(env.cfg.bucket_caps_mb.front() * 1024 * 1024);  // DDP's MiB
    so.cpu_offload = strategy_ == "fsdp" && env.cfg.cpu_offload;
    trainer.set_sharded(std::make_unique<ShardedDataParallel>(module, g.pg, strategy_, trainer_optimizer(*module),
                                                              env.device, env.timeout, so));
    sharded_ = trainer.sharded();
    return trainer;
  }

  std::function<bool()> step_check(const RowGroup& g, Trainer&) override {
    return [this, &g]() -> bool {
      torch::NoGradGuard ng;
      spread_ = sharded_->parameter_spread_across_ranks();
      for (const auto& p : sharded_->full_parameters()) max_abs_ = std::max(max_abs_, p.abs().max().item<double>());
      limit_ = g.env.cfg.grad_check_tol * std::max(1.0, max_abs_);
      return true;
    };
  }
  std::function<long long()> wire_bytes() const override {
    ShardedDataParallel* s = sharded_;
    return [s] { return s->wire_bytes(); };
  }

  void measure(const RowGroup& g, BenchResult& row, const Measured& m) override {
    row.strategy = strategy_;
    row.cpu_offload = strategy_ == "fsdp" && g.env.cfg.cpu_offload;
    row.checks.param_max_abs_diff_across_ranks = spread_.value_or(0.0);
    row.checks.param_max_abs = max_abs_;
    row.checks.param_check_limit = limit_;
    row.checks.param_check_passed = spread_ && *spread_ <= limit_;
    row.checks.param_check_ran = spread_.has_value();
    annotate(g.env, info_, row, m.trainer, m.series);
    row.communication = sharded_->communication().get<RowCommunication>();
    row.communication.trainable_parameters = info_.trainable_parameters;
    row.communication.wire_bytes_per_step = m.stats.front().wire_bytes_per_step;
  }

  void verify(const RowGroup& g) const override {
    if (!spread_ || *spread_ > limit_)
      throw SelfCheckError(
          fmt::format("{} on {} ranks ({}): parameters differ across ranks by {:.3g} after the first "
                      "step (limit {:.3g}); the sharded step is not consistent",
                      model_, g.n, strategy_, spread_.value_or(NAN), limit_));
  }

 private:
  std::string model_;
  ModelInfo info_;
  std::string strategy_;
  // This group's (the trainer owns the strategy):
  ShardedDataParallel* sharded_ = nullptr;
  std::optional<double> spread_;
  double max_abs_ = 0, limit_ = 0;
};

// `run --mode inference`: each rank runs forward passes of its own batch (Trainer::infer:
// no_grad, eval mode, autocast), all at the same time, with no DDP and no communication
// while they measure; the group's process group only starts them together and gathers
// the samples. The row: throughput over the group, p50/p95 of the per-batch forward time,
// every rank's peak memory.
class InferenceRows : public RowKind {
 public:
  InferenceRows(std::string model, const ModelInfo& info) : model_(std::move(model)), info_(info) {}

  std::string model() const override { return model_; }
  std::string name(int n) const override { return inference_group(model_, n); }
  std::string label(int n) const override { return fmt::format("inference group {}", name(n)); }
  bool distributed() const override { return false; }
  bool lockstep() const override { return false; }

  Trainer build(const RowGroup& g) override {
    return make_trainer(g.env, build_model(g.env, model_), nullptr, batch_per_rank(g.env.cfg, g.n), 1);
  }

  void measure(const RowGroup& g, BenchResult& row, const Measured&) override {
    row.mode = "inference";
    row.label = "infer " + group_label(row.nodes, g.n, g.env.device.is_cuda() ? 'G' : 'C');
    annotate_tokens(info_, row);  // a language model's tokens/s (rank 0's info; the row is rank 0's)
  }

 private:
  std::string model_;
  ModelInfo info_;
};

}  // namespace

void emit_kept_rows(int rank, const std::map<std::string, std::vector<BenchResult>>& kept_rows,
                    const std::string& group, const RowCallback& emit) {
  if (rank != 0) return;
  if (const auto it = kept_rows.find(group); it != kept_rows.end())
    for (const auto& row : it->second) emit(row);
}

void run_row_group(const SweepEnv& env, RowKind& kind, int n, const RowCallback& emit) {
  const std::string name = kind.name(n);
  const std::string label = kind.label(n);
  const int rank = env.launch.rank;
  if (env.done_groups.count(name)) {  // run --resume: measured by the stopped run
    emit_kept_rows(rank, env.kept_rows, name, emit);
    return;
  }
  run_group(env, name, label, n, [&](c10::intrusive_ptr<c10d::ProcessGroup>& pg, GroupGate& gate) {
    const RowGroup g{env, n, name, pg};
    {
      release_free_host_memory(env.device);
      reset_peak_memory(env.device);
      const long long batch = batch_per_rank(env.cfg, n);
      Trainer trainer = kind.build(g);
      if (!kind.lockstep()) {
        Deadline d("every rank of " + name + ", starting together", env.timeout);
        barrier(pg, env.device, env.timeout);
      }
      // Out of lockstep no collective runs inside the series: each rank's --iters auto or
      // --duration decision is its own, and the gather below pads to the longest series.
      const Series series =
          run_series(env, trainer, rank == 0 ? &gate : nullptr, kind.step_check(g, trainer),
                     kind.lockstep() ? pg : c10::intrusive_ptr<c10d::ProcessGroup>(), label, kind.wire_bytes());
      const std::string tag = kind.profile_tag(n);
      const std::optional<ProfileRecord> trace =
          tag.empty() ? std::nullopt : profile_series(env, trainer, kind.model(), tag, rank == 0 ? &gate : nullptr);
      set_phase("the result gather of " + label);
      // Before the gather: rank 0 reads it after.
      publish_telemetry(env.store, env.launch.rank, env.sampler.get(), "telemetry/" + name);
      // In lockstep every rank measured the same number of iterations (fixed, or agreed).
      const size_t mine = series.samples.size();
      const size_t iters = kind.lockstep()
                               ? mine
                               : static_cast<size_t>(allreduce_values(pg, {static_cast<double>(mine)},
                                                                      c10d::ReduceOp::MAX, env.device, env.timeout)
                                                         .front());
      RankStats own = rank_stats(env.device, env.launch.rank, env.cfg.duration_s, series);
      own.samples_s.resize(iters, NAN);
      const auto payload = own.pack();
      const auto gathered = gather_to_root(pg, payload, payload.size(), env.device, env.timeout);
      if (rank == 0) {
        std::vector<RankStats> stats;
        for (const auto& v : gathered) {
          RankStats r = RankStats::unpack(v, iters);
          r.samples_s.erase(
              std::remove_if(r.samples_s.begin(), r.samples_s.end(), [](double x) { return std::isnan(x); }),
              r.samples_s.end());
          stats.push_back(std::move(r));
        }
        BenchResult row = make_row(env, kind.model(), kind.distributed(), n, batch, kind.grad_accum(), stats,
                                   series.stopping, static_cast<int>(mine));
        kind.measure(g, row, Measured{trainer, series, stats});
        row.memory.model_state_bytes = trainer.model_state_bytes();
        {
          attach_telemetry(env.cfg, row, collect_telemetry(env, "telemetry/" + name, n));
        }
        add_row_warnings(env, row);
        row.telemetry.profile = trace;
        row.group = name;
        emit(row);
      }
    }
    destroy_process_group(pg);
    kind.verify(g);
  });
}

std::vector<std::unique_ptr<RowKind>> row_kinds(const RunConfig& cfg, const std::string& model, const ModelInfo& info,
                                                const SelfCheckHook& self_check_hook) {
  std::vector<std::unique_ptr<RowKind>> kinds;
  if (cfg.mode == "inference") {  // forward only, no DDP rows
    kinds.push_back(std::make_unique<InferenceRows>(model, info));
    return kinds;
  }
  if (runs_ddp_strategy(cfg)) {
    const auto variants = ddp_variants(cfg);
    for (size_t vi = 0; vi < variants.size(); ++vi)
      kinds.push_back(std::make_unique<DdpRows>(model, info, vi, variants.size(), variants[vi], self_check_hook));
  }
  for (const auto& strategy : sharded_strategies(cfg))
    kinds.push_back(std::make_unique<ShardedRows>(model, info, strategy));
  return kinds;
}

}  // namespace ddpbench
