#include "core/result/row_metrics.hpp"

#include <cmath>

#include "core/util/json_util.hpp"

namespace ddpbench {
namespace {

std::optional<double> positive(std::optional<double> v) { return v && std::isfinite(*v) && *v > 0 ? v : std::nullopt; }

}  // namespace

Column RowMetric::column() const { return Column{key, header, unit, format}; }

const std::vector<RowMetric>& row_metrics() {
  static const std::vector<RowMetric> m = {
      {"ex_per_s_per_gpu", "per-rank ex/s", "ex/s", fmtcol::fixed(1),
       "per-rank ex/s = batch per rank / p50 step time (summary.ex_per_s_per_gpu)", kCheckable | kFromStepTimes,
       nullptr, [](const BenchResult& r) -> std::optional<double> { return r.summary.ex_per_s_per_gpu; }},
      {"ex_per_s_total", "aggregate ex/s", "ex/s", fmtcol::fixed(1),
       "aggregate ex/s = world size x per-rank ex/s (summary.ex_per_s_total)", kCheckable | kFromStepTimes, nullptr,
       [](const BenchResult& r) -> std::optional<double> { return r.summary.ex_per_s_total; }},
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
  };
  return m;
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
