// `ddpbench report`'s analysis of strategies and memory (schema 1.7): zero2/fsdp and activation
// checkpointing side by side, the memory each technique saves against fp32 DDP, and inference.
// Torch-free.
#include "core/analysis/report_analysis_internal.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace ddpbench::report_analysis_internal {

namespace {

int strategy_order(const std::string& s) { return s == "ddp" ? 0 : s == "zero2" ? 1 : s == "fsdp" ? 2 : 3; }

// Order of the lines of one world size: ddp, zero2, fsdp; checkpointing off then on; fp32 first.
bool line_before(const Point* a, const Point* b) {
  const auto t = [](const Point* p) {
    return std::make_tuple(p->key.world_size, strategy_order(p->key.strategy), p->key.strategy,
                           p->key.activation_checkpointing, p->key.precision != "fp32", p->key.precision, p->key.math);
  };
  return t(a) < t(b);
}

// The configuration a strategy/memory table is about: the key without what varies inside it.
ConfigKey strategy_group_key(const ConfigKey& k) {
  ConfigKey g = k;
  g.precision.clear();
  g.math.clear();
  g.strategy.clear();
  g.activation_checkpointing = false;
  g.world_size = 0;
  if (g.scaling == "weak") g.global_batch = 0;
  else g.batch_per_rank = 0;
  return g;
}

// Training rows that take part in the strategy tables (DDP-like rows: plain DDP or a sharded
// strategy; not the no-DDP baseline) of `launches` (one per configuration: median_launches),
// grouped by strategy_group_key, each group sorted by line_before.
std::vector<std::vector<const Point*>> strategy_groups(const std::vector<Point>& launches) {
  std::map<ConfigKey, std::vector<const Point*>> groups;
  for (const auto& p : launches)
    if (p.key.mode == "train" && (p.key.ddp || p.key.strategy != "ddp"))
      groups[strategy_group_key(p.key)].push_back(&p);
  std::vector<std::vector<const Point*>> out;
  for (auto& [k, rows] : groups) {
    std::sort(rows.begin(), rows.end(), line_before);
    out.push_back(std::move(rows));
  }
  return out;
}

double aggregate_ex_s(const Point& p) { return p.key.world_size * examples_per_step(p.key) / p.summary.p50_s; }

// The efficiency baseline of a line (StrategyRow::efficiency).
const Point* strategy_baseline(const std::vector<Point>& every, const std::vector<const Point*>& group,
                               const Point& p) {
  for (const Point* q : group)
    if (q->key.world_size == 1 && q->key.strategy == p.key.strategy &&
        q->key.activation_checkpointing == p.key.activation_checkpointing && q->key.precision == p.key.precision &&
        q->key.math == p.key.math && (p.key.scaling != "weak" || q->key.batch_per_rank == p.key.batch_per_rank))
      return q;
  if (p.key.scaling != "weak") return nullptr;
  return no_ddp_baseline(every, p);  // the same launch's when it has one
}

// "mixed precision (bf16) + activation checkpointing", "zero2", ...: what sets a line apart
// from the fp32 DDP line; "" when nothing does.
std::string technique_of(const Point& p) {
  std::vector<std::string> parts;
  if (p.key.strategy != "ddp") parts.push_back(p.key.strategy);
  if (p.key.cpu_offload) parts.push_back("CPU offload");
  if (p.key.precision != "fp32") parts.push_back("mixed precision (" + p.key.precision + ")");
  if (p.key.activation_checkpointing) parts.push_back("activation checkpointing");
  return fmt::format("{}", fmt::join(parts, " + "));
}

}  // namespace

// Rows the scaling, impact and comparison tables take: training rows of plain DDP (or the
// no-DDP baseline) without activation checkpointing; the others (ConfigKey tells them apart)
// are shown in the strategy, memory and inference tables.
bool plain_training(const Point& p) {
  return p.key.mode == "train" && p.key.strategy == "ddp" && !p.key.activation_checkpointing;
}

