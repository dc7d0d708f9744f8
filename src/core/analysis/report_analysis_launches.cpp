// `ddpbench report`'s analysis, reading the files: every row as a Point, rows repeated across
// files counted once, one launch per configuration (the median), and each file's appendix
// object. Torch-free.
#include "core/analysis/report_analysis_internal.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <stdexcept>

#include "core/result/row_validation.hpp"
#include "core/stats/stats.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench::report_analysis_internal {

namespace {

// A row's breakdown and the communication facts behind the breakdown table. The mean over
// ranks is taken only when every component is a finite number (a foreign file's partial
// object is no breakdown).
BreakdownRow breakdown_of(const BenchResult& r) {
  BreakdownRow b;
  b.ddp = r.ddp;
  b.world_size = r.world_size;
  b.batch_per_rank = r.batch_per_rank;
  if (const auto& mean = r.breakdown.mean_over_ranks; mean && mean->complete()) {
    std::array<double, kNumBreakdownComponents> v{};
    for (size_t i = 0; i < kNumBreakdownComponents; ++i) v[i] = *mean->s[i];
    b.mean_s = v;
  }
  b.note = r.breakdown.note.value_or("");
  const auto& c = r.communication;
  if (c.buckets) b.buckets = static_cast<double>(*c.buckets);
  if (c.allreduce_bytes_per_step) b.allreduce_bytes_per_step = static_cast<double>(*c.allreduce_bytes_per_step);
  b.effective_busbw_gbps = c.effective_busbw_gbps;
  return b;
}

// An integer environment field for display; 0 when absent or not an integer.
long long safe_int(const nlohmann::json& e, const char* key) {
  try {
    return json_int_or<long long>(e, key, 0);
  } catch (const std::invalid_argument&) {
    return 0;
  }
}

// Distinct devices of a row's ranks: by GPU UUID, else host and PCI bus id, from the file's
// environment.ranks; a rank with neither counts as its own device. Ranks sharing one GPU
// count once; CPU ranks each count as one (a rank is the unit there).
int distinct_devices(const ResultFile& f, const BenchResult& r) {
  if (r.ranks.empty()) return std::max(1, r.world_size);
  std::map<long long, const nlohmann::json*> placed;
  if (const auto it = f.environment.find("ranks"); it != f.environment.end() && it->is_array())
    for (const auto& e : *it)
      if (e.is_object())
        if (const auto rk = json_num_opt(e, "rank")) placed[static_cast<long long>(*rk)] = &e;
  std::set<std::string> seen;
  for (const auto& rk : r.ranks) {
    if (rk.device.rfind("cuda", 0) != 0) return r.world_size;  // CPU ranks: one each
    const auto it = placed.find(rk.rank);
    const nlohmann::json* e = it == placed.end() ? nullptr : it->second;
    const std::string uuid = e ? json_str_or(*e, "gpu_uuid") : "";
    const std::string bus = e ? json_str_or(*e, "bus_id") : "";
    // Without either, "cuda:0" says nothing (CUDA_VISIBLE_DEVICES renumbers): the rank's own.
    seen.insert(!uuid.empty()  ? "uuid " + uuid
                : !bus.empty() ? "bus " + rk.host + " " + bus
                               : "rank " + std::to_string(rk.rank));
  }
  return std::max<int>(1, static_cast<int>(seen.size()));
}

// "the same job id J started S" when two rows carry the same launch object (schema 1.14: the
// job id and start time of the launch that measured them), "" otherwise.
std::string same_launch(const nlohmann::json& a, const nlohmann::json& b) {
  const auto id = [](const nlohmann::json& l) -> std::pair<std::string, std::string> {
    if (!l.is_object()) return {};
    const auto text = [&](const char* k) {
      const auto it = l.find(k);
      if (it == l.end() || it->is_null()) return std::string();
      return it->is_string() ? it->get<std::string>() : it->dump();
    };
    return {text("job_id"), text("started_utc")};
  };
  const auto x = id(a), y = id(b);
  if (x.first.empty() || x.second.empty() || x != y) return "";
  return fmt::format("the same job id {} started {}", x.first, x.second);
}

}  // namespace

