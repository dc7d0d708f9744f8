// `ddpbench report`'s cluster-validation tables (schema 1.6): telemetry, stragglers, per-rank
// telemetry, burn-in, pair bandwidth and find-max-bs trials; and nccl-tests' table of one
// collective (comm_table). Torch-free.
#include "core/render/report_tables_internal.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/analysis/busbw.hpp"
#include "core/analysis/pairs.hpp"
#include "core/result/bench_table.hpp"
#include "core/stats/burn_in.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench::report_tables_internal {

namespace {

Value num_or_na(const std::optional<double>& v, double scale = 1) { return v ? Value(*v * scale) : Value(); }

// "1 of 4 (hw_thermal_slowdown, sw_thermal_slowdown)", "0 of 4".
std::string throttled_words(const TelemetryRowSummary& t) {
  std::string s = fmt::format("{} of {}", t.throttled_ranks, t.gpu_ranks);
  if (!t.throttle_reasons.empty()) s += fmt::format(" ({})", fmt::join(t.throttle_reasons, ", "));
  return s;
}

// The one note that says the GPU metrics were unavailable, with the reasons, for `rows`.
std::optional<std::string> unavailable_note(const std::vector<std::pair<std::string, TelemetryRowSummary>>& rows) {
  std::set<std::string> why;
  int ranks = 0, all = 0;
  for (const auto& [label, t] : rows) {
    why.insert(t.gpu_unavailable.begin(), t.gpu_unavailable.end());
    ranks += t.ranks - t.gpu_ranks;
    all += t.ranks;
  }
  if (why.empty()) return std::nullopt;
  return fmt::format(
      "GPU metrics unavailable{}: {}",
      ranks == all ? " (every rank; host metrics only)" : fmt::format(" on {} of {} rank samples", ranks, all),
      fmt::join(why, "; "));
}

// Telemetry codes of row warnings, in words under the telemetry and burn-in tables.
bool telemetry_code(const std::string& c) {
  return c == "low_gpu_util" || c == "gpu_throttled" || c == "throughput_drift";
}

// One line per rank of a row with telemetry: the rank and its telemetry summary.
struct RankTel {
  int rank = 0;
  std::string host;
  const TelemetrySummary* s = nullptr;
};

}  // namespace

