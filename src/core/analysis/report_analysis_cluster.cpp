// `ddpbench report`'s analysis of collectives and cluster validation (schema 1.6): `comm` files'
// tables, telemetry summaries, stragglers, pair bandwidth and find-max-bs, and the helpers the
// render layer shares (report_detail.hpp). Torch-free.
#include "core/analysis/report_analysis_internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/analysis/busbw.hpp"
#include "core/stats/straggler.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench {

namespace report_detail {

std::optional<double> num_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* p = &j;
  for (const char* k : path) {
    if (!p->is_object()) return std::nullopt;
    const auto it = p->find(k);
    if (it == p->end()) return std::nullopt;
    p = &*it;
  }
  if (!p->is_number()) return std::nullopt;
  const double v = p->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

long long int_at(const nlohmann::json& j, const char* key) {
  const auto v = json_num_opt(j, key);
  return v && std::isfinite(*v) ? std::llround(*v) : -1;
}

bool gpu_available(const TelemetrySummary& s) { return s.gpu && s.gpu->available.value_or(false); }

std::string straggler_what(const nlohmann::json& e) {
  const size_t n = e["ranks"].size();
  return fmt::format("{}, batch {} per rank, {} rank{}", json_str_or(e, "model", "?"), int_at(e, "batch_per_rank"), n,
                     n == 1 ? "" : "s");
}

std::string max_batch_sentence(const nlohmann::json& m) {
  const auto mx = num_at(m, {"max_batch"});
  const auto rec = num_at(m, {"recommended_batch"});
  const auto margin = num_at(m, {"margin"});
  std::string s =
      fmt::format("find-max-bs ({}, {}, {}, {}x{}): ", json_str_or(m, "model", "?"), json_str_or(m, "precision", "?"),
                  json_str_or(m, "device", "?"), int_at(m, "image_size"), int_at(m, "image_size"));
  if (!mx || *mx < 1) return s + "no batch size trained (see the trials)";
  s += fmt::format("the largest batch per rank that trained is {:.0f}", *mx);
  if (json_true(m, "bound_reached")) s += " (the search bound, not memory, stopped it)";
  if (rec) s += fmt::format("; recommended {:.0f}", *rec);
  if (margin) s += fmt::format(" ({:g}% margin)", *margin * 100);
  return s;
}

}  // namespace report_detail

namespace {

// One statistic of a metric's stats, when both are there and finite.
std::optional<double> stat_of(const std::optional<MetricStats>& m, std::optional<double> MetricStats::*which) {
  if (!m) return std::nullopt;
  const std::optional<double>& v = (*m).*which;
  return v && std::isfinite(*v) ? v : std::nullopt;
}

bool has_sampled(const BenchResult& r) {
  return std::any_of(r.ranks.begin(), r.ranks.end(),
                     [](const RankSamples& rk) { return sampled_telemetry(rk) != nullptr; });
}

// Folds v into an optional extreme (less: minimum).
void fold(std::optional<double>& acc, const std::optional<double>& v, bool less) {
  if (!v) return;
  if (!acc || (less ? *v < *acc : *v > *acc)) acc = v;
}

}  // namespace
}  // namespace ddpbench

namespace ddpbench::report_analysis_internal {

// One table per file, collective and group of ranks, in the order the file lists them;
// rows by dtype, reduction, root, then size.
std::vector<CommTable> comm_tables(const std::vector<NamedResult>& files) {
  std::vector<CommTable> out;
  for (const auto& nf : files) {
    std::vector<CommTable> mine;
    for (const auto& c : nf.file.comm_results) {
      if (c.extra.is_object() && c.extra.contains("pair")) continue;  // `comm --pairs`: the pairs table
      auto t = std::find_if(mine.begin(), mine.end(), [&](const CommTable& x) {
        return x.collective == c.collective && x.world_size == c.world_size && x.nodes == c.nodes;
      });
      if (t == mine.end()) {
        mine.push_back({nf.name, device_type(nf.file), c.collective, c.world_size, c.nodes, c.label, {}});
        t = std::prev(mine.end());
      }
      t->rows.push_back(c);
    }
    for (auto& t : mine) {
      std::stable_sort(t.rows.begin(), t.rows.end(), [](const CommResult& a, const CommResult& b) {
        return std::tie(a.dtype, a.redop, a.root, a.bytes) < std::tie(b.dtype, b.redop, b.root, b.bytes);
      });
      out.push_back(std::move(t));
    }
  }
  return out;
}

ClusterFile cluster_of(const NamedResult& nf) {
  ClusterFile c;
  c.source = nf.name;
  c.device = device_type(nf.file);
  for (const auto& r : nf.file.results)
    if (has_sampled(r) || !r.burn_in.empty()) c.rows.push_back(r);
  if (nf.file.stragglers.is_array())
    for (const auto& e : nf.file.stragglers)
      if (e.is_object() && e.contains("ranks") && e["ranks"].is_array()) c.stragglers.push_back(e);
  for (const auto& x : nf.file.comm_results)
    if (x.extra.is_object() && x.extra.contains("pair")) c.pair_rows.push_back(x);
  if (nf.file.comm_pairs.is_object()) c.comm_pairs = nf.file.comm_pairs;
  if (nf.file.max_batch.is_object()) c.max_batch = nf.file.max_batch;
  return c;
}

bool cluster_empty(const ClusterFile& c) {
  return c.rows.empty() && c.stragglers.empty() && c.pair_rows.empty() && c.comm_pairs.empty() && c.max_batch.empty();
}

}  // namespace ddpbench::report_analysis_internal

