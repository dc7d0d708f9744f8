#include "core/result/row_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/util/json_util.hpp"

namespace ddpbench {
namespace {

std::optional<double> positive(std::optional<double> v) { return v && std::isfinite(*v) && *v > 0 ? v : std::nullopt; }

}  // namespace

Column RowMetric::column() const { return Column{key, header, unit, format}; }

namespace {

// The catalogue as written; row_metrics() gives each per-rank entry its getter.
std::vector<RowMetric> row_metric_catalogue() {
  return {
      {"ex_per_s_per_gpu", "per-rank ex/s", "ex/s", fmtcol::fixed(1),
       "per-rank ex/s = batch per rank / p50 step time (summary.ex_per_s_per_gpu)", kCheckable | kFromStepTimes,
       nullptr, [](const BenchResult& r) -> std::optional<double> { return r.summary.ex_per_s_per_gpu; }},
      {"ex_per_s_total", "aggregate ex/s", "ex/s", fmtcol::fixed(1),
       "aggregate ex/s = world size x per-rank ex/s (summary.ex_per_s_total)", kCheckable | kFromStepTimes, nullptr,
       [](const BenchResult& r) -> std::optional<double> { return r.summary.ex_per_s_total; }},
      {"tokens_per_s_per_gpu", "per-rank tokens/s", "tokens/s", fmtcol::fixed(0),
       "per-rank tokens/s = per-rank ex/s x tokens per sequence (language-model rows; compute.tokens_per_s_per_gpu)",
       kInReportTables | kCheckable | kInDiff | kFromStepTimes, "tokens/s per rank",
       [](const BenchResult& r) { return positive(r.compute.tokens_per_s_per_gpu); }},
      {"tokens_per_s", "aggregate tokens/s", "tokens/s", fmtcol::fixed(0),
       "aggregate tokens/s = world size x per-rank tokens/s (language-model rows; compute.tokens_per_s)",
       kInReportTables | kCheckable | kInDiff | kFromStepTimes, nullptr,
       [](const BenchResult& r) { return positive(r.compute.tokens_per_s); }},
      {"p50_s", "p50 s/iter", "s", fmtcol::fixed(4), "p50 = median step time over every rank's measured steps",
       kCheckable | kFromStepTimes, nullptr,
       [](const BenchResult& r) -> std::optional<double> { return r.summary.p50_s; }},
      {"p95_s", "p95 s/iter", "s", fmtcol::fixed(4), "p95 = 95th percentile of the step time over every rank's steps",
       kCheckable | kFromStepTimes, nullptr,
       [](const BenchResult& r) -> std::optional<double> { return r.summary.p95_s; }},
      {"exposed_comm", "exposed comm", "fraction", fmtcol::percent(),
       "exposed comm = exposed_comm_s / step_s of the row's breakdown (means over ranks)",
       kCheckable | kInDiff | kFromStepTimes, nullptr,
       [](const BenchResult& r) -> std::optional<double> {
         const auto exposed = r.breakdown.mean(Phase::exposed_comm);
         const auto step = positive(r.breakdown.mean(Phase::step));
         if (!exposed || !step) return std::nullopt;
         return *exposed / *step;
       }},
      {"peak_memory_bytes", "peak mem", "bytes", fmtcol::bytes(),
       "peak mem = the largest peak over the row's ranks: the CUDA caching allocator's peak allocated bytes on "
       "GPUs, the process's peak resident set (VmHWM) on CPUs",
       kInReportTables | kCheckable | kInDiff, "peak",
       [](const BenchResult& r) { return positive(row_peak_memory_bytes(r)); }},
      {"epoch_time_s", "epoch time", "s", fmtcol::duration(),
       "epoch time = optimizer steps per epoch (communication.steps_per_epoch: --dataset-size examples, default "
       "ImageNet-1k's 1,281,167, over the examples of one step) x the mean step time (the step statistic of every "
       "duration and cost)",
       kInReportTables | kCheckable | kInDiff | kFromStepTimes, "epoch",
       [](const BenchResult& r) -> std::optional<double> {
         const auto steps = positive(r.communication.steps_per_epoch);
         const double step = duration_step_s(r.summary);
         if (!steps || !(step > 0)) return std::nullopt;
         return *steps * step;
       }},
      {"preemptions_per_step", "preemptions/step", "1/step", fmtcol::fixed(1),
       "preemptions/step = involuntary context switches of a rank's process per measured step (getrusage(2) "
       "RUSAGE_SELF ru_nivcsw, every thread), mean over the rank's steps; the row's is the largest over its ranks",
       kInReportTables | kCheckable | kInDiff, "preempt", nullptr, PerRankReduction{Reduce::kMean, Reduce::kMax}},
      {"cpu_cores", "CPU cores", "cores", fmtcol::fixed(2),
       "CPU cores = a rank process's CPU time per measured step (user + system, every thread: clock_gettime(2) "
       "CLOCK_PROCESS_CPUTIME_ID) / the step's time, mean over the rank's steps; the row's is the mean over its "
       "ranks (the CPU a rank keeps busy: on a CPU rank, the budget its compute and Gloo's collectives share)",
       kCheckable | kInDiff, nullptr, nullptr, PerRankReduction{Reduce::kMean, Reduce::kMean}},
  };
}

}  // namespace

const std::vector<RowMetric>& row_metrics() {
  static const std::vector<RowMetric> m = [] {
    std::vector<RowMetric> all = row_metric_catalogue();
    for (auto& e : all)
      if (e.per_rank && !e.of)
        e.of = [key = std::string(e.key)](const BenchResult& r) -> std::optional<double> {
          const auto it = r.metrics.find(key);
          if (it == r.metrics.end() || !std::isfinite(it->second)) return std::nullopt;
          return it->second;
        };
    return all;
  }();
  return m;
}

const std::vector<const RowMetric*>& per_rank_metrics() {
  static const std::vector<const RowMetric*> m = [] {
    std::vector<const RowMetric*> out;
    for (const auto& e : row_metrics())
      if (e.per_rank) out.push_back(&e);
    return out;
  }();
  return m;
}

void RunningReduction::add(double v) {
  min = n == 0 ? v : std::min(min, v);
  max = n == 0 ? v : std::max(max, v);
  sum += v;
  ++n;
}

std::optional<double> RunningReduction::value(Reduce how) const {
  if (n == 0) return std::nullopt;
  switch (how) {
    case Reduce::kMean: return sum / static_cast<double>(n);
    case Reduce::kMax: return max;
    case Reduce::kMin: return min;
    case Reduce::kSum: return sum;
  }
  return std::nullopt;
}

std::optional<double> reduce_over(Reduce how, const std::vector<double>& values) {
  RunningReduction r;
  for (double v : values) r.add(v);
  return r.value(how);
}

void StepMetrics::add(const std::string& key, double value) {
  const auto& all = per_rank_metrics();
  size_t i = 0;
  while (i < all.size() && key != all[i]->key) ++i;
  if (i == all.size()) throw std::logic_error("no per-rank metric '" + key + "' in core/result/row_metrics");
  if (!std::isfinite(value)) return;
  acc_.resize(all.size());
  acc_[i].add(value);
}

std::vector<std::optional<double>> StepMetrics::values() const {
  const auto& all = per_rank_metrics();
  std::vector<std::optional<double>> out(all.size());
  for (size_t i = 0; i < acc_.size(); ++i) out[i] = acc_[i].value(all[i]->per_rank->over_steps);
  return out;
}

void reduce_rank_metrics(BenchResult& row) {
  for (const RowMetric* m : per_rank_metrics()) {
    std::vector<double> per_rank;
    for (const auto& rs : row.ranks)
      if (const auto it = rs.metrics.find(m->key); it != rs.metrics.end()) per_rank.push_back(it->second);
    if (const auto v = reduce_over(m->per_rank->over_ranks, per_rank)) row.metrics[m->key] = *v;
  }
}

const RowMetric* find_row_metric(const std::string& key) {
  for (const auto& m : row_metrics())
    if (key == m.key) return &m;
  return nullptr;
}

std::vector<std::string> row_metric_keys(MetricUse u) {
  std::vector<std::string> out;
  for (const auto& m : row_metrics())
    if (m.used_in(u)) out.push_back(m.key);
  return out;
}

std::vector<std::optional<double>> row_metric_values(const BenchResult& row) {
  std::vector<std::optional<double>> out;
  for (const auto& m : row_metrics()) out.push_back(m.of(row));
  return out;
}

double duration_step_s(const Summary& s) { return s.mean_s > 0 ? s.mean_s : s.p50_s; }

long long steps_per_epoch(long long dataset_size, long long examples_per_step) {
  if (dataset_size <= 0 || examples_per_step <= 0) return 0;
  return (dataset_size + examples_per_step - 1) / examples_per_step;
}

const RowWarning* undermining_warning(const std::vector<RowWarning>& warnings, const std::string& metric) {
  // Which metrics each warning code voids: "p95_s" alone, or every metric from step times.
  static const std::vector<std::pair<const char*, const char*>> kRules = {
      {"few_samples", "p95_s"},       {"noisy", "p95_s"},        {"oversubscribed", "*"},
      {"negative_ddp_overhead", "*"}, {"throughput_drift", "*"}, {"gpu_throttled", "*"},
  };
  const RowMetric* m = find_row_metric(metric);
  const bool from_times = !m || m->used_in(kFromStepTimes);
  for (const auto& w : warnings)
    for (const auto& [code, scope] : kRules)
      if (w.code == code && (std::string(scope) == "*" ? from_times : metric == scope)) return &w;
  return nullptr;
}

}  // namespace ddpbench