Table telemetry_tab(const ClusterFile& c) {
  using Line = std::pair<const BenchResult*, TelemetryRowSummary>;
  std::vector<Line> lines;
  std::vector<std::pair<std::string, TelemetryRowSummary>> for_note;
  for (const auto& r : c.rows) {
    auto t = summarize_telemetry(r);
    if (t.ranks == 0) continue;
    for_note.emplace_back(r.label, t);
    lines.emplace_back(&r, std::move(t));
  }
  const bool gpu = std::any_of(lines.begin(), lines.end(), [](const Line& l) { return l.second.gpu_ranks > 0; });
  std::vector<Col<Line>> cols = {
      {{"model", "model", "", fmtcol::plain()}, [](const Line& l) { return Value(l.first->model); }},
      {{"run", "run", "", fmtcol::plain()}, [](const Line& l) { return Value(l.first->label); }},
      {{"batch_per_rank", "batch/rank", "examples", fmtcol::plain()},
       [](const Line& l) { return Value(l.first->batch_per_rank); }},
      {{"ranks", "ranks", "", fmtcol::plain()},
       [](const Line& l) { return Value(static_cast<long long>(l.second.ranks)); }},
  };
  if (gpu) {
    cols.push_back({{"min_sm_util_pct", "min SM util %", "%", fmtcol::fixed(1)},
                    [](const Line& l) { return num_or_na(l.second.min_sm_util_pct); }});
    cols.push_back({{"max_temperature_c", "max temp C", "C", fmtcol::fixed(0)},
                    [](const Line& l) { return num_or_na(l.second.max_temperature_c); }});
    cols.push_back({{"min_sm_clock_mhz", "min SM clock MHz", "MHz", fmtcol::fixed(0)},
                    [](const Line& l) { return num_or_na(l.second.min_sm_clock_mhz); }});
    cols.push_back({{"max_power_w", "max power W", "W", fmtcol::fixed(0)},
                    [](const Line& l) { return num_or_na(l.second.max_power_w); }});
    cols.push_back({{"max_mem_used_pct", "max GPU mem % of card", "%", fmtcol::fixed(1)},
                    [](const Line& l) { return num_or_na(l.second.max_mem_used_pct); }});
    cols.push_back({{"throttled", "throttled ranks", "", fmtcol::plain()}, [](const Line& l) -> Value {
                      if (l.second.gpu_ranks == 0) return {};
                      return throttled_words(l.second);
                    }});
  }
  cols.push_back({{"mean_cpu_util_pct", "CPU util %", "%", fmtcol::fixed(1)},
                  [](const Line& l) { return num_or_na(l.second.mean_cpu_util_pct); }});
  cols.push_back({{"max_peak_rss_bytes", "peak RSS", "bytes", fmtcol::bytes()},
                  [](const Line& l) { return num_or_na(l.second.max_peak_rss_bytes); }});
  cols.push_back({{"net_rx_mb_s", "net rx MB/s", "MB/s", fmtcol::fixed(2)},
                  [](const Line& l) { return num_or_na(l.second.mean_net_rx_bytes_per_s, 1e-6); }});
  cols.push_back({{"net_tx_mb_s", "net tx MB/s", "MB/s", fmtcol::fixed(2)},
                  [](const Line& l) { return num_or_na(l.second.mean_net_tx_bytes_per_s, 1e-6); }});
  Table t = make_table(
      "telemetry", fmt::format("Telemetry during the measured iterations: {}, {} ({})", c.device, c.label, c.source),
      {{"device", c.device}, {"source", c.source}}, cols, lines);
  t.notes.push_back(
      std::string(
          gpu ? "min SM util = lowest over ranks of each rank's mean SM utilization (NVML: a kernel was running, "
                "not how full the SMs were); max temp, max power: highest sample of any rank; min SM clock: "
                "lowest sample of any rank; max GPU mem % of card = largest memory used on any rank's GPU (NVML: "
                "every process on it) / the card's memory; throttled ranks: ranks with a clock-event reason in "
                "some sample; "
              : "") +
      "CPU util = mean over ranks of each rank's process CPU time / wall time (> 100% with several threads); peak RSS "
      "= "
      "largest over ranks; net MB/s (1e6 bytes/s) = mean over ranks on the process group's interface");
  if (const auto n = unavailable_note(for_note)) t.notes.push_back(*n);
  for (const auto& [r, sum] : lines)
    for (const auto& w : r->warnings)
      if (telemetry_code(w.code) && w.code != "throughput_drift")
        t.notes.push_back(fmt::format("{} {}: {}: {}", r->model, r->label, w.code, w.message));
  return t;
}

Table straggler_tab(const nlohmann::json& e) {
  std::vector<nlohmann::json> ranks(e["ranks"].begin(), e["ranks"].end());
  const auto ms = [](const char* key) {
    return [key](const nlohmann::json& x) { return num_or_na(json_num_opt(x, key), 1e3); };
  };
  const std::vector<Col<nlohmann::json>> cols = {
      {{"rank", "rank", "", fmtcol::plain()}, [](const nlohmann::json& x) { return Value(int_at(x, "rank")); }},
      {{"host", "host", "", fmtcol::plain()}, [](const nlohmann::json& x) { return Value(json_str_or(x, "host")); }},
      {{"local_rank", "local rank", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(int_at(x, "local_rank")); }},
      {{"gpu_index", "GPU", "", fmtcol::plain()},
       [](const nlohmann::json& x) -> Value {
         const long long g = int_at(x, "gpu_index");
         return g < 0 ? Value(std::string("cpu")) : Value(g);
       }},
      {{"gpu_uuid", "UUID", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(json_str_or(x, "gpu_uuid")); }},
      {{"bus_id", "bus id", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(json_str_or(x, "bus_id")); }},
      {{"compute_step_ms", "compute-only step ms", "ms", fmtcol::fixed(2)}, ms("compute_step_s")},
      {{"ddp_step_ms", "DDP step ms", "ms", fmtcol::fixed(2)}, ms("ddp_step_s")},
      {{"comm_wait_ms", "comm wait ms", "ms", fmtcol::fixed(2)}, ms("comm_wait_s")},
      {{"score", "score", "ratio", fmtcol::fixed(3)},
       [](const nlohmann::json& x) { return num_or_na(json_num_opt(x, "score")); }},
      {{"straggler", "straggler", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(std::string(json_true(x, "straggler") ? "STRAGGLER" : "")); }},
  };
  const double thr = json_num_opt(e, "threshold").value_or(0.95);
  Table t = make_table(
      "stragglers", fmt::format("Per-rank step times and straggler score: {} (threshold {:g})", straggler_what(e), thr),
      {{"model", json_str_or(e, "model")}, {"batch_per_rank", int_at(e, "batch_per_rank")}}, cols, ranks);
  t.notes.push_back(fmt::format(
      "score = the fastest rank's compute-only step / this rank's (1 = fastest; NVIDIA's resiliency extension), "
      "compute-only step = p50 of the rank's own steps without DDP, all ranks at the same time; DDP step = p50 in the "
      "largest DDP group; comm wait = mean exposed communication per step there; straggler: score < {:g}",
      thr));
  if (const auto n = json_str_or(e, "note"); !n.empty()) t.notes.push_back(n);
  return t;
}


