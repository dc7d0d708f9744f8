#include "engine/bench/measure.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "core/config/instruments.hpp"
#include "core/launch/watchdog.hpp"
#include "core/result/bench_table.hpp"
#include "core/stats/burn_in.hpp"
#include "core/stats/gpu_peaks.hpp"
#include "core/stats/stats.hpp"
#include "core/telemetry/telemetry.hpp"
#include "core/util/errors.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/store_reads.hpp"
#include "engine/memory.hpp"
#include "engine/models/flops.hpp"
#include "engine/models/registry.hpp"
#include "engine/profile.hpp"
#include "engine/timing.hpp"
#include "engine/train/checkpoint.hpp"

namespace ddpbench {

namespace {

// The one-value fields of RankStats, in transport order.
constexpr std::optional<double> RankStats::*kRankScalars[] = {
    &RankStats::peak_memory_bytes, &RankStats::wire_bytes_per_step,  &RankStats::steps_measured,
    &RankStats::subsample_stride,  &RankStats::peak_allocated_bytes, &RankStats::peak_reserved_bytes,
    &RankStats::peak_rss_bytes,    &RankStats::memory_reset_ok};
// Slots after the samples and before the windows: the breakdown, the scalars, the per-rank metrics.
size_t rank_fixed_slots() {
  return std::tuple_size_v<decltype(RankStats::breakdown_s)> + std::size(kRankScalars) + per_rank_metrics().size();
}
static_assert(std::tuple_size_v<decltype(RankStats::breakdown_s)> == std::size(kBreakdownComponents),
              "one breakdown slot per component");

}  // namespace

std::vector<double> RankStats::pack() const {
  std::vector<double> v(samples_s);
  v.reserve(samples_s.size() + rank_fixed_slots() + window_steps_per_s.size());
  for (const auto& t : breakdown_s) v.push_back(t.value_or(NAN));
  for (const auto field : kRankScalars) v.push_back((this->*field).value_or(NAN));
  for (size_t i = 0; i < per_rank_metrics().size(); ++i)
    v.push_back(i < metrics.size() ? metrics[i].value_or(NAN) : NAN);
  v.insert(v.end(), window_steps_per_s.begin(), window_steps_per_s.end());
  return v;
}

RankStats RankStats::unpack(const std::vector<double>& v, size_t iters) {
  if (v.size() < iters + rank_fixed_slots())
    throw std::runtime_error(
        fmt::format("a rank's measurements hold {} values, fewer than the {} samples and {} "
                    "fields every rank sends",
                    v.size(), iters, rank_fixed_slots()));
  RankStats r;
  auto at = v.begin() + static_cast<std::ptrdiff_t>(iters);
  r.samples_s.assign(v.begin(), at);
  const auto opt = [](double x) { return std::isnan(x) ? std::nullopt : std::optional<double>(x); };
  for (auto& t : r.breakdown_s) t = opt(*at++);
  for (const auto field : kRankScalars) r.*field = opt(*at++);
  for (size_t i = 0; i < per_rank_metrics().size(); ++i) r.metrics.push_back(opt(*at++));
  r.window_steps_per_s.assign(at, v.end());
  return r;
}

namespace {

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
    // the Reducer's kBackwardComputeStart..End, less the loss it also spans (its timer starts in
    // prepare_for_backward, before the loss; our forward counts the loss).
    c[Phase::backward_compute] =
        ph.backward_s - ph.last_backward_s + std::max(0.0, rt->backward_compute_s - ph.last_loss_s);
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
  auto model = make_model(name, model_args(cfg));
  if (cfg.freeze_backbone) freeze_backbone(*model, cfg.head, cfg.num_classes, cfg.image_size);
  return model;
}

}  // namespace

ModelPtr build_model(const SweepEnv& env, const std::string& name) { return build_model(env.cfg, name, env.device); }

namespace {

// A batch of `batch` examples as `cfg` configures them: token ids of a vocabulary of `vocab`
// (a language model), or images when `vocab` is 0.
SyntheticBatch batch_of(const RunConfig& cfg, int64_t vocab, long long batch, const c10::Device& device,
                        uint64_t seed) {
  if (vocab > 0) return make_token_batch(batch, cfg.seq_len, vocab, device, seed);
  auto b = make_synthetic_batch(batch, cfg.image_size, cfg.num_classes, device, seed);
  if (cfg.channels_last) b.input = b.input.contiguous(at::MemoryFormat::ChannelsLast);
  return b;
}

}  // namespace

