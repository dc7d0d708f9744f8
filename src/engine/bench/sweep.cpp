#include "engine/bench/sweep.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "core/config/comm_hook_spec.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/bench_table.hpp"
#include "core/result/per_rank_detail.hpp"
#include "core/stats/burn_in.hpp"
#include "core/stats/gpu_peaks.hpp"
#include "core/stats/stats.hpp"
#include "core/stats/straggler.hpp"
#include "core/telemetry/telemetry.hpp"
#include "core/util/errors.hpp"
#include "engine/bench/time_to_loss.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/comm_hooks.hpp"
#include "engine/dist/ddp.hpp"
#include "engine/memory.hpp"
#include "engine/models/flops.hpp"
#include "engine/models/registry.hpp"
#include "engine/profile.hpp"
#include "engine/timing.hpp"
#include "engine/train/checkpoint.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {

// What one rank measured in a series, gathered to rank 0 after the samples as one vector of
// doubles: the samples (as many on every rank of a group), the breakdown, then the one-value
// fields in kRankScalars order (NaN where a value is absent), then with --duration the
// burn-in windows (as many on every rank since they depend on D alone). pack and unpack walk
// the same lists, so a new field is one member and one entry in kRankScalars.
struct RankStats {
  std::vector<double> samples_s;  // with --duration: every subsample_stride-th step (core/stats/burn_in)
  std::array<std::optional<double>, kNumBreakdownComponents> breakdown_s;  // kBreakdownComponents order, mean per step
  std::optional<double> peak_memory_bytes;
  std::optional<double> wire_bytes_per_step;  // what a comm hook handed to collectives, mean per step
  std::optional<double> steps_measured;       // --duration: measured steps before subsampling
  std::optional<double> subsample_stride;     // --duration: samples_s keeps every k-th of them
  std::optional<double> peak_allocated_bytes, peak_reserved_bytes, peak_rss_bytes;  // engine/memory
  std::optional<double> memory_reset_ok;   // 1: the peak window was reset before the series; 0: it failed
  std::vector<double> window_steps_per_s;  // --duration: optimizer steps per s per window (burn_in_windows(D))

  std::vector<double> pack() const;
  /// Throws std::runtime_error when `v` is shorter than `iters` samples and the fixed slots.
  static RankStats unpack(const std::vector<double>& v, size_t iters);
};

// The one-value fields of RankStats, in transport order.
constexpr std::optional<double> RankStats::*kRankScalars[] = {
    &RankStats::peak_memory_bytes, &RankStats::wire_bytes_per_step,  &RankStats::steps_measured,
    &RankStats::subsample_stride,  &RankStats::peak_allocated_bytes, &RankStats::peak_reserved_bytes,
    &RankStats::peak_rss_bytes,    &RankStats::memory_reset_ok};
// Slots after the samples and before the windows.
constexpr size_t kRankFixedSlots = std::tuple_size_v<decltype(RankStats::breakdown_s)> + std::size(kRankScalars);
static_assert(std::tuple_size_v<decltype(RankStats::breakdown_s)> == std::size(kBreakdownComponents),
              "one breakdown slot per component");

std::vector<double> RankStats::pack() const {
  std::vector<double> v(samples_s);
  v.reserve(samples_s.size() + kRankFixedSlots + window_steps_per_s.size());
  for (const auto& t : breakdown_s) v.push_back(t.value_or(NAN));
  for (const auto field : kRankScalars) v.push_back((this->*field).value_or(NAN));
  v.insert(v.end(), window_steps_per_s.begin(), window_steps_per_s.end());
  return v;
}

RankStats RankStats::unpack(const std::vector<double>& v, size_t iters) {
  if (v.size() < iters + kRankFixedSlots)
    throw std::runtime_error(
        fmt::format("a rank's measurements hold {} values, fewer than the {} samples and {} "
                    "fields every rank sends",
                    v.size(), iters, kRankFixedSlots));
  RankStats r;
  auto at = v.begin() + static_cast<std::ptrdiff_t>(iters);
  r.samples_s.assign(v.begin(), at);
  const auto opt = [](double x) { return std::isnan(x) ? std::nullopt : std::optional<double>(x); };
  for (auto& t : r.breakdown_s) t = opt(*at++);
  for (const auto field : kRankScalars) r.*field = opt(*at++);
  r.window_steps_per_s.assign(at, v.end());
  return r;
}

// A step's seconds per phase, indexed by Phase.
struct PhaseValues {
  std::array<double, kNumBreakdownComponents> v{};
  double& operator[](Phase p) { return v[static_cast<size_t>(p)]; }
};

// One measured step's components (seconds) from our marks and, under DDP, the Reducer's
// timers of its synchronised micro-step (docs/METHODOLOGY.md, "Where the time goes").
std::array<double, kNumBreakdownComponents> step_components(double step_s, const StepPhases& ph,
                                                            const std::optional<ReducerIterationTimes>& rt) {
  PhaseValues c;
  c[Phase::forward] = ph.forward_s;
  if (rt) {
    // The no_sync micro-steps' backward is compute alone; the synchronised one's compute is
    // the Reducer's kBackwardComputeStart..End.
    c[Phase::backward_compute] = ph.backward_s - ph.last_backward_s + rt->backward_compute_s;
    c[Phase::backward_comm] = rt->backward_comm_s;
    c[Phase::overlap] = std::clamp(rt->overlap_s, 0.0, rt->backward_comm_s);
    c[Phase::exposed_comm] = c[Phase::backward_comm] - c[Phase::overlap];
  } else {
    c[Phase::backward_compute] = ph.backward_s;
  }
  c[Phase::optimizer] = ph.optimizer_s;
  c[Phase::step] = step_s;
  c[Phase::other] =
      step_s - c[Phase::forward] - c[Phase::backward_compute] - c[Phase::exposed_comm] - c[Phase::optimizer];
  return c.v;
}

// The model as configured, on the CPU: torchvision initialisation from the run's seed,
// frozen behind an MLP head for --freeze-backbone.
ModelPtr build_cpu_model(const RunConfig& cfg, const std::string& name) {
  torch::manual_seed(cfg.seed);
  auto model = make_model(name, cfg.num_classes, cfg.image_size);
  if (cfg.freeze_backbone) freeze_backbone(*model, cfg.head, cfg.num_classes, cfg.image_size);
  return model;
}

ModelPtr build_model(const SweepEnv& env, const std::string& name) { return build_model(env.cfg, name, env.device); }

SyntheticBatch rank_batch(const SweepEnv& env, long long batch) {
  // Unsigned: a seed near 2^63 wraps instead of overflowing.
  const unsigned long long seed =
      static_cast<unsigned long long>(env.cfg.seed) + 1000 + static_cast<unsigned long long>(env.launch.rank);
  auto b = make_synthetic_batch(batch, env.cfg.image_size, env.cfg.num_classes, env.device, seed);
  if (env.cfg.channels_last) b.input = b.input.contiguous(at::MemoryFormat::ChannelsLast);
  return b;
}

Trainer make_trainer(const SweepEnv& env, ModelPtr model, std::unique_ptr<DistributedDataParallel> ddp, long long batch,
                     int grad_accum) {
  return Trainer(std::move(model), std::move(ddp), rank_batch(env, batch), env.device, env.cfg.precision, grad_accum,
                 zero_grad_set_to_none(env.cfg));
}