// Flattens every row of every file into Points. Rows that row_problem refuses (the commands'
// reader, load_result, has left them out with a warning) are skipped here too. A row
// that repeats a row of an earlier file (the same configuration and either the same content or
// the same launch object) is counted once: it is named in the kept row's launch.repeats and in
// `repeats`, and left out.
std::vector<Point> collect_points(const std::vector<NamedResult>& files, std::vector<RepeatedLaunch>& repeats) {
  std::vector<Point> pts;
  struct Seen {
    size_t file;
    nlohmann::json content, launch;
  };
  std::vector<Seen> seen;  // parallel to pts
  for (size_t fi = 0; fi < files.size(); ++fi) {
    const NamedResult& nf = files[fi];
    for (const auto& r : nf.file.results) {
      if (!row_problem(r).empty()) continue;  // load_result named it (core/result/row_validation)
      const ConfigKey key = ConfigKey::of(nf.file, r);
      const nlohmann::json content = r;
      bool repeat = false;
      for (size_t i = 0; i < pts.size() && !repeat; ++i) {
        if (seen[i].file == fi || pts[i].key != key) continue;
        std::string why = seen[i].content == content ? "the same content" : same_launch(seen[i].launch, r.launch);
        if (why.empty()) continue;
        RepeatedLaunch rep{file_label(fi), pts[i].launch.file, why};
        pts[i].launch.repeats.push_back(rep);
        if (std::none_of(repeats.begin(), repeats.end(), [&](const RepeatedLaunch& x) {
              return x.file == rep.file && x.of == rep.of && x.why == rep.why;
            }))
          repeats.push_back(rep);
        repeat = true;
      }
      if (repeat) continue;
      seen.push_back({fi, content, r.launch});
      Point p;
      p.source = nf.name;
      p.launch.file = file_label(fi);
      p.launch.all = {p.launch.file};
      p.launch.source = nf.name;
      p.launch.row = r.index_in_file;
      p.launch.refs = {{p.launch.file, nf.name, r.index_in_file, r.summary.p50_s}};
      p.key = key;
      p.nodes = r.nodes;
      p.devices = distinct_devices(nf.file, r);
      p.summary = r.summary;
      p.p5_s = r.summary.p5_s;
      if (!(p.p5_s > 0)) {  // files of schema < 1.10: from every rank's samples
        std::vector<double> pooled;
        for (const auto& rk : r.ranks) pooled.insert(pooled.end(), rk.samples_s.begin(), rk.samples_s.end());
        p.p5_s = pooled.empty() ? r.summary.p50_s : percentile(pooled, 5);
      }
      p.tflops_per_gpu = r.compute.achieved_tflops_per_gpu;
      p.mfu = r.compute.mfu;
      p.facts = RowFacts::of(r);
      p.breakdown = breakdown_of(r);
      if (!r.memory.empty()) {
        p.peak_allocated_bytes = r.memory.max_over_ranks.peak_allocated_bytes;
        p.peak_reserved_bytes = r.memory.max_over_ranks.peak_reserved_bytes;
        p.peak_rss_bytes = r.memory.max_over_ranks.peak_rss_bytes;
        if (r.memory.model_state_bytes) p.model_state_bytes = static_cast<double>(r.memory.model_state_bytes->total());
      }
      p.peak_memory_bytes = row_peak_memory_bytes(r);  // the memory section, else telemetry's copy (every schema)
      pts.push_back(std::move(p));
    }
  }
  return pts;
}

// The same configuration measured by several launches: the launch with the median p50 (the
// slower of the two middle ones for an even count: of two launches the slower, since the
// faster of a pair overstates what a cluster delivers), so that every number of the row, its
// baseline and footnotes come from one launch, with how many launches there were and their
// spread of p50 ((slowest - fastest) / the chosen launch's). Never the fastest, and never
// the narrowest CI (which picks a short lucky run). Keys in first-seen order.
std::vector<Point> median_launches(const std::vector<Point>& pts) {
  std::map<ConfigKey, std::vector<const Point*>> by_key;
  std::vector<ConfigKey> order;
  for (const auto& p : pts) {
    auto& v = by_key[p.key];
    if (v.empty()) order.push_back(p.key);
    v.push_back(&p);
  }
  std::vector<Point> out;
  for (const auto& k : order) {
    const std::vector<const Point*>& v = by_key[k];
    std::vector<const Point*> sorted = v;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Point* a, const Point* b) { return a->summary.p50_s < b->summary.p50_s; });
    Point q = *sorted[sorted.size() / 2];  // odd: the median; even: the slower middle one
    if (v.size() > 1) {
      q.launch.launches = static_cast<int>(v.size());
      q.launch.all.clear();
      q.launch.repeats.clear();
      q.launch.refs.clear();
      for (const Point* x : v) {
        q.launch.all.push_back(x->launch.file);
        q.launch.refs.push_back(x->launch.refs.front());
        q.launch.repeats.insert(q.launch.repeats.end(), x->launch.repeats.begin(), x->launch.repeats.end());
      }
      q.launch.spread = (sorted.back()->summary.p50_s - sorted.front()->summary.p50_s) / q.summary.p50_s;
    }
    out.push_back(std::move(q));
  }
  return out;
}

nlohmann::json file_info(const NamedResult& nf, size_t index) {
  const auto& e = nf.file.environment;
  std::set<std::string> hosts;
  if (e.contains("hosts") && e["hosts"].is_array())
    for (const auto& h : e["hosts"])
      if (h.is_string()) hosts.insert(h.get<std::string>());
  return {{"label", file_label(index)},
          {"name", nf.name},
          {"device", device_type(nf.file)},
          {"created_utc", nf.file.created_utc},
          {"tool", nf.file.tool},
          {"torch", json_str_or(e, "torch")},
          {"cuda", json_str_or(e, "cuda")},
          {"nccl", json_str_or(e, "nccl")},
          {"backend", json_str_or(e, "backend")},
          {"world_size", safe_int(e, "world_size")},
          {"hosts", hosts.size()},
          {"complete", nf.file.complete},
          {"kind", nf.file.kind},
          {"rows", nf.file.results.size()},
          {"comm_rows", nf.file.comm_results.size()},
          {"rows_planned", nf.file.rows_planned},
          {"driver", json_str_or(e, "driver")},
          {"cpu_model", json_str_or(e, "cpu_model")},
          {"argv", nf.file.argv},
          {"nodes", e.contains("nodes") && e["nodes"].is_array() ? e["nodes"] : nlohmann::json::array()},
          {"warning", incomplete_warning(nf.name, nf.file)}};
}

}  // namespace ddpbench::report_analysis_internal