ModelArgs model_args(const RunConfig& cfg) {
  ModelArgs a;
  a.num_classes = cfg.num_classes;
  a.image_size = cfg.image_size;
  a.seq_len = cfg.seq_len;
  a.layers = cfg.model_layers;
  a.width = cfg.model_width;
  return a;
}

SyntheticBatch synthetic_batch_for(const RunConfig& cfg, const std::string& name, long long batch,
                                   const c10::Device& device, uint64_t seed) {
  return batch_of(cfg, is_language_model(name) ? language_model_spec(name, model_args(cfg)).vocab : 0, batch, device,
                  seed);
}

Trainer make_trainer(const SweepEnv& env, ModelPtr model, std::unique_ptr<DistributedDataParallel> ddp, long long batch,
                     int grad_accum) {
  // Job rank r draws from cfg.seed + 1000 + r (unsigned: a seed near 2^63 wraps instead of overflowing).
  const unsigned long long seed =
      static_cast<unsigned long long>(env.cfg.seed) + 1000 + static_cast<unsigned long long>(env.launch.rank);
  auto b = batch_of(env.cfg, model->vocab_size(), batch, env.device, seed);
  return Trainer(std::move(model), std::move(ddp), std::move(b), env.device, env.cfg.precision, grad_accum,
                 zero_grad_set_to_none(env.cfg));
}

namespace {

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

}  // namespace