// Runs `warmup` untimed then the timed iterations: cfg.iters of them, or with --iters
// auto until the 95% CI half-width of the mean of the per-iteration means across the
// group's ranks is within the target (or a limit is hit): after each iteration, outside
// the timed span, one SUM allreduce over `pg` gives every rank the same iteration mean, so
// every rank takes the same decision and measures the same count. After each iteration the gate (if any)
// gets a heartbeat; `check` (the self-check) runs after each iteration, untimed, until it
// returns true (it defers a step whose fp16 gradients overflowed).
struct Series {
  std::vector<double> samples;
  int64_t skipped_measured = 0;  ///< fp16 steps skipped for overflow among the timed ones
  Stopping stopping;
  std::array<double, kNumBreakdownComponents> breakdown_sum{};  ///< over measured steps
  int breakdown_n = 0;                                          ///< measured steps with a complete breakdown
  double wire_bytes_sum = 0;                                    ///< comm hook's bytes over measured steps
  bool has_wire_bytes = false;
  /// --duration: each measured step's end, s since the first measured step started (the
  /// origin of the burn-in windows), for every step even when `samples` is subsampled.
  std::vector<double> end_s;
  int64_t steps_measured = 0;   ///< measured steps (before subsampling)
  size_t subsample_stride = 1;  ///< --duration: `samples` keeps every k-th measured step
  bool memory_reset_ok = true;  ///< the last reset of the peak-memory window took effect (engine/memory)
};

// The stop decision after `samples` (auto mode), `measured_s` their sum: 0 = go on, else
// the reason's code. A pure function of its inputs, so ranks with equal inputs agree.
enum StopCode : int { kGoOn = 0, kTargetCi = 1, kMaxIters = 2, kMaxTime = 3 };
const char* stop_reason(int code) {
  switch (code) {
    case kTargetCi: return "target_ci";
    case kMaxIters: return "max_iters";
    case kMaxTime: return "max_time";
    default: return "iterations";
  }
}

double ci_pct(const std::vector<double>& samples) {
  const double m = samples.empty() ? 0 : mean(samples);
  return m > 0 ? 100.0 * ci95_halfwidth(samples) / m : 0.0;
}

int stop_decision(const RunConfig& cfg, const std::vector<double>& samples, double measured_s) {
  const auto n = static_cast<int>(samples.size());
  if (n >= cfg.min_iters && ci_pct(samples) <= cfg.target_ci_pct) return kTargetCi;
  if (n >= cfg.max_iters) return kMaxIters;
  if (n >= 2 && measured_s >= cfg.max_time_s) return kMaxTime;
  return kGoOn;
}

// With --duration D (burn-in) the timed iterations run until every rank of `pg` has
// measured for D s of wall time: after each iteration, outside the timed span, a MIN
// allreduce of the ranks' elapsed times gives every rank the same decision, so all stop
// after the same iteration, the first one that ends at or after D on every rank. Each
// step's end time is kept (Series::end_s); the samples are then thinned to at most
// kMaxBurnInSamples, every k-th step (core/stats/burn_in subsample).
// `label` names the series in the phase ("warm-up of <label>", "measurement of <label>")
// and in env.progress, where each call is one row.
// `wire_bytes` (may be null): the comm hook's cumulative byte counter, read per measured step.
Series run_series(const SweepEnv& env, Trainer& trainer, GroupGate* gate, const std::function<bool()>& check,
                  const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const std::string& label,
                  const std::function<long long()>& wire_bytes = nullptr) {
  const RunConfig& cfg = env.cfg;
  StepTimer timer(env.device);
  Series out;
  std::vector<double>& samples = out.samples;
  samples.reserve(static_cast<size_t>(std::min(cfg.iters_auto ? cfg.min_iters : cfg.iters, 100000)));
  const auto skipped = [&] { return trainer.scaler() ? trainer.scaler()->skipped_steps() : 0; };
  int64_t skipped_before = 0;
  bool checked = false;
  std::vector<double> iteration_means;  // auto mode: means over the group's ranks
  double measured_s = 0;                // auto mode: their sum
  const bool burn_in = cfg.duration_s > 0;
  const int planned = burn_in || cfg.iters_auto ? 0 : cfg.iters;  // for the progress line; 0: unknown
  Progress* progress = env.progress;
  using SteadyClock = std::chrono::steady_clock;
  SteadyClock::time_point t0;  // the first measured step's start
  for (int it = 0;; ++it) {
    if (it == 0 && progress) progress->next_row(label, planned, cfg.duration_s);
    if (it == 0 && cfg.warmup > 0) set_phase("warm-up of " + label);
    if (it == cfg.warmup) {
      skipped_before = skipped();
      set_phase("measurement of " + label);
      if (env.sampler) env.sampler->start();  // telemetry covers the measured iterations only
      if (progress) progress->iteration(0, planned);
      t0 = SteadyClock::now();
    }
    const long long wire_before = wire_bytes ? wire_bytes() : 0;
    timer.start();
    if (cfg.mode == "inference") (void)trainer.infer();
    else trainer.step(&timer);
    const double s = timer.stop_s();
    if (it >= cfg.warmup) {
      if (burn_in) out.end_s.push_back(std::chrono::duration<double>(SteadyClock::now() - t0).count());
      samples.push_back(s);
      if (progress) progress->iteration(static_cast<int>(samples.size()), planned);
      // Outside the timed span: our marks, and the Reducer's timers of this step.
      const StepPhases ph = trainer.phases(timer, s);
      const auto rt = trainer.ddp() ? trainer.ddp()->last_iteration_times() : std::nullopt;
      if (ph.complete && (!trainer.ddp() || rt)) {
        const auto c = step_components(s, ph, rt);
        for (size_t k = 0; k < kNumBreakdownComponents; ++k) out.breakdown_sum[k] += c[k];
        ++out.breakdown_n;
      }
      if (wire_bytes) {
        out.wire_bytes_sum += static_cast<double>(wire_bytes() - wire_before);
        out.has_wire_bytes = true;
      }
    } else if (trainer.ddp()) {
      (void)trainer.ddp()->last_iteration_times();  // the Logger records every iteration once
    }
    const bool checked_now = !checked && check && (checked = check());
    if (it == 0 || checked_now) {
      // The peak memory reported is that of the steady state: the first iteration holds
      // the bucket rebuild, the self-check's iteration its copies of all gradients.
      out.memory_reset_ok = reset_memory_peaks(env.device);
    }
    if (gate) gate->beat();
    if (it < cfg.warmup) continue;
    if (burn_in) {
      // The least elapsed time over the group: every rank has measured at least D when it stops.
      const double mine = out.end_s.back();
      const double elapsed = pg && pg->getSize() > 1
                                 ? allreduce_values(pg, {mine}, c10d::ReduceOp::MIN, env.device, env.timeout).front()
                                 : mine;
      if (elapsed >= cfg.duration_s) {
        out.stopping.reason = "duration";
        break;
      }
      continue;
    }
    if (!cfg.iters_auto) {
      if (static_cast<int>(samples.size()) >= cfg.iters) break;
      continue;
    }
    // The mean of this iteration over the group's ranks: every rank gets the same value
    // from the allreduce, so every rank computes the same decision from the same series
    // (the statistic the table's CI shows), and "time" is the sum of those means, not a
    // rank's wall clock.
    const double it_mean =
        pg && pg->getSize() > 1
            ? allreduce_values(pg, {s}, c10d::ReduceOp::SUM, env.device, env.timeout).front() / pg->getSize()
            : s;
    iteration_means.push_back(it_mean);
    measured_s += it_mean;
    const int code = stop_decision(cfg, iteration_means, measured_s);
    if (code != kGoOn) {
      out.stopping.reason = stop_reason(code);
      break;
    }
  }
  if (env.sampler) env.sampler->stop();
  if (progress) progress->row_finished();
  out.steps_measured = static_cast<int64_t>(samples.size());
  if (burn_in) {
    // Bounded samples per rank; every rank ran the same count, so keeps the same steps.
    out.subsample_stride = subsample_stride(samples.size(), kMaxBurnInSamples);
    samples = subsample(samples, out.subsample_stride);
  }
  out.stopping.mode = burn_in ? "duration" : cfg.iters_auto ? "auto" : "fixed";
  out.stopping.target_ci_pct = cfg.iters_auto && !burn_in ? cfg.target_ci_pct : 0.0;
  out.stopping.achieved_ci_pct = ci_pct(cfg.iters_auto && !burn_in ? iteration_means : samples);
  out.skipped_measured = skipped() - skipped_before;
  return out;
}