Table rank_telemetry_tab(const BenchResult& r, const std::string& device) {
  std::vector<RankTel> lines;
  for (const auto& rk : r.ranks)
    if (const auto* s = sampled_telemetry(rk)) lines.push_back({rk.rank, rk.host, s});
  const bool gpu = std::any_of(lines.begin(), lines.end(), [](const RankTel& l) { return gpu_available(*l.s); });
  // One statistic of a metric, found by `metric` in the summary, times `scale`.
  using Find = std::function<const std::optional<MetricStats>*(const TelemetrySummary&)>;
  const auto at = [](Find metric, std::optional<double> MetricStats::*stat, double scale = 1) {
    return [metric, stat, scale](const RankTel& l) -> Value {
      const std::optional<MetricStats>* m = metric(*l.s);
      if (!m || !*m || !((**m).*stat)) return {};
      return Value(*((**m).*stat) * scale);
    };
  };
  const auto gpu_metric = [](std::optional<MetricStats> GpuTelemetry::*field) -> Find {
    return [field](const TelemetrySummary& s) { return s.gpu ? &((*s.gpu).*field) : nullptr; };
  };
  const Find cpu = [](const TelemetrySummary& s) { return s.host ? &s.host->cpu_util_pct : nullptr; };
  const auto net_metric = [](std::optional<MetricStats> NetTelemetry::*field) -> Find {
    return [field](const TelemetrySummary& s) { return s.host && s.host->net ? &((*s.host->net).*field) : nullptr; };
  };
  std::vector<Col<RankTel>> cols = {
      {{"rank", "rank", "", fmtcol::plain()}, [](const RankTel& l) { return Value(static_cast<long long>(l.rank)); }},
      {{"host", "host", "", fmtcol::plain()}, [](const RankTel& l) { return Value(l.host); }},
  };
  if (gpu) {
    cols.push_back({{"gpu_index", "GPU", "", fmtcol::plain()}, [](const RankTel& l) -> Value {
                      if (!gpu_available(*l.s)) return {};
                      return Value(l.s->gpu->index.value_or(-1));
                    }});
    cols.push_back({{"mean_sm_util_pct", "SM util %", "%", fmtcol::fixed(1)},
                    at(gpu_metric(&GpuTelemetry::sm_util_pct), &MetricStats::mean)});
    cols.push_back({{"mean_sm_clock_mhz", "SM clock MHz", "MHz", fmtcol::fixed(0)},
                    at(gpu_metric(&GpuTelemetry::sm_clock_mhz), &MetricStats::mean)});
    cols.push_back({{"max_temperature_c", "max temp C", "C", fmtcol::fixed(0)},
                    at(gpu_metric(&GpuTelemetry::temperature_c), &MetricStats::max)});
    cols.push_back({{"throttled", "throttled", "", fmtcol::plain()}, [](const RankTel& l) -> Value {
                      if (!gpu_available(*l.s)) return {};
                      const GpuTelemetry& g = *l.s->gpu;
                      const double f = g.throttled_fraction.value_or(0);
                      const std::vector<std::string> why = g.throttle_reasons.value_or(std::vector<std::string>{});
                      if (f <= 0 && why.empty()) return std::string("no");
                      return fmt::format("{:.0f}% ({})", f * 100, fmt::join(why, ", "));
                    }});
  }
  cols.push_back({{"mean_cpu_util_pct", "CPU util %", "%", fmtcol::fixed(1)}, at(cpu, &MetricStats::mean)});
  cols.push_back({{"net_rx_mb_s", "net rx MB/s", "MB/s", fmtcol::fixed(2)},
                  at(net_metric(&NetTelemetry::rx_bytes_per_s), &MetricStats::mean, 1e-6)});
  cols.push_back({{"net_tx_mb_s", "net tx MB/s", "MB/s", fmtcol::fixed(2)},
                  at(net_metric(&NetTelemetry::tx_bytes_per_s), &MetricStats::mean, 1e-6)});
  Table t = make_table("rank_telemetry",
                       fmt::format("Per-rank telemetry: {}, {}, batch {} per rank, {} {}", r.model, r.label,
                                   r.batch_per_rank, device, r.ddp ? "(largest DDP group)" : "(no DDP)"),
                       {{"model", r.model}, {"device", device}, {"world_size", static_cast<long long>(r.world_size)}},
                       cols, lines);
  t.notes.push_back(
      "each rank's mean over its samples (max temp: its highest sample; throttled: share of samples with "
      "a clock-event reason, and the reasons seen)");
  return t;
}