// (The contract is measure.hpp's.) With --duration every rank stops after the first
// iteration that ends at or after D on every rank of `pg`; each step's end time is kept for
// the burn-in windows.
Series run_series(const SweepEnv& env, Trainer& trainer, GroupGate* gate, const std::function<bool()>& check,
                  const c10::intrusive_ptr<c10d::ProcessGroup>& pg, const std::string& label,
                  const std::function<long long()>& wire_bytes) {
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
  // Instruments a run can switch off (core/config/instruments.hpp): the per-step counters, and
  // the breakdown's marks and Reducer timers.
  const bool counters = instrument_on(cfg.instruments_off, "counters");
  const bool timers = instrument_on(cfg.instruments_off, "timers");
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
    const auto preemptions = [] {  // involuntary context switches of this process (getrusage(2))
      rusage u{};
      return getrusage(RUSAGE_SELF, &u) == 0 ? static_cast<double>(u.ru_nivcsw) : NAN;
    };
    const double preempted_before = counters ? preemptions() : NAN;
    const double cpu_before = counters ? process_cpu_s() : NAN;
    timer.start();
    if (cfg.mode == "inference") (void)trainer.infer();
    else trainer.step(timers ? &timer : nullptr);
    const double s = timer.stop_s();
    if (it >= cfg.warmup) {
      if (burn_in) out.end_s.push_back(std::chrono::duration<double>(SteadyClock::now() - t0).count());
      if (counters) {
        out.metrics.add("preemptions_per_step", preemptions() - preempted_before);
        if (s > 0) out.metrics.add("cpu_cores", (process_cpu_s() - cpu_before) / s);
      }
      samples.push_back(s);
      if (progress) progress->iteration(static_cast<int>(samples.size()), planned);
      // Outside the timed span: our marks, and the Reducer's timers of this step.
      const StepPhases ph = timers ? trainer.phases(timer, s) : StepPhases{};
      const auto rt = timers && trainer.ddp() ? trainer.ddp()->last_iteration_times() : std::nullopt;
      if (ph.complete && (!trainer.ddp() || rt)) {
        const auto c = step_components(s, ph, rt);
        for (size_t k = 0; k < kNumBreakdownComponents; ++k) out.breakdown_sum[k] += c[k];
        ++out.breakdown_n;
      }
      if (wire_bytes) {
        out.wire_bytes_sum += static_cast<double>(wire_bytes() - wire_before);
        out.has_wire_bytes = true;
      }
    } else if (timers && trainer.ddp()) {
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
  for (auto& w : timing_warnings(row, env.cfg.iters_auto ? "raise --min-iters" : "run more --iters"))
    row.warnings.push_back(std::move(w));
  if (!env.device.is_cuda()) {
    // CPU ranks: the intra-op threads of the group's ranks on a host against the CPUs their
    // affinity masks cover together (ranks pinned to separate cores do not compete).
    std::vector<RankCpus> cpus;
    for (const auto& pl : env.placements) cpus.push_back({pl.host, pl.cpus});
    if (auto w = oversubscribed_warning(row.world_size, env.threads_per_rank, cpus)) row.warnings.push_back(*w);
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
    RankSamples rs = placed_rank(env.placements, r);
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
    rs.telemetry.comm_hook_wire_bytes_per_step = st.wire_bytes_per_step;
    for (size_t i = 0; i < st.metrics.size() && i < per_rank_metrics().size(); ++i)
      if (st.metrics[i]) rs.metrics[per_rank_metrics()[i]->key] = *st.metrics[i];
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
  if (peak_max) row.telemetry.peak_memory_bytes_max_over_ranks = static_cast<long long>(*peak_max);
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

RankStats rank_stats(const c10::Device& device, int rank, double duration_s, const Series& series) {
  RankStats st;
  st.samples_s = series.samples;
  st.metrics = series.metrics.values();
  // A breakdown covers every measured step or is left out.
  // (Over every measured step: with --duration `samples` may be a subsample of them.)
  if (series.breakdown_n > 0 && series.breakdown_n == series.steps_measured)
    for (size_t k = 0; k < kNumBreakdownComponents; ++k)
      st.breakdown_s[k] = series.breakdown_sum[k] / series.breakdown_n;
  if (series.has_wire_bytes && series.steps_measured > 0)
    st.wire_bytes_per_step = series.wire_bytes_sum / static_cast<double>(series.steps_measured);
  if (const long long peak = peak_memory_bytes(device); peak >= 0) st.peak_memory_bytes = static_cast<double>(peak);
  {
    const RankMemory m = read_memory_peaks(device, rank);
    st.peak_allocated_bytes = m.peak_allocated_bytes;
    st.peak_reserved_bytes = m.peak_reserved_bytes;
    st.peak_rss_bytes = m.peak_rss_bytes;
    st.memory_reset_ok = series.memory_reset_ok ? 1.0 : 0.0;
  }
  if (duration_s > 0) {
    st.steps_measured = static_cast<double>(series.steps_measured);
    st.subsample_stride = static_cast<double>(series.subsample_stride);
    // One "example" per step here: make_row scales by the examples per optimizer step.
    std::vector<StepEnd> ends;
    ends.reserve(series.end_s.size());
    for (double t : series.end_s) ends.push_back({t, 1.0});
    st.window_steps_per_s = window_throughput(ends, duration_s, burn_in_windows(duration_s));
  }
  return st;
}

namespace {

// Largest telemetry summary a rank publishes per row (its series are dropped beyond it).
constexpr size_t kMaxTelemetryBytes = 32 * 1024;

}  // namespace

// This rank's telemetry of the series just measured (contract in core/telemetry/telemetry.hpp).
nlohmann::json own_telemetry(const TelemetrySampler* sampler) {
  if (!sampler) return nlohmann::json(nullptr);
  nlohmann::json t = rounded_telemetry(sampler->summary());
  if (t.dump().size() > kMaxTelemetryBytes) {
    t.erase("series");
    t["series_dropped"] = fmt::format("the series exceeded {} bytes", kMaxTelemetryBytes);
  }
  return t;
}

// Every rank of a group publishes its telemetry under `key`/<rank> in the store (bounded
// by kMaxTelemetryBytes); rank 0 reads them after the group's gather, when all are set.
void publish_telemetry(const c10::intrusive_ptr<c10d::Store>& store, int rank, const TelemetrySampler* sampler,
                       const std::string& key) {
  const std::string text = own_telemetry(sampler).dump();
  store->set(fmt::format("{}/{}", key, rank), std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<nlohmann::json> collect_telemetry(const JobEnv& job, const std::string& key, int n) {
  std::vector<std::string> keys;
  for (int r = 0; r < n; ++r) keys.push_back(fmt::format("{}/{}", key, r));
  Deadline d(fmt::format("the store (rank 0), reading {} ranks' telemetry", n), job.timeout);
  std::vector<nlohmann::json> out;
  for (const auto& bytes : read_keys(job.store, StoreEndpoint{job.launch, job.store_prefix}, keys, true, job.timeout))
    out.push_back(nlohmann::json::parse(std::string(bytes.begin(), bytes.end()), nullptr, /*allow_exceptions=*/false));
  return out;
}

// Puts each rank's telemetry into the row and flags low utilization and throttling
// (core/telemetry/telemetry.hpp telemetry_flags). Warnings per code: the first kMaxNamed ranks by
// name, then one line counting the rest (every rank's flags stay in its telemetry).
void attach_telemetry(const RunConfig& cfg, BenchResult& row, const std::vector<nlohmann::json>& per_rank) {
  constexpr size_t kMaxNamed = 4;
  std::map<std::string, std::vector<RowWarning>> by_code;
  for (size_t r = 0; r < per_rank.size() && r < row.ranks.size(); ++r) {
    if (!per_rank[r].is_object()) continue;
    RankSamples& rs = row.ranks[r];
    rs.telemetry.sampled = per_rank[r].get<TelemetrySummary>();
    for (auto& w : telemetry_flags(*rs.telemetry.sampled, cfg.min_util_pct, rs.rank, rs.host))
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
  std::vector<const TelemetrySummary*> sampled;
  for (const auto& rs : row.ranks)
    if (rs.telemetry.sampled) sampled.push_back(&*rs.telemetry.sampled);
  if (auto over = series_over_ranks(sampled); !over.empty()) row.telemetry.series_over_ranks = std::move(over);
}

void attach_telemetry(const SweepEnv& env, BenchResult& row, const std::vector<nlohmann::json>& per_rank) {
  attach_telemetry(env.cfg, row, per_rank);
}

// --profile DIR: after a measured series, `profile_iters` more steps (untimed) traced by
// libtorch's profiler, one file per rank: DIR/<model>-<what>-rank<R>.json. Returns the
// file's record for the row ({} without --profile).
std::optional<ProfileRecord> profile_series(const SweepEnv& env, Trainer& trainer, const std::string& model,
                                            const std::string& what, GroupGate* gate) {
  if (env.cfg.profile_dir.empty()) return std::nullopt;
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
  ProfileRecord rec;
  rec.file = file;
  rec.profiler = profiler;
  rec.iterations = env.cfg.profile_iters;
  return rec;
}

ModelInfo model_info(const RunConfig& cfg, int rank, const std::string& name) {
  ModelInfo info;
  if (rank != 0) return info;
  if (is_language_model(name)) {  // counted from the shape: an 8B model is not built on rank 0's host for this
    const ModelArgs a = model_args(cfg);
    const TransformerSpec spec = language_model_spec(name, a);
    const ModelCount count = count_transformer(spec, a.seq_len);
    info.forward_macs = count.forward_macs;
    info.parameters = info.trainable_parameters = count.parameters;
    info.seq_len = a.seq_len;
    info.train_flops_per_example = static_cast<double>(a.seq_len) * palm_training_flops_per_token(spec, a.seq_len);
    return info;
  }
  auto m = build_cpu_model(cfg, name);
  info.forward_macs = forward_macs(*m, cfg.image_size);
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

void annotate_tokens(const ModelInfo& info, BenchResult& row) {
  if (info.seq_len <= 0) return;
  RowCompute& c = row.compute;
  c.seq_len = info.seq_len;
  c.tokens_per_s_per_gpu = row.summary.ex_per_s_per_gpu * static_cast<double>(info.seq_len);
  c.tokens_per_s = row.summary.ex_per_s_total * static_cast<double>(info.seq_len);
}

// Adds the compute (FLOPs, MFU) and loss-scaling sections to a row (rank 0).
void annotate(const SweepEnv& env, const ModelInfo& info, BenchResult& row, const Trainer& trainer,
              const Series& series) {
  const double train_flops = info.seq_len > 0
                                 ? info.train_flops_per_example
                                 : training_flops_per_example(info.forward_macs, info.head_macs, info.head_first_macs);
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
  annotate_tokens(info, row);
  if (const LossScaler* s = trainer.scaler()) {
    LossScaling& ls = row.telemetry.loss_scaling.emplace();
    ls.final_scale = s->current_scale();
    ls.skipped_steps = s->skipped_steps();
    ls.skipped_steps_measured = series.skipped_measured;
    ls.note =
        "rank 0's scaler, warm-up included in skipped_steps; DDP ranks share gradients, so they skip the same steps";
    // A skipped step does no optimizer update: timed ones make the row look faster.
    row.checks.fp16_skipped_steps_in_measurement = series.skipped_measured;
  }
}

ModelPtr build_model(const RunConfig& cfg, const std::string& name, const c10::Device& device) {
  auto model = build_cpu_model(cfg, name);
  model->to(device);
  if (cfg.channels_last) to_channels_last(*model);
  model->train();
  if (cfg.activation_checkpointing) enable_activation_checkpointing(*model);
  return model;
}

}  // namespace ddpbench