// Warnings that depend on one row alone (negative DDP overhead needs the no-DDP row: run_sweep).
void add_row_warnings(const SweepEnv& env, BenchResult& row) {
  const Summary& s = row.summary;
  if (s.cv > kNoisyCv)
    row.warnings.push_back({"noisy", fmt::format("per-iteration times vary by {:.1f}% (cv > {:.0f}%); the "
                                                 "percentiles may move between launches",
                                                 100 * s.cv, 100 * kNoisyCv)});
  if (s.iterations < kMinItersForP95)
    row.warnings.push_back(
        {"few_samples",
         fmt::format("{} iterations: fewer than {} leave less than one expected sample above p95; {}", s.iterations,
                     kMinItersForP95, env.cfg.iters_auto ? "raise --min-iters" : "run more --iters")});
  if (!env.device.is_cuda()) {
    // CPU ranks: the intra-op threads of the group's ranks on a host against the CPUs their
    // affinity masks cover together (ranks pinned to separate cores do not compete).
    std::map<std::string, std::pair<int, std::set<int>>> per_host;  // host -> (threads, union of masks)
    std::string over;
    for (int r = 0; r < row.world_size && r < static_cast<int>(env.placements.size()); ++r) {
      const RankPlacement& pl = env.placements[static_cast<size_t>(r)];
      auto& h = per_host[pl.host];
      h.first += env.threads_per_rank;
      std::vector<int> mask;
      try {
        mask = parse_cpu_list(pl.cpus);
      } catch (const UsageError&) {
      }
      h.second.insert(mask.begin(), mask.end());
      if (over.empty() && !mask.empty() && env.threads_per_rank > static_cast<int>(mask.size()))
        over = fmt::format("rank {} runs {} threads on {} CPUs", r, env.threads_per_rank, mask.size());
    }
    for (const auto& [host, h] : per_host)
      if (over.empty() && !h.second.empty() && h.first > static_cast<int>(h.second.size()))
        over = fmt::format("{} threads of this group's ranks on {} share {} CPUs", h.first, host, h.second.size());
    if (!over.empty()) row.warnings.push_back({"oversubscribed", fmt::format("{}; ranks compete for cores", over)});
  }
  if (row.checks.passed() == false)
    row.warnings.push_back(
        {"self_check_failed", fmt::format("{} differ across ranks: no timing of this row is valid",
                                          row.checks.grad_check_passed ? "gradients" : "parameters")});
  if (row.checks.fp16_skipped_steps_in_measurement.value_or(0) > 0)
    row.warnings.push_back({"fp16_skipped_steps",
                            "fp16 steps skipped for overflow among the timed ones: those steps did no update and "
                            "make the row look faster; give more --warmup"});
}

// Rank 0's row from every rank's stats (in group rank order).
BenchResult make_row(const SweepEnv& env, const std::string& model, bool ddp, int n, long long batch, int grad_accum,
                     const std::vector<RankStats>& stats, const Stopping& stopping, int iterations) {
  BenchResult row;
  row.model = model;
  row.grad_accum = grad_accum;
  row.batch_per_rank = batch;
  row.scaling = env.cfg.scaling;
  row.global_batch = batch * n;
  row.image_size = env.cfg.image_size;
  row.precision = env.cfg.precision;
  row.world_size = n;
  row.nodes = distinct_hosts(env.placements, n);
  row.ddp = ddp;
  row.activation_checkpointing = env.cfg.activation_checkpointing;
  row.label = ddp ? group_label(row.nodes, n, env.device.is_cuda() ? 'G' : 'C') : "no ddp";
  row.stopping = stopping;
  std::vector<std::vector<double>> per_rank;
  std::array<double, kNumBreakdownComponents> bd_sum{}, bd_max{};
  int bd_n = 0;
  std::optional<double> peak_max;
  for (int r = 0; r < n; ++r) {
    const RankStats& st = stats[static_cast<size_t>(r)];
    RankSamples rs = placed_rank(env, r);
    rs.samples_s = st.samples_s;
    per_rank.push_back(rs.samples_s);
    if (std::all_of(std::begin(st.breakdown_s), std::end(st.breakdown_s),
                    [](const auto& v) { return v.has_value(); })) {
      for (size_t k = 0; k < kNumBreakdownComponents; ++k) {
        const double s = *st.breakdown_s[k];
        rs.breakdown.s[k] = s;
        bd_sum[k] += s;
        bd_max[k] = bd_n == 0 ? s : std::max(bd_max[k], s);
      }
      ++bd_n;
    }
    if (st.wire_bytes_per_step) rs.telemetry["comm_hook_wire_bytes_per_step"] = *st.wire_bytes_per_step;
    // Each rank's peaks are in the row's memory.per_rank (schema 1.7; before 1.10 also in
    // the rank's telemetry.peak_memory_bytes); the row keeps the largest.
    if (st.peak_memory_bytes) peak_max = std::max(peak_max.value_or(0.0), *st.peak_memory_bytes);
    row.ranks.push_back(std::move(rs));
  }
  // Examples per rank per optimizer step: the micro-batch times the micro-steps.
  row.summary = summarize(per_rank, row.batch_per_rank * grad_accum, n);
  if (bd_n == n) {  // every rank's breakdown, or none: a partial one would mislead
    PhaseSeconds mean, max;
    for (size_t k = 0; k < kNumBreakdownComponents; ++k) {
      mean.s[k] = bd_sum[k] / n;
      max.s[k] = bd_max[k];
    }
    row.breakdown.mean_over_ranks = mean;
    row.breakdown.max_over_ranks = max;
    row.breakdown.iterations = iterations;
    row.breakdown.note = ddp ? "per rank: mean over the measured steps; forward, optimizer and the no_sync "
                               "micro-steps' backward by ddpbench's marks, backward compute/comm/overlap of "
                               "the synchronised micro-step by the c10d::Reducer's timers (sample rate 1)"
                             : "per rank: mean over the measured steps, by ddpbench's marks";
  }
  if (peak_max) row.telemetry["peak_memory_bytes_max_over_ranks"] = static_cast<long long>(*peak_max);
  {
    // Every rank's peaks (engine/memory); model_state_bytes is added by the caller, which has the trainer.
    std::vector<RankMemory> mem;
    bool reset_ok = true;
    for (int r = 0; r < n; ++r) {
      const RankStats& st = stats[static_cast<size_t>(r)];
      mem.push_back({r, st.peak_allocated_bytes, st.peak_reserved_bytes, st.peak_rss_bytes});
      reset_ok = reset_ok && st.memory_reset_ok.value_or(1.0) != 0.0;
    }
    row.memory = row_memory(mem, std::nullopt, memory_source(env.device, reset_ok));
  }
  if (env.cfg.duration_s > 0) {
    // Burn-in (docs/METHODOLOGY.md "Progress and burn-in"): each rank's windows, in
    // optimizer steps per s, times the examples of one step.
    const double ex_per_step = static_cast<double>(batch) * grad_accum;
    const double window_s = env.cfg.duration_s / burn_in_windows(env.cfg.duration_s);
    RowBurnIn& b = row.burn_in;
    std::vector<std::string> fell;
    bool thinned = false;
    for (int r = 0; r < n; ++r) {
      const RankStats& st = stats[static_cast<size_t>(r)];
      std::vector<double> ex;
      for (double v : st.window_steps_per_s) ex.push_back(v * ex_per_step);
      const auto stride = static_cast<long long>(st.subsample_stride.value_or(1.0));
      thinned = thinned || stride > 1;
      b.per_rank.push_back({r, ex, static_cast<long long>(st.steps_measured.value_or(0.0)),
                            static_cast<long long>(st.samples_s.size()), stride});
      if (ex.empty()) continue;
      const Drift d = throughput_drift(ex, kDriftThresholdPct, ex_per_step / window_s);
      b.drift.push_back({r, d.first_ex_per_s, d.last_ex_per_s, d.change_pct, d.resolution_pct, d.flagged});
      if (d.flagged)
        fell.push_back(fmt::format("rank {} ({}) {:.1f}% ({:.1f} -> {:.1f} ex/s)", r,
                                   env.placements[static_cast<size_t>(r)].host, d.change_pct, d.first_ex_per_s,
                                   d.last_ex_per_s));
    }
    b.duration_s = env.cfg.duration_s;
    b.window_s = window_s;
    b.drift_threshold_pct = kDriftThresholdPct;
    b.note = fmt::format(
        "windows of {:.3g} s from the first measured step's start (t = 0); the last window runs to the rank's last "
        "step; a step counts in the window it ended in; drift = last window vs first{}",
        window_s,
        thinned ? fmt::format("; samples_s keeps every subsample_stride-th step (at most {} per rank), so percentiles "
                              "are those of a systematic subsample",
                              kMaxBurnInSamples)
                : "");
    if (!fell.empty())
      row.warnings.push_back(
          {"throughput_drift",
           fmt::format("throughput fell by more than {:.0f}% (plus two steps' share of a window) from the first to the "
                       "last {:.3g} s window on {}: a "
                       "device heating up and throttling, or a neighbour taking its CPU or GPU",
                       kDriftThresholdPct, window_s, fmt::join(fell, ", "))});
  }
  return row;
}

