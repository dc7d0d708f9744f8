// `ddpbench report`'s analysis (build_report): what the result files say, section by section
// (report_analysis_<section>.cpp), for core/render/report_tables to show. Torch-free.
#include "core/analysis/report_analysis.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/analysis/report_analysis_internal.hpp"
#include "core/result/row_memory.hpp"
#include "core/result/row_metrics.hpp"
#include "core/result/row_warnings.hpp"
#include "core/result/row_validation.hpp"
#include "core/stats/gpu_peaks.hpp"
#include "core/stats/straggler.hpp"
#include "core/util/errors.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench {

std::string file_label(size_t index) { return fmt::format("F{}", index + 1); }

std::string launch_words(const RowLaunch& l) {
  std::string s = l.file;
  if (l.launches > 1)
    s += fmt::format(": the {} p50 of {} launches ({}), spread {:.1f}%", l.launches % 2 ? "median" : "slower middle",
                     l.launches, fmt::join(l.all, ", "), 100.0 * l.spread.value_or(0.0));
  for (const auto& r : l.repeats) s += fmt::format("; {} repeats {} ({}): counted once", r.file, r.of, r.why);
  return s;
}

double ddp_overhead_by_throughput(double per_gpu_ex_s, double no_ddp_ex_s) { return 1.0 - per_gpu_ex_s / no_ddp_ex_s; }

std::string MfuPeak::short_label() const {
  if (!tflops) return unit.empty() ? basis : unit;
  return fmt::format("{}{}{:g} TFLOP/s", unit, unit.empty() ? "" : " ", *tflops);
}

std::string unit_word(const ConfigKey& k) { return k.device.rfind("CPU", 0) == 0 ? "rank" : "GPU"; }

RowFacts RowFacts::of(const BenchResult& r) {
  RowFacts f;
  f.self_check_passed = r.checks.passed();
  f.metrics = row_metric_values(r);
  f.warnings = r.warnings;
  f.stopping = r.stopping;
  f.peak_basis = r.compute.peak_basis.value_or("");
  f.peak_tflops = r.compute.peak_tflops;
  f.cv = row_cv(r);
  f.ci = row_ci_fraction(r);
  f.iterations = row_iterations(r);
  return f;
}

std::optional<double> RowFacts::metric(const std::string& key) const {
  const auto& all = row_metrics();
  for (size_t i = 0; i < all.size(); ++i)
    if (key == all[i].key) return metric_at(i);
  throw std::logic_error("no per-row metric '" + key + "' in core/result/row_metrics");
}