namespace ddpbench {

TelemetryRowSummary summarize_telemetry(const BenchResult& row) {
  TelemetryRowSummary t;
  double cpu_sum = 0, rx_sum = 0, tx_sum = 0;
  int cpu_n = 0, rx_n = 0, tx_n = 0;
  std::set<std::string> reasons, unavailable;
  for (const auto& rk : row.ranks) {
    const TelemetrySummary* s = sampled_telemetry(rk);
    if (!s) continue;
    ++t.ranks;
    if (gpu_available(*s)) {
      ++t.gpu_ranks;
      const GpuTelemetry& g = *s->gpu;
      fold(t.min_sm_util_pct, stat_of(g.sm_util_pct, &MetricStats::mean), true);
      fold(t.max_temperature_c, stat_of(g.temperature_c, &MetricStats::max), false);
      fold(t.min_sm_clock_mhz, stat_of(g.sm_clock_mhz, &MetricStats::min), true);
      fold(t.max_power_w, stat_of(g.power_w, &MetricStats::max), false);
      if (const auto used = stat_of(g.mem_used_bytes, &MetricStats::max); used && g.mem_total_bytes.value_or(0) > 0)
        fold(t.max_mem_used_pct, 100.0 * *used / static_cast<double>(*g.mem_total_bytes), false);
      if (g.throttled_fraction.value_or(0) > 0) ++t.throttled_ranks;
      for (const auto& x : g.throttle_reasons.value_or(std::vector<std::string>{})) reasons.insert(x);
    } else {
      unavailable.insert(s->gpu ? s->gpu->reason.value_or("no reason recorded") : "no gpu object in the telemetry");
    }
    const HostTelemetry host = s->host.value_or(HostTelemetry{});
    if (const auto v = stat_of(host.cpu_util_pct, &MetricStats::mean)) cpu_sum += *v, ++cpu_n;
    if (host.peak_rss_bytes) fold(t.max_peak_rss_bytes, static_cast<double>(*host.peak_rss_bytes), false);
    if (host.net) {
      if (const auto v = stat_of(host.net->rx_bytes_per_s, &MetricStats::mean)) rx_sum += *v, ++rx_n;
      if (const auto v = stat_of(host.net->tx_bytes_per_s, &MetricStats::mean)) tx_sum += *v, ++tx_n;
    }
  }
  if (cpu_n) t.mean_cpu_util_pct = cpu_sum / cpu_n;
  if (rx_n) t.mean_net_rx_bytes_per_s = rx_sum / rx_n;
  if (tx_n) t.mean_net_tx_bytes_per_s = tx_sum / tx_n;
  t.throttle_reasons.assign(reasons.begin(), reasons.end());
  t.gpu_unavailable.assign(unavailable.begin(), unavailable.end());
  return t;
}

const BenchResult* largest_group(const std::vector<BenchResult>& rows, const std::string& model) {
  const BenchResult* best = nullptr;
  for (const auto& r : rows) {
    if (r.model != model || !has_sampled(r)) continue;
    if (!best || (r.ddp && !best->ddp) || (r.ddp == best->ddp && r.world_size > best->world_size)) best = &r;
  }
  return best;
}

std::vector<std::string> straggler_sentences(const nlohmann::json& e, const std::string& file) {
  std::vector<std::string> out;
  if (!e.is_object() || !e.contains("ranks") || !e["ranks"].is_array() || e["ranks"].empty()) return out;
  const double thr = num_at(e, {"threshold"}).value_or(0.95);
  const std::string what = straggler_what(e) + (file.empty() ? "" : ", " + file);
  const nlohmann::json* lowest = nullptr;
  for (const auto& x : e["ranks"]) {
    const auto sc = num_at(x, {"score"});
    if (!sc) continue;
    if (!lowest || *sc < *num_at(*lowest, {"score"})) lowest = &x;
    if (json_true(x, "straggler"))
      out.push_back(fmt::format("Straggler ({}): {} has score {:.3g} < {:g}", what, straggler_rank_words(x), *sc, thr));
  }
  if (out.empty() && lowest) out.push_back(fmt::format("No straggler ({}): {}", what, no_straggler_words(e)));
  return out;
}

}  // namespace ddpbench