// The self-check passes when every gradient is finite and the ranks agree within the
// limit; written so that NaN anywhere fails it.
bool check_passed(const std::optional<GradSpread>& s, double limit) {
  return s && std::isfinite(s->max_abs_grad) && s->max_abs_diff <= limit;
}

RankStats rank_stats(const SweepEnv& env, const Series& series) {
  RankStats st;
  st.samples_s = series.samples;
  // A breakdown covers every measured step or is left out.
  // (Over every measured step: with --duration `samples` may be a subsample of them.)
  if (series.breakdown_n > 0 && series.breakdown_n == series.steps_measured)
    for (size_t k = 0; k < kNumBreakdownComponents; ++k)
      st.breakdown_s[k] = series.breakdown_sum[k] / series.breakdown_n;
  if (series.has_wire_bytes && series.steps_measured > 0)
    st.wire_bytes_per_step = series.wire_bytes_sum / static_cast<double>(series.steps_measured);
  if (const long long peak = peak_memory_bytes(env.device); peak >= 0) st.peak_memory_bytes = static_cast<double>(peak);
  {
    const RankMemory m = read_memory_peaks(env.device, env.launch.rank);
    st.peak_allocated_bytes = m.peak_allocated_bytes;
    st.peak_reserved_bytes = m.peak_reserved_bytes;
    st.peak_rss_bytes = m.peak_rss_bytes;
    st.memory_reset_ok = series.memory_reset_ok ? 1.0 : 0.0;
  }
  if (env.cfg.duration_s > 0) {
    st.steps_measured = static_cast<double>(series.steps_measured);
    st.subsample_stride = static_cast<double>(series.subsample_stride);
    // One "example" per step here: make_row scales by the examples per optimizer step.
    std::vector<StepEnd> ends;
    ends.reserve(series.end_s.size());
    for (double t : series.end_s) ends.push_back({t, 1.0});
    st.window_steps_per_s = window_throughput(ends, env.cfg.duration_s, burn_in_windows(env.cfg.duration_s));
  }
  return st;
}

// Largest telemetry summary a rank publishes per row (its series are dropped beyond it).
constexpr size_t kMaxTelemetryBytes = 32 * 1024;

// This rank's telemetry of the series just measured (contract in core/telemetry/telemetry.hpp).
nlohmann::json own_telemetry(const SweepEnv& env) {
  if (!env.sampler) return nlohmann::json(nullptr);
  nlohmann::json t = rounded_telemetry(env.sampler->summary());
  if (t.dump().size() > kMaxTelemetryBytes) {
    t.erase("series");
    t["series_dropped"] = fmt::format("the series exceeded {} bytes", kMaxTelemetryBytes);
  }
  return t;
}

// Every rank of a group publishes its telemetry under `key`/<rank> in the store (bounded
// by kMaxTelemetryBytes); rank 0 reads them after the group's gather, when all are set.
void publish_telemetry(const SweepEnv& env, const std::string& key) {
  const std::string text = own_telemetry(env).dump();
  env.store->set(fmt::format("{}/{}", key, env.launch.rank), std::vector<uint8_t>(text.begin(), text.end()));
}

nlohmann::json collect_telemetry(const SweepEnv& env, const std::string& key, int rank) {
  const std::string k = fmt::format("{}/{}", key, rank);
  Deadline d("the store (rank 0), reading rank " + std::to_string(rank) + "'s telemetry", env.timeout);
  const auto bytes = env.store->get(k);
  env.store->deleteKey(k);
  return nlohmann::json::parse(std::string(bytes.begin(), bytes.end()), nullptr, /*allow_exceptions=*/false);
}

// Puts each rank's telemetry into the row and flags low utilization and throttling
// (core/telemetry/telemetry.hpp telemetry_flags). Warnings per code: the first kMaxNamed ranks by
// name, then one line counting the rest (every rank's flags stay in its telemetry).
void attach_telemetry(const SweepEnv& env, BenchResult& row, const std::vector<nlohmann::json>& per_rank) {
  constexpr size_t kMaxNamed = 4;
  std::map<std::string, std::vector<RowWarning>> by_code;
  for (size_t r = 0; r < per_rank.size() && r < row.ranks.size(); ++r) {
    if (!per_rank[r].is_object()) continue;
    RankSamples& rs = row.ranks[r];
    rs.telemetry["sampled"] = per_rank[r];
    for (auto& w : telemetry_flags(rs.telemetry["sampled"], env.cfg.min_util_pct, rs.rank, rs.host))
      by_code[w.code].push_back(std::move(w));
  }
  for (auto& [code, ws] : by_code) {
    for (size_t i = 0; i < ws.size() && i < kMaxNamed; ++i) row.warnings.push_back(ws[i]);
    if (ws.size() > kMaxNamed)
      row.warnings.push_back({code, fmt::format("and {} more ranks (each rank's telemetry.sampled.flags says which)",
                                                ws.size() - kMaxNamed)});
  }
  // The group's series as min/median/max over ranks (each rank's own series stays only for
  // the ranks kept in full: core/result/per_rank_detail, applied as the row is emitted).
  std::vector<const nlohmann::json*> sampled;
  for (const auto& rs : row.ranks)
    if (const auto it = rs.telemetry.find("sampled"); it != rs.telemetry.end()) sampled.push_back(&*it);
  if (auto over = series_over_ranks(sampled); !over.empty()) row.telemetry["series_over_ranks"] = std::move(over);
}

// --profile DIR: after a measured series, `profile_iters` more steps (untimed) traced by
// libtorch's profiler, one file per rank: DIR/<model>-<what>-rank<R>.json. Returns the
// file's record for the row ({} without --profile).
nlohmann::json profile_series(const SweepEnv& env, Trainer& trainer, const std::string& model, const std::string& what,
                              GroupGate* gate) {
  if (env.cfg.profile_dir.empty()) return nlohmann::json::object();
  set_phase(fmt::format("the profiled steps of {} {}", model, what));
  std::string file = fmt::format("{}-{}-rank{}.json", model, what, env.launch.rank);
  for (char& c : file)
    if (c == '/' || c == ' ') c = '_';
  const std::string path = env.cfg.profile_dir + "/" + file;
  const std::string profiler = trace_steps(
      [&] {
        trainer.step();
        if (gate) gate->beat();
      },
      env.cfg.profile_iters, path, env.device);
  return {{"file", file}, {"profiler", profiler}, {"iterations", env.cfg.profile_iters}};
}