Report build_report(const std::vector<NamedResult>& files, const ReportOptions& opts) {
  using namespace report_analysis_internal;  // the section builders (report_analysis_internal.hpp)
  // Closed ranges that NaN and infinities fail too.
  if (opts.gpu_hour_usd && !(*opts.gpu_hour_usd > 0 && *opts.gpu_hour_usd <= kMaxGpuHourUsd))
    throw UsageError(
        fmt::format("--gpu-hour-cost {} must be > 0 and <= {} (USD per GPU-hour)", *opts.gpu_hour_usd, kMaxGpuHourUsd));
  if (opts.epochs < 1 || opts.epochs > kMaxEpochs)
    throw UsageError(fmt::format("--epochs {} must be 1..{}", opts.epochs, kMaxEpochs));
  if (opts.dataset_size < 1 || opts.dataset_size > kMaxReportDatasetSize)
    throw UsageError(fmt::format("--dataset-size {} must be 1..{}", opts.dataset_size, kMaxReportDatasetSize));
  const SummaryTargets& tg = opts.targets;
  if (!(tg.min_efficiency > 0 && tg.min_efficiency <= 1))
    throw UsageError(
        fmt::format("--target-efficiency {} must be a fraction in (0, 1] (0.85 for 85%)", tg.min_efficiency));
  if (!(tg.max_exposed_comm >= 0 && tg.max_exposed_comm <= 1))
    throw UsageError(fmt::format("--target-comm {} must be a fraction in [0, 1] (0.15 for 15%)", tg.max_exposed_comm));
  if (tg.min_per_gpu_ex_s && !(*tg.min_per_gpu_ex_s > 0 && std::isfinite(*tg.min_per_gpu_ex_s)))
    throw UsageError(fmt::format("--target-ex-s {} must be a positive number of ex/s per GPU", *tg.min_per_gpu_ex_s));
  check_model_targets(tg);

  Report rep;
  // A file given twice (the same content) counts once in every section; rows given twice in
  // different files (the same content, or the same launch) count once in the tables.
  std::vector<bool> repeated(files.size(), false);
  {
    std::vector<nlohmann::json> content;
    for (const auto& f : files) content.emplace_back(f.file);
    for (size_t i = 0; i < files.size(); ++i)
      for (size_t j = 0; j < i && !repeated[i]; ++j)
        if (!repeated[j] && content[i] == content[j]) {
          repeated[i] = true;
          rep.repeated_files.push_back(file_label(i));
          rep.repeats.push_back({file_label(i), file_label(j), "the same content"});
        }
  }
  std::vector<RepeatedLaunch> row_repeats;
  const std::vector<Point> every = collect_points(files, row_repeats);
  for (const auto& x : row_repeats)
    if (std::none_of(rep.repeats.begin(), rep.repeats.end(),
                     [&](const RepeatedLaunch& y) { return y.file == x.file && y.of == x.of; }))
      rep.repeats.push_back(x);
  std::stable_sort(rep.repeats.begin(), rep.repeats.end(), [](const RepeatedLaunch& a, const RepeatedLaunch& b) {
    return std::stoul(a.file.substr(1)) < std::stoul(b.file.substr(1));  // by file label: F2 before F10
  });
  std::vector<NamedResult> distinct;  // the files not wholly repeated, for the sections read per file
  std::vector<size_t> index;          // their positions in `files`
  for (size_t i = 0; i < files.size(); ++i)
    if (!repeated[i]) {
      distinct.push_back(files[i]);
      index.push_back(i);
    }
  std::vector<Point> all;
  std::copy_if(every.begin(), every.end(), std::back_inserter(all), plain_training);
  rep.per_rank = opts.per_rank;
  rep.comm = comm_tables(distinct);
  rep.convergence = convergence_groups(distinct);  // time-to-loss
  for (size_t i = 0; i < distinct.size(); ++i)
    if (ClusterFile c = cluster_of(distinct[i]); !cluster_empty(c)) {
      c.label = file_label(index[i]);
      rep.cluster.push_back(std::move(c));
    }
  const bool cluster_facts = std::any_of(rep.cluster.begin(), rep.cluster.end(), [](const ClusterFile& c) {
    return !c.stragglers.empty() || !c.pair_rows.empty() || !c.max_batch.empty();
  });
  if (rep.comm.empty() && !cluster_facts && std::none_of(every.begin(), every.end(), [](const Point& p) {
        return p.key.ddp || p.key.strategy != "ddp" || p.key.mode == "inference";
      }))
    throw UsageError(
        "the result files hold no DDP measurement and no collective result; pass files written by "
        "ddpbench run --json, ddpbench comm --json or ddpbench find-max-bs --json");
  for (const auto& c : rep.cluster) {
    for (const auto& e : c.stragglers)
      for (auto& line : straggler_sentences(e, c.label)) rep.findings.push_back(std::move(line));
    for (const char* kind : {"slow_nodes", "slow_links"})
      if (c.comm_pairs.contains(kind) && c.comm_pairs[kind].is_array())
        for (const auto& x : c.comm_pairs[kind])
          rep.findings.push_back(fmt::format("{} ({}): {}",
                                             std::string(kind) == "slow_nodes" ? "Slow node" : "Slow link", c.label,
                                             json_str_or(x, "message", "?")));
    if (c.comm_pairs.contains("outliers") && c.comm_pairs["outliers"] == false)
      rep.findings.push_back(
          fmt::format("Pairs ({}): no slow node or link among {} participants", c.label,
                      c.comm_pairs.contains("participants") ? c.comm_pairs["participants"].size() : 0));
    if (!c.max_batch.empty()) rep.findings.push_back(max_batch_sentence(c.max_batch) + ".");
  }
  // One row per configuration, every table from the same choice of launch (grouping by
  // ConfigKey, which holds strategy, mode and checkpointing, commutes with plain_training).
  const std::vector<Point> launches = median_launches(every);
  std::vector<Point> pts;
  std::copy_if(launches.begin(), launches.end(), std::back_inserter(pts), plain_training);

  // A weak-scaling table: one configuration but for the group size (and so the global
  // batch); strong scaling: the same, with the batch per rank varying instead.
  const FieldSet group = all_fields() & ~fields({ConfigField::world_size, ConfigField::ddp});
  for (const auto& rows : ddp_groups(pts, "weak", group & ~fields({ConfigField::global_batch})))
    rep.weak.push_back(weak_table(all, rows));
  for (const auto& rows : ddp_groups(pts, "strong", group & ~fields({ConfigField::batch_per_rank})))
    rep.strong.push_back(strong_table(all, rows));
  rep.comparison = comparison(all, pts);
  rep.impact = impact_tables(pts);
  rep.strategy = strategy_tables(every, launches);
  rep.memory = memory_tables(launches);
  rep.inference = inference_tables(launches);
  if (opts.gpu_hour_usd) {
    // One table per model, its setups and world sizes side by side (in the scaling tables' order).
    std::vector<std::string> models;
    std::map<std::string, std::vector<CostPoint>> by_model;
    const auto add = [&](const std::string& model, CostPoint p) {
      if (!by_model.count(model)) models.push_back(model);
      by_model[model].push_back(std::move(p));
    };
    for (const auto& w : rep.weak) {
      const std::string setup =
          fmt::format("{}, batch {} per {}", w.key.setup_label(), w.key.batch_per_rank, unit_word(w.key));
      for (const auto& r : w.rows)  // billed per device
        add(w.key.model, {w.key, setup, r.world_size, r.devices, examples_per_step(w.key) * r.world_size, r.mean_s,
                          r.launch, r.shared_gpu});
    }
    for (const auto& s : rep.strong) {
      const std::string setup = fmt::format("{}, global batch {}", s.key.setup_label(), s.global_batch);
      for (const auto& r : s.rows)
        add(s.key.model, {s.key, setup, r.world_size, r.devices, static_cast<double>(s.global_batch) * s.key.grad_accum,
                          r.mean_s, r.launch, r.shared_gpu});
    }
    // Several device types: each setup names its device.
    std::set<std::string> devices;
    for (const auto& [m, pts] : by_model)
      for (const auto& p : pts) devices.insert(p.key.device);
    for (const auto& m : models) {
      if (devices.size() > 1)
        for (auto& p : by_model[m]) p.setup += ", " + p.key.device;
      rep.cost.push_back(cost_table(m, by_model[m], opts));
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    rep.files.push_back(file_info(files[i], i));
    for (const auto& x : rep.repeats)
      if (x.file == file_label(i)) rep.files.back()["repeats"].push_back({{"of", x.of}, {"why", x.why}});
  }
  rep.summary = executive_summary(rep, files, opts.targets);
  return rep;
}

std::vector<ConvergenceGroup> convergence_groups(const std::vector<NamedResult>& files) {
  std::vector<ConvergenceGroup> out;
  for (const auto& f : files) {
    std::vector<ConvergenceGroup> mine;
    for (const auto& r : f.file.results) {
      if (nlohmann::json(r.convergence).empty()) continue;
      const std::string ds = r.convergence.dataset.value_or("?");
      auto it = std::find_if(mine.begin(), mine.end(),
                             [&](const ConvergenceGroup& g) { return g.model == r.model && g.dataset == ds; });
      if (it == mine.end()) {
        mine.push_back({f.name, f.file.environment.value("device_type", std::string("?")), r.model, ds, {}});
        it = mine.end() - 1;
      }
      it->rows.push_back(r);
    }
    for (auto& g : mine) {
      std::stable_sort(g.rows.begin(), g.rows.end(),
                       [](const BenchResult& a, const BenchResult& b) { return a.world_size < b.world_size; });
      out.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace ddpbench