// `launches`: median_launches(every).
std::vector<StrategyTable> strategy_tables(const std::vector<Point>& every, const std::vector<Point>& launches) {
  std::vector<StrategyTable> out;
  for (const auto& rows : strategy_groups(launches)) {
    // A comparison needs two lines at one world size.
    std::map<int, int> per_size;
    for (const Point* p : rows) ++per_size[p->key.world_size];
    if (std::none_of(per_size.begin(), per_size.end(), [](const auto& kv) { return kv.second > 1; })) continue;
    StrategyTable t;
    t.key = rows.front()->key;
    for (const Point* p : rows) {
      StrategyRow r;
      r.world_size = p->key.world_size;
      r.launch = p->launch;
      r.facts = p->facts;
      r.strategy = p->key.strategy;
      r.activation_checkpointing = p->key.activation_checkpointing;
      r.precision = p->key.precision_label();
      r.aggregate_ex_s = aggregate_ex_s(*p);
      if (const Point* b = strategy_baseline(every, rows, *p))
        r.efficiency = r.aggregate_ex_s / (p->key.world_size * aggregate_ex_s(*b) / b->key.world_size);
      r.step_s = p->summary.p50_s;
      r.exposed_comm = exposed_fraction(*p);
      r.peak_allocated_bytes = p->peak_allocated_bytes;
      r.peak_reserved_bytes = p->peak_reserved_bytes;
      if (!p->peak_allocated_bytes) r.peak_rss_bytes = p->peak_rss_bytes;  // GPU rows: the device's memory counts
      r.model_state_bytes = p->model_state_bytes;
      r.peak_memory_bytes = p->peak_memory_bytes;
      t.rows.push_back(std::move(r));
    }
    out.push_back(std::move(t));
  }
  return out;
}

// `launches`: median_launches of every row.
std::vector<MemoryTable> memory_tables(const std::vector<Point>& launches) {
  std::vector<MemoryTable> out;
  for (const auto& rows : strategy_groups(launches)) {
    MemoryTable t;
    for (const Point* base : rows) {
      if (base->key.strategy != "ddp" || base->key.activation_checkpointing || base->key.precision != "fp32" ||
          !base->peak_memory_bytes || !(*base->peak_memory_bytes > 0))
        continue;
      // The first fp32 DDP line of its world size (and batch) is the baseline.
      const bool first = std::none_of(rows.begin(), rows.end(), [&](const Point* q) {
        return q != base && line_before(q, base) && q->key.world_size == base->key.world_size &&
               q->key.batch_per_rank == base->key.batch_per_rank && q->key.strategy == "ddp" &&
               !q->key.activation_checkpointing && q->key.precision == "fp32" && q->peak_memory_bytes;
      });
      if (!first) continue;
      if (t.rows.empty()) {
        t.key = base->key;
        // GPU rows measure the caching allocator (older files: the telemetry's copy of it).
        t.peak_kind = base->peak_allocated_bytes || unit_word(base->key) == "GPU" ? "peak allocated" : "peak RSS";
      }
      for (const Point* p : rows) {
        if (p->key.world_size != base->key.world_size || p->key.batch_per_rank != base->key.batch_per_rank) continue;
        const std::string technique = technique_of(*p);
        if (technique.empty() || !p->peak_memory_bytes) continue;
        MemoryRow r;
        r.world_size = p->key.world_size;
        r.launch = p->launch;
        r.baseline_file = base->launch.file;
        r.baseline_source = base->launch.source;
        r.baseline_row = base->launch.row;
        r.technique = technique;
        r.baseline_peak_bytes = *base->peak_memory_bytes;
        r.peak_bytes = *p->peak_memory_bytes;
        r.saved_bytes = r.baseline_peak_bytes - r.peak_bytes;
        r.saved = r.saved_bytes / r.baseline_peak_bytes;
        r.baseline_step_s = base->summary.p50_s;
        r.step_s = p->summary.p50_s;
        r.time_paid = r.step_s / r.baseline_step_s - 1.0;
        r.model_state_bytes = p->model_state_bytes;
        r.baseline_model_state_bytes = base->model_state_bytes;
        t.rows.push_back(std::move(r));
      }
    }
    if (!t.rows.empty()) out.push_back(std::move(t));
  }
  return out;
}

// `launches`: median_launches of every row.
std::vector<InferenceTable> inference_tables(const std::vector<Point>& launches) {
  std::map<ConfigKey, std::vector<const Point*>> groups;
  for (const auto& p : launches)
    if (p.key.mode == "inference") {
      ConfigKey g = p.key;
      g.world_size = 0;
      g.global_batch = 0;
      groups[g].push_back(&p);
    }
  std::vector<InferenceTable> out;
  for (auto& [g, rows] : groups) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Point* a, const Point* b) { return a->key.world_size < b->key.world_size; });
    InferenceTable t;
    t.key = rows.front()->key;
    for (const Point* p : rows) {
      InferenceRow r;
      r.world_size = p->key.world_size;
      r.launch = p->launch;
      r.aggregate_ex_s = aggregate_ex_s(*p);
      r.p50_s = p->summary.p50_s;
      r.p95_s = p->summary.p95_s;
      r.peak_memory_bytes = p->peak_memory_bytes;
      t.rows.push_back(std::move(r));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace ddpbench::report_analysis_internal