// What rank 0 knows about a model before measuring it (computed once, on the CPU).
struct ModelInfo {
  double forward_macs = 0;     ///< per example, whole forward (head included)
  double head_macs = 0;        ///< per example, of the MLP head (frozen backbone only)
  double head_first_macs = 0;  ///< of the head's first layer
  int64_t parameters = 0, trainable_parameters = 0;
};

ModelInfo model_info(const SweepEnv& env, const std::string& name) {
  ModelInfo info;
  if (env.launch.rank != 0) return info;
  auto m = build_cpu_model(env.cfg, name);
  info.forward_macs = forward_macs(*m, env.cfg.image_size);
  info.parameters = count_parameters(*m);
  info.trainable_parameters = count_trainable_parameters(*m);
  if (m->has_head()) {
    for (const auto& any : *m->head()) {
      if (const auto* l = any.ptr()->as<torch::nn::Linear>()) {
        const double macs = static_cast<double>(l->options.in_features() * l->options.out_features());
        if (info.head_macs == 0) info.head_first_macs = macs;
        info.head_macs += macs;
      }
    }
  }
  return info;
}

// Adds the compute (FLOPs, MFU) and loss-scaling sections to a row (rank 0).
void annotate(const SweepEnv& env, const ModelInfo& info, BenchResult& row, const Trainer& trainer,
              const Series& series) {
  const double train_flops = training_flops_per_example(info.forward_macs, info.head_macs, info.head_first_macs);
  const double achieved = achieved_tflops(train_flops, row.summary.ex_per_s_per_gpu);
  const std::string gpu = env.placements.empty() ? std::string() : env.placements.front().gpu_name;
  const PeakBasis basis = mfu_basis(row.precision, env.math.cudnn_allow_tf32, env.math.cublas_allow_tf32);
  const double peak = env.device.is_cuda() ? peak_tflops(gpu, basis.unit).value_or(0.0) : 0.0;  // 0: unknown
  const GpuPeak* entry = env.device.is_cuda() ? find_gpu_peak(gpu) : nullptr;
  RowCompute& c = row.compute;
  c.forward_macs_per_example = info.forward_macs;
  c.train_flops_per_example = train_flops;
  c.achieved_tflops_per_gpu = achieved;
  if (peak > 0) {
    c.peak_tflops = peak;
    c.mfu = achieved / peak;
    c.peak_basis = basis.label;
  }
  c.peak_source = entry ? entry->source : "unknown device: no MFU";
  c.parameters = info.parameters;
  c.trainable_parameters = info.trainable_parameters;
  if (const LossScaler* s = trainer.scaler()) {
    row.telemetry["loss_scaling"] = {{"final_scale", s->current_scale()},
                                     {"skipped_steps", s->skipped_steps()},
                                     {"skipped_steps_measured", series.skipped_measured},
                                     {"note",
                                      "rank 0's scaler, warm-up included in skipped_steps; DDP ranks share "
                                      "gradients, so they skip the same steps"}};
    // A skipped step does no optimizer update: timed ones make the row look faster.
    row.checks.fp16_skipped_steps_in_measurement = series.skipped_measured;
  }
}

// Every rank trains its own copy, no communication (CUDA/cuDNN init, allocator warm-up),
// at the batch of the first group.
void warmup_alone(const SweepEnv& env, const std::string& model) {
  if (env.cfg.warmup == 0) return;
  set_phase(fmt::format("warm-up of {} (every rank alone)", model));
  Trainer trainer =
      make_trainer(env, build_model(env, model), nullptr, batch_per_rank(env.cfg, env.cfg.world_sizes.front()), 1);
  for (int it = 0; it < env.cfg.warmup; ++it) trainer.step();
  synchronize(env.device);
}

// The no-DDP baseline of one (batch, micro-steps) point: rank 0's row, and every rank's
// compute-only step (rank 0 only; in rank order) for the straggler scores.
struct Baseline {
  std::optional<BenchResult> row;
  std::vector<double> compute_p50_s;
};

// Every rank trains its own copy without DDP at `batch` examples (`grad_accum` micro-steps
// per step), all at the same time (a barrier on the world group starts them together; with
// --iters auto or --duration each rank stops by its own series), so each rank's compute-only
// step is measured under the load the DDP groups see. Rank 0 makes the row from its own
// series; rank 0 gathers every rank's p50.
Baseline run_no_ddp(const SweepEnv& env, const std::string& model, const ModelInfo& info, long long batch,
                    int grad_accum) {
  const std::string what = fmt::format("no-DDP baseline of {} at batch {}{}", model, batch,
                                       grad_accum > 1 ? fmt::format(" x {} micro-steps", grad_accum) : "");
  const int rank = env.launch.rank;
  set_phase("set-up of the " + what + " (every rank alone, at the same time)");
  release_free_host_memory(env.device);
  reset_peak_memory(env.device);
  Trainer trainer = make_trainer(env, build_model(env, model), nullptr, batch, grad_accum);
  if (env.world_pg) {
    Deadline d("every rank, starting the " + what + " together", env.timeout);
    barrier(env.world_pg, env.device, env.timeout);
  }
  // No collective inside the series: each rank decides alone when it stops (--iters auto,
  // --duration), so no rank waits for another between its steps.
  const Series series = run_series(env, trainer, nullptr, nullptr, {}, "the " + what);
  Baseline out;
  const double p50 = percentile(series.samples, 50);
  if (env.world_pg) {
    set_phase("the gather of every rank's " + what);
    for (const auto& v : gather_to_root(env.world_pg, {p50}, 1, env.device, env.timeout))
      out.compute_p50_s.push_back(v.front());
  } else {
    out.compute_p50_s.push_back(p50);
  }
  const RankStats stats = rank_stats(env, series);
  const nlohmann::json telemetry = own_telemetry(env);
  const auto trace = rank == 0 ? profile_series(env, trainer, model,
                                                grad_accum > 1 ? fmt::format("noddp-b{}-k{}", batch, grad_accum)
                                                               : fmt::format("noddp-b{}", batch),
                                                nullptr)
                               : nlohmann::json::object();
  if (rank != 0) return out;
  auto row = make_row(env, model, /*ddp=*/false, 1, batch, grad_accum, {stats}, series.stopping,
                      static_cast<int>(series.samples.size()));
  row.telemetry["baseline"] =
      env.launch.world_size > 1
          ? fmt::format("rank 0's series; all {} ranks trained alone at the same time", env.launch.world_size)
          : "rank 0's series";
  annotate(env, info, row, trainer, series);
  row.memory.model_state_bytes = trainer.model_state_bytes();
  attach_telemetry(env, row, {telemetry});
  if (!trace.empty()) row.telemetry["profile"] = trace;
  add_row_warnings(env, row);
  out.row = std::move(row);
  return out;
}

// A communication hook registered on a group's Reducer.
struct HookInstall {
  std::function<long long()> wire_bytes;  ///< cumulative bytes the hook passed to collectives; empty: no hook
  std::string note;                       ///< the hook's caveat for the row ("" when none)
};