// Percentile of a few numbers (core/stats/stats), for the burn-in's min/median/max over ranks.
Table burn_in_tab(const BenchResult& r, const std::string& device) {
  const RowBurnIn& b = r.burn_in;
  const double window = b.window_s.value_or(0);
  const std::vector<BurnInRank>& per_rank = b.per_rank;
  size_t windows = 0;
  for (const auto& x : per_rank) windows = std::max(windows, x.ex_per_s.size());
  std::vector<size_t> idx(windows);
  for (size_t i = 0; i < windows; ++i) idx[i] = i;
  const bool many = per_rank.size() > kBurnInRankColumns;
  std::vector<Col<size_t>> cols = {
      {{"window", "window", "", fmtcol::plain()}, [](size_t i) { return Value(static_cast<long long>(i)); }},
      {{"start_s", "start s", "s", fmtcol::fixed(0)},
       [window](size_t i) { return Value(window * static_cast<double>(i)); }},
  };
  const auto at = [&per_rank](size_t k, size_t i) {
    return i < per_rank[k].ex_per_s.size() ? per_rank[k].ex_per_s[i] : NAN;
  };
  if (!many) {
    for (size_t k = 0; k < per_rank.size(); ++k)
      cols.push_back({{fmt::format("rank{}_ex_s", per_rank[k].rank), fmt::format("rank {} ex/s", per_rank[k].rank),
                       "ex/s", fmtcol::fixed(1)},
                      [at, k](size_t i) {
                        const double v = at(k, i);
                        return std::isfinite(v) ? Value(v) : Value();
                      }});
  } else {
    const auto over = [at, n = per_rank.size()](size_t i, double q) -> Value {
      std::vector<double> v;
      for (size_t k = 0; k < n; ++k)
        if (std::isfinite(at(k, i))) v.push_back(at(k, i));
      if (v.empty()) return {};
      return Value(percentile(v, q));
    };
    cols.push_back({{"min_ex_s", "min ex/s", "ex/s", fmtcol::fixed(1)}, [over](size_t i) { return over(i, 0); }});
    cols.push_back(
        {{"median_ex_s", "median ex/s", "ex/s", fmtcol::fixed(1)}, [over](size_t i) { return over(i, 50); }});
    cols.push_back({{"max_ex_s", "max ex/s", "ex/s", fmtcol::fixed(1)}, [over](size_t i) { return over(i, 100); }});
  }
  Table t = make_table(
      "burn_in",
      fmt::format("Burn-in: {}, {}, batch {} per rank, {}: ex/s per rank per {:g} s window over {:g} s", r.model,
                  r.label, r.batch_per_rank, device, window, b.duration_s.value_or(0)),
      {{"model", r.model}, {"device", device}, {"world_size", static_cast<long long>(r.world_size)}}, cols, idx);
  const double thr = b.drift_threshold_pct.value_or(kDriftThresholdPct);
  std::vector<std::string> all;
  std::vector<std::pair<double, std::string>> flagged;  // |change|, words
  int n = 0;
  for (const BurnInDrift& d : b.drift) {
    ++n;
    const std::string s =
        fmt::format("rank {} {:+.1f}% ({:.1f} -> {:.1f} ex/s{})", d.rank, d.change_pct, d.first_ex_per_s,
                    d.last_ex_per_s, d.resolution_pct > 0 ? fmt::format(", resolution {:.1f}%", d.resolution_pct) : "");
    all.push_back(s + (d.flagged ? " DRIFT" : ""));
    if (d.flagged) flagged.emplace_back(std::isfinite(d.change_pct) ? std::abs(d.change_pct) : 0, s);
  }
  // Many ranks: the largest changes first, at most kBurnInRankColumns of them named.
  std::stable_sort(flagged.begin(), flagged.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> named;
  for (size_t i = 0; i < flagged.size() && i < kBurnInRankColumns; ++i) named.push_back(flagged[i].second);
  if (flagged.size() > named.size()) named.push_back(fmt::format("and {} more", flagged.size() - named.size()));
  t.notes.push_back(fmt::format(
      "drift = (last window - first window) / first window; DRIFT when throughput fell by more than {:g}% plus the "
      "rank's resolution (two steps' share of a window: a window holds whole steps, so a smaller change can be "
      "rounding)",
      thr));
  if (n <= static_cast<int>(kBurnInRankColumns)) {
    if (!all.empty()) t.notes.push_back(fmt::format("drift: {}", fmt::join(all, "; ")));
  } else {
    t.notes.push_back(
        flagged.empty() ? fmt::format("drift: none of the {} ranks fell by more than {:g}% plus its resolution", n, thr)
                        : fmt::format("drift flagged on {} of {} ranks, largest first: {}", flagged.size(), n,
                                      fmt::join(named, "; ")));
  }
  for (const auto& w : r.warnings)
    if (w.code == "throughput_drift") t.notes.push_back(fmt::format("{}: {}", w.code, w.message));
  return t;
}

// `comm --pairs`: the summary's table (core/analysis/pairs.hpp pairs_table: one line per pair, the
// reference and the named slow nodes and links); a file without the summary gets the rows.
Table pairs_tab(const ClusterFile& c) {
  if (c.comm_pairs.is_object() && c.comm_pairs.contains("pairs") && c.comm_pairs.contains("participants")) {
    Table t = pairs_table(c.comm_pairs);
    t.title = fmt::format("Pair bandwidth (comm --pairs): {}, {}, {} ({})", t.title, c.device, c.label, c.source);
    return t;
  }
  std::vector<CommResult> rows = c.pair_rows;
  const auto round_of = [](const CommResult& x) { return int_at(x.extra, "round"); };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const CommResult& a, const CommResult& b) { return round_of(a) < round_of(b); });
  const auto name = [](const CommResult& x, size_t i) -> std::string {
    const auto& p = x.extra["pair"];
    return p.is_array() && p.size() > i && p[i].is_string() ? p[i].get<std::string>() : "?";
  };
  const std::vector<Col<CommResult>> cols = {
      {{"round", "round", "", fmtcol::plain()}, [&](const CommResult& x) { return Value(round_of(x)); }},
      {{"host_a", "host A", "", fmtcol::plain()}, [&](const CommResult& x) { return Value(name(x, 0)); }},
      {{"host_b", "host B", "", fmtcol::plain()}, [&](const CommResult& x) { return Value(name(x, 1)); }},
      {{"collective", "collective", "", fmtcol::plain()},
       [&](const CommResult& x) {
         const std::string dir = json_str_or(x.extra, "direction");
         if (dir == "a->b") return Value(x.collective + " A->B");
         if (dir == "b->a") return Value(x.collective + " B->A");
         return Value(x.collective);
       }},
      {{"size_bytes", "size", "bytes", fmtcol::bytes()}, [](const CommResult& x) { return Value(x.bytes); }},
      {{"time_us", "time us", "us", fmtcol::fixed(1)}, [](const CommResult& x) { return Value(x.time_us); }},
      {{"busbw_gbps", "GB/s", "GB/s", fmtcol::fixed(3)}, [](const CommResult& x) { return Value(x.busbw_gbps); }},
  };
  Table t = make_table("pairs", fmt::format("Pair bandwidth (comm --pairs): {}, {} ({})", c.device, c.label, c.source),
                       {{"device", c.device}, {"source", c.source}}, cols, rows);
  t.notes.push_back(
      "GB/s = busbw (1e9 bytes/s): sendrecv one direction at a time (bytes / receiver's time), "
      "allreduce on the two ranks (busbw = algbw for 2 ranks); pairs of one round ran at the same time");
  return t;
}

