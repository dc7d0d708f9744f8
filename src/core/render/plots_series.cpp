// The data series the plots draw: one per weak or strong scaling table (throughput, efficiency,
// latency and breakdown bars) and one per `comm` file (busbw against size). Torch-free.
#include "core/render/plots_internal.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>

#include "core/result/row_metrics.hpp"

namespace fs = std::filesystem;

namespace ddpbench::plots_internal {

namespace {
// ", 224x224" of an image model's plot title; "" for a language model's (its setup says "seq T").
std::string image_side(const ConfigKey& k) {
  return k.seq_len > 0 ? std::string() : fmt::format(", {}x{}", k.image_size, k.image_size);
}
}  // namespace

namespace {

// The anchors of a weak or strong table of `k` (batch: "batch_per_rank" or "global_batch" and its
// value) and of its breakdown table.
void anchor_series(Series& s, const ConfigKey& k, const char* kind, const char* batch_key, long long batch) {
  s.table = {kind, key_fields(k)};
  s.table.context.emplace_back(batch_key, std::to_string(batch));
  s.breakdown = {"breakdown", key_fields(k)};
  s.breakdown.context.emplace_back("scaling", k.scaling);
}

// One bar per breakdown row that has a breakdown: "no DDP", "1 rank", "2 ranks", ...; a size
// whose ranks shared GPUs (`shared`: world size -> distinct GPUs) says so: "2 ranks, 1 GPU".
void add_bars(Series& s, const std::vector<BreakdownRow>& rows, const std::map<int, int>& shared) {
  for (const auto& b : rows) {
    if (!b.mean_s) continue;
    std::array<double, kStacked.size()> ms{};
    for (size_t i = 0; i < kStacked.size(); ++i) ms[i] = (*b.mean_s)[static_cast<size_t>(kStacked[i].first)] * 1e3;
    std::string label = "no DDP";
    if (b.ddp) {
      const auto sh = shared.find(b.world_size);
      label = sh == shared.end()
                  ? fmt::format("{} {}{}", b.world_size, s.unit, b.world_size == 1 ? "" : "s")
                  : fmt::format("{} ranks, {} GPU{}", b.world_size, sh->second, sh->second == 1 ? "" : "s");
    }
    s.bars.emplace_back(label, ms);
  }
}

}  // namespace

// The context fields (Table::context, as text) every table of `k` has.
std::vector<std::pair<std::string, std::string>> key_fields(const ConfigKey& k) {
  return {{"device", k.device}, {"model", k.model}, {"setup", k.setup_label()}, {"image_size", std::to_string(k.image_size)}};
}

std::vector<CommSeries> comm_series_of(const Report& r) {
  std::vector<CommSeries> out;
  std::vector<std::string> sources;
  for (const auto& t : r.comm)
    if (std::find(sources.begin(), sources.end(), t.source) == sources.end()) sources.push_back(t.source);
  std::vector<std::string> stems;
  for (const auto& src : sources) {
    CommSeries s;
    std::string device;
    std::set<std::string> dtypes;
    for (const auto& t : r.comm)
      if (t.source == src)
        for (const auto& x : t.rows) dtypes.insert(x.dtype);
    for (const auto& t : r.comm) {
      if (t.source != src) continue;
      device = t.device;
      s.tables.push_back({"comm", {{"source", t.source}, {"collective", t.collective},
                                   {"world_size", std::to_string(t.world_size)}}});
      const bool cpu = t.device.rfind("CPU", 0) == 0;
      for (const auto& x : t.rows) {
        if (x.bytes <= 0 || !(x.busbw_gbps >= 0)) continue;  // a barrier has no size
        const std::string title = fmt::format("{}, {} {}{}{}", t.collective, t.world_size, cpu ? "rank" : "GPU",
                                              t.world_size == 1 ? "" : "s", dtypes.size() > 1 ? ", " + x.dtype : "");
        auto line = std::find_if(s.lines.begin(), s.lines.end(), [&](const auto& l) { return l.first == title; });
        if (line == s.lines.end()) {
          s.lines.push_back({title, {}});
          line = std::prev(s.lines.end());
        }
        line->second.emplace_back(static_cast<double>(x.bytes), x.busbw_gbps);
      }
    }
    if (s.lines.empty()) continue;
    for (auto& l : s.lines) std::sort(l.second.begin(), l.second.end());
    const std::string base = fs::path(src).stem().string();
    s.stem = "comm-" + slug(device + "-" + base) + "-busbw";
    for (int n = 2; std::find(stems.begin(), stems.end(), s.stem) != stems.end(); ++n)
      s.stem = fmt::format("comm-{}-{}-busbw", slug(device + "-" + base), n);
    stems.push_back(s.stem);
    s.what = fmt::format("{}, {}: bus bandwidth", device, src);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Series> series_of(const Report& r) {
  std::vector<Series> out;
  for (const auto& w : r.weak) {
    Series s;
    const ConfigKey& k = w.key;
    s.unit = unit_word(k);
    s.device = k.device;
    s.model = k.model;
    s.stem =
        slug(fmt::format("weak-{}-{}-{}-i{}-b{}", k.model, k.setup_label(), k.device, k.image_size, k.batch_per_rank));
    s.what = fmt::format("{}, {}, {}: weak scaling, batch {} per {}{}", k.model, k.setup_label(), k.device,
                         k.batch_per_rank, s.unit, image_side(k));
    s.setup = k.setup_label();
    s.seq_len = k.seq_len;
    s.size = fmt::format("batch {} per {}", k.batch_per_rank, s.unit);
    anchor_series(s, k, "weak", "batch_per_rank", k.batch_per_rank);
    // A row whose ranks shared a GPU measures sharing, not scaling: never a point of a curve.
    std::map<int, int> shared;
    // The efficiency of every row rests on the table's baseline row too (the 1-rank DDP row).
    const RowWarning* base_void = w.baseline_kind == WeakTable::Baseline::no_ddp || w.rows.empty()
                                      ? nullptr
                                      : undermining_warning(w.rows.front().facts.warnings, "weak_scaling_efficiency");
    std::vector<std::string> voided;
    for (const auto& x : w.rows) {
      if (x.shared_gpu) {
        shared[x.world_size] = x.devices;
        continue;
      }
      const RowWarning* tv = undermining_warning(x.facts.warnings, "ex_per_s_per_gpu");
      const RowWarning* ev = tv                                                 ? tv
                             : w.baseline_kind == WeakTable::Baseline::no_ddp ? undermining_warning(
                                                                                    x.baseline_facts.warnings,
                                                                                    "weak_scaling_efficiency")
                                                                              : base_void;
      if (ev) voided.push_back(fmt::format("{} {}{}: {}", x.world_size, s.unit, x.world_size == 1 ? "" : "s", ev->code));
      s.rows.push_back({double(x.world_size), x.aggregate_ex_s, w.baseline_per_gpu_ex_s * x.devices,
                        100.0 * x.efficiency, x.per_gpu_ex_s, x.p5_s, x.p50_s, x.p95_s, tv ? 1.0 : 0.0,
                        ev ? 1.0 : 0.0});
    }
    s.voided = fmt::format("{}", fmt::join(voided, "; "));
    if (w.no_ddp_p50_s && *w.no_ddp_p50_s > 0)
      s.no_ddp_ex_s = static_cast<double>(k.batch_per_rank) * k.grad_accum / *w.no_ddp_p50_s;
    if (!w.rows.empty()) {
      const WeakRow& first = w.rows.front();
      s.file = first.launch.file;
      s.label = fmt::format("{}, {}, b{}, {} {}{} ({})", k.model, k.setup_label(), k.batch_per_rank, first.devices,
                            s.unit, first.devices == 1 ? "" : "s", s.file);
    }
    add_bars(s, w.breakdown, shared);
    out.push_back(std::move(s));
  }
  for (const auto& t : r.strong) {
    Series s;
    const ConfigKey& k = t.key;
    s.unit = unit_word(k);
    s.device = k.device;
    s.model = k.model;
    s.stem =
        slug(fmt::format("strong-{}-{}-{}-i{}-gb{}", k.model, k.setup_label(), k.device, k.image_size, t.global_batch));
    s.what = fmt::format("{}, {}, {}: strong scaling, global batch {}{}", k.model, k.setup_label(), k.device,
                         t.global_batch, image_side(k));
    s.setup = k.setup_label();
    s.seq_len = k.seq_len;
    s.size = fmt::format("global batch {}", t.global_batch);
    anchor_series(s, k, "strong", "global_batch", t.global_batch);
    const auto& base = t.rows.front();
    s.file = base.launch.file;
    s.label = fmt::format("{}, {}, global b{}, {} {}{} ({})", k.model, k.setup_label(), t.global_batch, base.devices,
                          s.unit, base.devices == 1 ? "" : "s", base.launch.file);
    std::map<int, int> shared;
    const RowWarning* base_void = undermining_warning(base.facts.warnings, "strong_scaling_efficiency");
    std::vector<std::string> voided;
    for (const auto& x : t.rows) {
      if (x.shared_gpu) {  // as for weak scaling: not a point of a curve
        shared[x.world_size] = x.devices;
        continue;
      }
      const RowWarning* tv = undermining_warning(x.facts.warnings, "ex_per_s_per_gpu");
      const RowWarning* ev = tv ? tv : base_void;
      if (ev) voided.push_back(fmt::format("{} {}{}: {}", x.world_size, s.unit, x.world_size == 1 ? "" : "s", ev->code));
      s.rows.push_back({double(x.world_size), x.aggregate_ex_s, base.aggregate_ex_s * x.devices / base.devices,
                        100.0 * x.efficiency, x.aggregate_ex_s / x.devices, x.p5_s, x.step_s, x.p95_s, tv ? 1.0 : 0.0,
                        ev ? 1.0 : 0.0});
    }
    s.voided = fmt::format("{}", fmt::join(voided, "; "));
    add_bars(s, t.breakdown, shared);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ddpbench::plots_internal