// The host of every rank of `pg`, as every rank of it sees them (the hierarchical hook's
// node layout): each rank contributes a 52-bit hash of its host name at its own index of
// a SUM allreduce (8 bytes per rank; hashes are exact in a double). Collective over `pg`.
std::vector<std::string> group_hosts(const SweepEnv& env, const c10::intrusive_ptr<c10d::ProcessGroup>& pg) {
  std::vector<double> ids(static_cast<size_t>(pg->getSize()), 0.0);
  ids[static_cast<size_t>(pg->getRank())] =
      static_cast<double>(std::hash<std::string>{}(host_name()) & ((1ULL << 52) - 1));
  ids = allreduce_values(pg, ids, c10d::ReduceOp::SUM, env.device, env.timeout);
  std::vector<std::string> hosts;
  for (double id : ids) hosts.push_back(fmt::format("host-{:.0f}", id));
  return hosts;
}

// Registers the variant's communication hook (engine/dist/comm_hooks.hpp) on `ddp`
// before its first forward. Collective over `pg` (the hierarchical hook builds per-node
// sub-groups). Nothing for "none".
HookInstall install_comm_hook(const SweepEnv& env, const DdpVariant& v, DistributedDataParallel& ddp,
                              const c10::intrusive_ptr<c10d::ProcessGroup>& pg,
                              const c10::intrusive_ptr<c10d::Store>& store, const std::string& name) {
  const CommHookSpec spec = parse_comm_hook(v.comm_hook);
  if (spec.kind == "none") return {};
  CommHookContext ctx;
  ctx.pg = pg;
  ctx.store = store;
  if (spec.kind == "hierarchical") ctx.hosts = group_hosts(env, pg);
  ctx.backend = env.backend;
  ctx.device = env.device;
  ctx.timeout = env.timeout;
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

}  // namespace

c10::intrusive_ptr<c10d::Store> make_group_store(const SweepEnv& env, const std::string& name) {
  return c10::make_intrusive<c10d::PrefixStore>("group/" + name + "/", env.store);
}

c10::intrusive_ptr<c10d::ProcessGroup> make_group_process_group(const SweepEnv& env, const std::string& name, int n) {
  const auto group_store = make_group_store(env, name);
  Deadline d("the store (rank 0), setting up the process group of " + name, env.timeout);
  return make_process_group(env.backend, group_store, env.launch.rank, n, env.device, env.timeout);
}

RankSamples placed_rank(const SweepEnv& env, int r) {
  const auto& pl = env.placements.at(static_cast<size_t>(r));
  RankSamples rs;
  rs.rank = r;
  rs.host = pl.host;
  rs.local_rank = pl.local_rank;
  rs.device = pl.device;
  return rs;
}

void run_group(const SweepEnv& env, const std::string& name, const std::string& label, int n,
               const std::function<void(c10::intrusive_ptr<c10d::ProcessGroup>&, GroupGate&)>& body) {
  GroupGate gate(env.store, name, env.timeout, GroupGate::poll_for(env.launch.world_size));
  const int rank = env.launch.rank;
  if (rank >= n) {
    set_phase("the wait for " + label);
    gate.wait_done();
    return;
  }
  try {
    set_phase("set-up of " + label);
    auto pg = make_group_process_group(env, name, n);
    body(pg, gate);
    if (pg) destroy_process_group(pg);
    if (rank == 0) gate.done();
  } catch (const std::exception& e) {
    if (rank == 0) gate.fail(e.what(), env.launch.world_size - n);
    throw;
  }
}