Table max_batch_tab(const ClusterFile& c) {
  const auto& m = c.max_batch;
  std::vector<nlohmann::json> trials;
  if (m.contains("trials") && m["trials"].is_array()) trials.assign(m["trials"].begin(), m["trials"].end());
  const std::vector<Col<nlohmann::json>> cols = {
      {{"trial", "trial", "", fmtcol::plain()},
       [&trials](const nlohmann::json& x) { return Value(static_cast<long long>(&x - trials.data()) + 1); }},
      {{"batch", "batch/rank", "examples", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(int_at(x, "batch")); }},
      {{"fits", "fits", "", fmtcol::plain()},
       [](const nlohmann::json& x) { return Value(std::string(json_true(x, "fits") ? "yes" : "no")); }},
      {{"peak_memory_bytes", "peak memory", "bytes", fmtcol::bytes()},
       [](const nlohmann::json& x) { return num_or_na(json_num_opt(x, "peak_memory_bytes")); }},
      {{"seconds", "time s", "s", fmtcol::fixed(2)},
       [](const nlohmann::json& x) { return num_or_na(json_num_opt(x, "seconds")); }},
      {{"error", "error", "", fmtcol::plain()}, [](const nlohmann::json& x) { return Value(json_str_or(x, "error")); }},
  };
  Table t = make_table("max_batch",
                       fmt::format("find-max-bs: {}, {}, {}, {}x{} images: trials in order",
                                   json_str_or(m, "model", "?"), json_str_or(m, "precision", "?"),
                                   json_str_or(m, "device", "?"), int_at(m, "image_size"), int_at(m, "image_size")),
                       {{"source", c.source}, {"model", json_str_or(m, "model")}}, cols, trials);
  t.notes.push_back(max_batch_sentence(m));
  if (const auto lim = json_num_opt(m, "memory_limit_bytes"); lim && *lim > 0)
    t.notes.push_back(fmt::format("memory limit {}", fmtcol::bytes()(Value(*lim))));
  t.notes.push_back(
      "grow by doubling until a batch fails, then bisect between the last that fit and the first that "
      "failed; recommended = largest that fits x (1 - margin), rounded down");
  return t;
}

}  // namespace ddpbench::report_tables_internal