namespace {

// The first n ranks train under DDP on their own sub-group with the settings of variant
// `vi`; the others wait. Rank 0 emits the row (with the self-check values) even when the
// check fails, then every rank of the group throws SelfCheckError and the waiting ranks
// are released with the failure.
// `vi` is the variant's index among `variants` (several: names and files say which).
void run_ddp_group(const SweepEnv& env, const std::string& model, const ModelInfo& info, int n, size_t vi,
                   size_t variants, const DdpVariant& variant, const RowCallback& emit) {
  const std::string suffix = variants > 1 ? fmt::format("/v{}", vi) : "";
  const std::string name = fmt::format("{}/ddp{}{}", model, n, suffix);
  const std::string label = variants > 1 ? fmt::format("DDP group {}/ddp{} ({})", model, n, variant_words(variant))
                                         : fmt::format("DDP group {}", name);
  const int rank = env.launch.rank;
  run_group(env, name, label, n, [&](c10::intrusive_ptr<c10d::ProcessGroup>& pg, GroupGate& gate) {
    std::optional<GradSpread> spread;  // set once the self-check ran
    double limit = 0;
    {
      release_free_host_memory(env.device);
      reset_peak_memory(env.device);
      const long long batch = batch_per_rank(env.cfg, n);
      auto module = build_model(env, model);
      auto ddp = std::make_unique<DistributedDataParallel>(module, pg, ddp_options_of(env.cfg, variant), env.device);
      DistributedDataParallel* ddp_raw = ddp.get();
      const HookInstall hook = install_comm_hook(env, variant, *ddp, pg, make_group_store(env, name), name);
      Trainer trainer = make_trainer(env, module, std::move(ddp), batch, variant.grad_accum);

      auto check = [&]() -> bool {
        // A step skipped for fp16 overflow has inf/NaN gradients by design (identical on
        // every rank, since found_inf comes from the reduced gradients): check the next one.
        if (trainer.scaler() && !trainer.scaler()->last_step_finite()) return false;
        torch::NoGradGuard ng;
        if (n > 1 && env.self_check_hook) env.self_check_hook(rank, n, ddp_raw->parameters());
        spread = grad_spread_across_ranks(ddp_raw->parameters(), pg, env.timeout);
        return true;
      };
      const Series series = run_series(env, trainer, rank == 0 ? &gate : nullptr, check, pg, label, hook.wire_bytes);
      const GradSpread measured = spread.value_or(GradSpread{});
      limit = env.cfg.grad_check_tol * std::max(1.0, measured.max_abs_grad);
      const nlohmann::json trace =
          profile_series(env, trainer, model, variants > 1 ? fmt::format("ddp{}-v{}", n, vi) : fmt::format("ddp{}", n),
                         rank == 0 ? &gate : nullptr);
      // Every rank of the group measured the same number of iterations (fixed, or agreed in auto mode).
      const size_t iters = series.samples.size();
      set_phase("the result gather of " + label);
      publish_telemetry(env, "telemetry/" + name);  // before the gather: rank 0 reads it after
      const auto payload = rank_stats(env, series).pack();
      const auto gathered = gather_to_root(pg, payload, payload.size(), env.device, env.timeout);
      if (rank == 0) {
        std::vector<RankStats> stats;
        for (const auto& v : gathered) stats.push_back(RankStats::unpack(v, iters));
        BenchResult row = make_row(env, model, /*ddp=*/true, n, batch, variant.grad_accum, stats, series.stopping,
                                   static_cast<int>(iters));
        row.ddp_options = row_ddp_options(env.cfg, variant);
        const auto buckets = ddp_raw->bucket_sizes_bytes();
        row.checks.grad_max_abs_diff_across_ranks = measured.max_abs_diff;
        row.checks.grad_max_abs = measured.max_abs_grad;
        row.checks.grad_check_limit = limit;
        row.checks.grad_check_passed = check_passed(spread, limit);
        row.checks.grad_check_ran = spread.has_value();
        row.checks.buckets_rebuilt = ddp_raw->buckets_rebuilt();
        row.checks.bucket_sizes_bytes = std::vector<long long>(buckets.begin(), buckets.end());
        if (!hook.note.empty()) row.telemetry["comm_hook_note"] = hook.note;
        annotate(env, info, row, trainer, series);
        row.memory.model_state_bytes = trainer.model_state_bytes();
        {
          std::vector<nlohmann::json> tele;
          for (int r = 0; r < n; ++r) tele.push_back(collect_telemetry(env, "telemetry/" + name, r));
          attach_telemetry(env, row, tele);
        }
        add_row_warnings(env, row);
        if (!trace.empty()) row.telemetry["profile"] = trace;
        // What DDP reduces: every bucket once per optimizer step (the gradients of the
        // trainable parameters). Steps per epoch at this group's global batch.
        long long per_step = 0;
        for (auto b : buckets) per_step += b;
        const long long examples = row.global_batch * variant.grad_accum;
        const long long steps = (env.cfg.dataset_size + examples - 1) / examples;
        RowCommunication& c = row.communication;
        c.trainable_parameters = info.trainable_parameters;
        c.buckets = static_cast<long long>(buckets.size());
        c.bucket_sizes_bytes = std::vector<long long>(buckets.begin(), buckets.end());
        c.allreduce_bytes_per_step = per_step;
        c.dataset_size = env.cfg.dataset_size;
        c.steps_per_epoch = steps;
        c.allreduce_bytes_per_epoch = per_step * steps;
        // Without a hook's count, the Reducer's allreduce of every bucket.
        c.wire_bytes_per_step = stats.front().wire_bytes_per_step.value_or(static_cast<double>(per_step));
        // The bandwidth the gradient allreduce achieved: its bytes over the Reducer's
        // communication span (first bucket launched .. last finished), busbw as nccl-tests.
        if (n > 1) {
          const double comm_s = row.breakdown.mean(Phase::backward_comm).value_or(0.0);
          if (comm_s > 0) {
            const double algbw = static_cast<double>(per_step) / comm_s / 1e9;
            c.effective_algbw_gbps = algbw;
            c.effective_busbw_gbps = algbw * 2.0 * (n - 1) / n;
          }
        }
        emit(row);
      }
    }
    destroy_process_group(pg);
    if (!spread)
      throw SelfCheckError(
          fmt::format("{} on {} ranks: every step's fp16 gradients overflowed, so the self-check never "
                      "ran; the loss scaler did not recover",
                      model, n));
    if (!check_passed(spread, limit))
      throw SelfCheckError(fmt::format(
          "{} on {} ranks{}: gradients differ across ranks by {:.3g} after the first DDP step (limit {:.3g}); "
          "the allreduce is not averaging, so no timing of this group is valid",
          model, n, variants > 1 ? " (" + variant_words(variant) + ")" : "", spread->max_abs_diff, limit));
  });
}

// `run --mode inference`: the first n ranks each run forward passes of their own batch
// (Trainer::infer: no_grad, eval mode, autocast), all at the same time, with no DDP and no
// communication while they measure; the group's process group only starts them together
// and gathers the samples. The others wait at the gate. Rank 0 emits the row: throughput
// over the group, p50/p95 of the per-batch forward time, every rank's peak memory.
void run_inference_group(const SweepEnv& env, const std::string& model, int n, const RowCallback& emit) {
  const std::string name = fmt::format("{}/infer{}", model, n);
  const std::string label = fmt::format("inference group {}", name);
  const int rank = env.launch.rank;
  run_group(env, name, label, n, [&](c10::intrusive_ptr<c10d::ProcessGroup>& pg, GroupGate& gate) {
    {
      release_free_host_memory(env.device);
      reset_peak_memory(env.device);
      const long long batch = batch_per_rank(env.cfg, n);
      Trainer trainer = make_trainer(env, build_model(env, model), nullptr, batch, 1);
      {
        Deadline d("every rank of " + name + ", starting together", env.timeout);
        barrier(pg, env.device, env.timeout);
      }
      // No collective inside the series (fixed iterations, or each rank's own --iters auto
      // decision would desynchronise nothing: the gather below takes each rank's samples).
      const Series series = run_series(env, trainer, rank == 0 ? &gate : nullptr, nullptr, {}, label);
      set_phase("the result gather of " + label);
      publish_telemetry(env, "telemetry/" + name);
      // Ranks may have measured different counts (--iters auto, --duration): pad to the most.
      const size_t mine = series.samples.size();
      const size_t iters = static_cast<size_t>(
          allreduce_values(pg, {static_cast<double>(mine)}, c10d::ReduceOp::MAX, env.device, env.timeout).front());
      RankStats st = rank_stats(env, series);
      st.samples_s.resize(iters, NAN);
      const auto payload = st.pack();
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
        BenchResult row =
            make_row(env, model, /*ddp=*/false, n, batch, 1, stats, series.stopping, static_cast<int>(mine));
        row.mode = "inference";
        row.label = "infer " + group_label(row.nodes, n, env.device.is_cuda() ? 'G' : 'C');
        row.memory.model_state_bytes = trainer.model_state_bytes();
        {
          std::vector<nlohmann::json> tele;
          for (int r = 0; r < n; ++r) tele.push_back(collect_telemetry(env, "telemetry/" + name, r));
          attach_telemetry(env, row, tele);
        }
        add_row_warnings(env, row);
        emit(row);
      }
    }
    destroy_process_group(pg);
  });
}

// --strategy zero2|fsdp: the first n ranks train the model sharded (engine/dist/sharded.hpp)
// on their own sub-group; the others wait. The self-check: the parameters are equal on
// every rank after the first step (max spread over ranks within grad_check_tol relative to
// max |p|); rank 0 emits the row, then a failed check throws SelfCheckError on every rank of the group.
void run_sharded_group(const SweepEnv& env, const std::string& model, const ModelInfo& info, int n,
                       const std::string& strategy, const RowCallback& emit) {
  const std::string name = fmt::format("{}/{}{}", model, strategy, n);
  const std::string label = fmt::format("{} group {}", strategy, name);
  const int rank = env.launch.rank;
  run_group(env, name, label, n, [&](c10::intrusive_ptr<c10d::ProcessGroup>& pg, GroupGate& gate) {
    std::optional<double> spread;
    double max_abs = 0, limit = 0;
    {
      release_free_host_memory(env.device);
      reset_peak_memory(env.device);
      const long long batch = batch_per_rank(env.cfg, n);
      auto module = build_model(env, model);
      Trainer trainer = make_trainer(env, module, nullptr, batch, 1);
      trainer.set_sharded(
          std::make_unique<ShardedDataParallel>(module, pg, strategy, trainer_sgd_options(), env.device, env.timeout));
      ShardedDataParallel* sharded = trainer.sharded();
      auto check = [&]() -> bool {
        torch::NoGradGuard ng;
        spread = sharded->parameter_spread_across_ranks();
        for (const auto& p : sharded->full_parameters()) max_abs = std::max(max_abs, p.abs().max().item<double>());
        return true;
      };
      const Series series = run_series(env, trainer, rank == 0 ? &gate : nullptr, check, pg, label,
                                       [sharded] { return sharded->wire_bytes(); });
      limit = env.cfg.grad_check_tol * std::max(1.0, max_abs);
      const size_t iters = series.samples.size();
      set_phase("the result gather of " + label);
      publish_telemetry(env, "telemetry/" + name);
      const auto payload = rank_stats(env, series).pack();
      const auto gathered = gather_to_root(pg, payload, payload.size(), env.device, env.timeout);
      if (rank == 0) {
        std::vector<RankStats> stats;
        for (const auto& v : gathered) stats.push_back(RankStats::unpack(v, iters));
        BenchResult row =
            make_row(env, model, /*ddp=*/true, n, batch, 1, stats, series.stopping, static_cast<int>(iters));
        row.strategy = strategy;
        row.checks.param_max_abs_diff_across_ranks = spread.value_or(0.0);
        row.checks.param_max_abs = max_abs;
        row.checks.param_check_limit = limit;
        row.checks.param_check_passed = spread && *spread <= limit;
        row.checks.param_check_ran = spread.has_value();
        annotate(env, info, row, trainer, series);
        {
          std::vector<nlohmann::json> tele;
          for (int r = 0; r < n; ++r) tele.push_back(collect_telemetry(env, "telemetry/" + name, r));
          attach_telemetry(env, row, tele);
        }
        add_row_warnings(env, row);
        row.communication = sharded->communication().get<RowCommunication>();
        row.communication.trainable_parameters = info.trainable_parameters;
        row.memory.model_state_bytes = trainer.model_state_bytes();
        row.communication.wire_bytes_per_step = stats.front().wire_bytes_per_step;
        emit(row);
      }
    }
    destroy_process_group(pg);
    if (!spread || *spread > limit)
      throw SelfCheckError(
          fmt::format("{} on {} ranks ({}): parameters differ across ranks by {:.3g} after the first "
                      "step (limit {:.3g}); the sharded step is not consistent",
                      model, n, strategy, spread.value_or(NAN), limit));
  });
}

}  // namespace

ModelPtr build_model(const RunConfig& cfg, const std::string& name, const c10::Device& device) {
  auto model = build_cpu_model(cfg, name);
  model->to(device);
  if (cfg.channels_last) to_channels_last(*model);
  model->train();
  if (cfg.activation_checkpointing) enable_activation_checkpointing(*model);
  return model;
}

SelfCheckHook fault_injection_hook(const std::string& name) {
  if (name == "skew-grad")
    return [](int rank, int n, const std::vector<at::Tensor>& params) {
      torch::NoGradGuard ng;
      if (rank == n - 1) params.front().mutable_grad().add_(1.0);
    };
  if (name == "nan-grad")
    return [](int, int, const std::vector<at::Tensor>& params) {
      torch::NoGradGuard ng;
      params.front().mutable_grad().fill_(NAN);
    };
  if (name == "exit-rank1")
    return [](int rank, int, const std::vector<at::Tensor>&) {
      if (rank == 1) std::_Exit(1);
    };
  throw UsageError(
      fmt::format("DDPBENCH_TEST_FAULT '{}' is unknown (skew-grad, nan-grad, exit-rank1); unset it", name));
}

// The straggler entry of `model` (rank 0): each rank's compute-only p50 from the first
// baseline, its DDP step p50 and exposed communication from the first row of the largest
// DDP group.
nlohmann::json stragglers_of(const SweepEnv& env, const std::string& model, long long batch,
                             const std::vector<double>& compute_p50_s, const std::vector<BenchResult>& rows) {
  const BenchResult* largest = nullptr;
  for (const auto& r : rows)
    if (r.ddp && r.model == model && (!largest || r.world_size > largest->world_size)) largest = &r;
  std::vector<RankScoreInput> in;
  for (size_t r = 0; r < compute_p50_s.size() && r < env.placements.size(); ++r) {
    const RankPlacement& p = env.placements[r];
    RankScoreInput x;
    x.rank = static_cast<int>(r);
    x.host = p.host;
    x.local_rank = p.local_rank;
    x.device = p.device;
    if (p.device.rfind("cuda:", 0) == 0) x.gpu_index = std::stoi(p.device.substr(5));
    x.gpu_uuid = p.gpu_uuid;
    x.bus_id = p.bus_id;
    x.compute_step_s = compute_p50_s[r];
    if (largest && r < largest->ranks.size()) {
      const RankSamples& rs = largest->ranks[r];
      if (rs.step) x.ddp_step_s = rs.step->p50_s;  // every emitted row's ranks have one (keep_per_rank_detail)
      if (const auto wait = largest->ranks[r].breakdown[Phase::exposed_comm]) x.comm_wait_s = *wait;
    }
    in.push_back(std::move(x));
  }
  return straggler_entry(model, batch, largest ? largest->world_size : 0, in, env.cfg.straggler_threshold);
}

// This rank's sampler: its GPU by UUID / bus id, the interface that reaches rank 0's host.
std::shared_ptr<TelemetrySampler> make_sampler(const SweepEnv& env) {
  TelemetryOptions t;
  t.sample_ms = env.cfg.sample_ms;
  if (env.device.is_cuda()) {
    const RankPlacement& p = env.placements[static_cast<size_t>(env.launch.rank)];
    t.gpu_uuid = p.gpu_uuid;
    t.bus_id = p.bus_id;
  }
  t.net_interface = interface_for_address(env.launch.master_addr, current_env());
  return std::make_shared<TelemetrySampler>(t);
}

std::vector<BenchResult> run_sweep(SweepEnv& env, const RowCallback& on_row,
                                   const std::function<void(const nlohmann::json&)>& on_stragglers) {
  std::vector<BenchResult> rows;
  if (!env.sampler) env.sampler = make_sampler(env);
  if (!env.world_pg && env.launch.world_size > 1) {
    set_phase("set-up of the world process group (the concurrent no-DDP baselines)");
    Deadline d("the store (rank 0), setting up the world process group", env.timeout);
    auto ws = c10::make_intrusive<c10d::PrefixStore>("group/world/", env.store);
    env.world_pg = make_process_group(env.backend, ws, env.launch.rank, env.launch.world_size, env.device, env.timeout);
  }
  RowCallback emit = [&](const BenchResult& row) {
    rows.push_back(row);
    BenchResult& r = rows.back();
    keep_per_rank_detail(r, env.cfg.per_rank_series == "all");
    // DDP faster than the same step without it: noise, or not the same work.
    if (r.ddp)
      for (const auto& nd : rows)
        if (!nd.ddp && nd.model == r.model && nd.batch_per_rank == r.batch_per_rank && nd.grad_accum == r.grad_accum &&
            r.summary.p50_s < nd.summary.p50_s) {
          r.warnings.push_back(
              {"negative_ddp_overhead", fmt::format("DDP p50 {:.4f} s is below the no-DDP p50 {:.4f} s: DDP cannot be "
                                                    "free, so noise or a changed machine state dominates this row",
                                                    r.summary.p50_s, nd.summary.p50_s)});
          break;
        }
    if (on_row) on_row(r);
  };
  std::optional<TrainTestData> data;  // --data: time-to-loss (engine/bench/time_to_loss.hpp), loaded once
  for (const auto& model : env.cfg.models) {
    if (env.cfg.data != "synthetic") {
      if (!data) data = load_train_test(env.cfg);
      run_time_to_loss(env, *data, model, emit);
      continue;
    }
    if (env.cfg.mode == "inference") {  // forward only, one row per world size, no DDP rows
      for (int n : env.cfg.world_sizes) run_inference_group(env, model, n, emit);
      continue;
    }
    warmup_alone(env, model);
    // No-DDP baselines at every (per-rank batch, micro-steps) the groups use (one in weak scaling).
    const ModelInfo info = model_info(env, model);
    std::vector<double> compute_p50_s;  // rank 0: every rank's, from the first baseline
    long long first_batch = 0;
    for (const auto& [b, k] : baseline_points(env.cfg)) {
      Baseline base = run_no_ddp(env, model, info, b, k);
      if (compute_p50_s.empty()) {
        compute_p50_s = std::move(base.compute_p50_s);
        first_batch = b;
      }
      if (base.row) emit(*base.row);
    }
    const auto variants = ddp_variants(env.cfg);
    for (int n : env.cfg.world_sizes) {
      if (runs_ddp_strategy(env.cfg))
        for (size_t vi = 0; vi < variants.size(); ++vi)
          run_ddp_group(env, model, info, n, vi, variants.size(), variants[vi], emit);
      for (const auto& strategy : sharded_strategies(env.cfg)) run_sharded_group(env, model, info, n, strategy, emit);
    }
    if (env.launch.rank == 0 && !compute_p50_s.empty() && on_stragglers)
      on_stragglers(stragglers_of(env, model, first_batch, compute_p50_s, rows));
  }
  if (env.world_pg) destroy_process_group(env.world_pg);
  return rows;
}

}  // namespace ddpbench