namespace ddpbench {

Table comm_table(const CommTable& c) {
  const bool cpu = c.device.rfind("CPU", 0) == 0;
  const std::string u = cpu ? "rank" : "GPU";
  Table t = ddpbench::comm_table(fmt::format("Collective {}: {} {}{} ({}), {}, {}", c.collective, c.world_size, u,
                                             c.world_size == 1 ? "" : "s", c.label, c.device, c.source),
                                 c.rows);
  t.context = {{"device", c.device},
               {"source", c.source},
               {"collective", c.collective},
               {"world_size", static_cast<long long>(c.world_size)},
               {"nodes", static_cast<long long>(c.nodes)}};
  t.notes.push_back(
      "nccl-tests' columns (doc/PERFORMANCE.md): time = mean per operation, averaged over ranks; algbw = size / time; "
      "busbw = algbw x the collective's bus factor (docs/METHODOLOGY.md); #wrong = elements that differed from the "
      "expected result");
  std::set<std::pair<int, int>> runs;
  for (const auto& x : c.rows) runs.emplace(x.warmup, x.iters);
  if (runs.size() == 1)
    t.notes.push_back(
        fmt::format("{} warm-up and {} timed iterations per size", runs.begin()->first, runs.begin()->second));
  long long wrong = 0;
  for (const auto& x : c.rows)
    if (x.wrong > 0) wrong += x.wrong;
  if (wrong > 0) t.notes.push_back(fmt::format("WRONG RESULTS: {} elements differed from the expected values", wrong));
  return t;
}

}  // namespace ddpbench
