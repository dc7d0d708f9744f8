#include "core/analysis/predict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/result/config_key.hpp"
#include "core/result/row_metrics.hpp"
#include "core/util/errors.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench {

std::string cost_model_name(CostModel m) { return m == CostModel::ring ? "ring" : "tree"; }

std::vector<CostModel> parse_cost_models(const std::string& text, const std::string& flag) {
  if (text == "ring") return {CostModel::ring};
  if (text == "tree") return {CostModel::tree};
  if (text == "both") return {CostModel::ring, CostModel::tree};
  throw UsageError(fmt::format("{} {}: unknown cost model; use ring, tree or both", flag, text));
}

std::string link_level_name(LinkLevel l) { return l == LinkLevel::intra ? "intra-node" : "inter-node"; }

bool has_cost_model(const std::string& collective) { return !cost_models_of(collective).empty(); }

std::vector<CostModel> cost_models_of_backend(const std::string& backend) {
  if (backend == "gloo") return {CostModel::ring};
  return {CostModel::ring, CostModel::tree};
}

std::vector<CostModel> cost_models_of(const std::string& collective) {
  if (collective == "allreduce") return {CostModel::ring, CostModel::tree};
  if (collective == "reduce_scatter" || collective == "all_gather") return {CostModel::ring};
  return {};
}

CostTerms cost_terms(const std::string& collective, CostModel model, int p, double n_bytes) {
  if (p < 1) throw UsageError(fmt::format("cost model of {}: world size {} is not positive", collective, p));
  if (!(n_bytes >= 0)) throw UsageError(fmt::format("cost model of {}: {} bytes is not a size", collective, n_bytes));
  const auto models = cost_models_of(collective);
  if (std::find(models.begin(), models.end(), model) == models.end())
    throw UsageError(
        fmt::format("{} has no {} cost model (modelled: allreduce ring and tree; reduce_scatter and "
                    "all_gather ring)",
                    collective, cost_model_name(model)));
  if (p == 1) return {0, 0};
  const double pm1 = p - 1;
  if (collective == "allreduce") {
    if (model == CostModel::ring) return {2 * pm1, 2 * pm1 / p * n_bytes};   // Patarasuk & Yuan 2009
    return {2 * std::ceil(std::log2(static_cast<double>(p))), 2 * n_bytes};  // pipelined double binary tree
  }
  return {pm1, pm1 / p * n_bytes};  // reduce_scatter, all_gather: ring (Thakur et al. 2005)
}

double model_time_s(const AlphaBeta& ab, const std::string& collective, CostModel model, int p, double n_bytes) {
  const CostTerms t = cost_terms(collective, model, p, n_bytes);
  return t.alpha_coef * ab.alpha_s + t.beta_coef * ab.beta_s_per_byte;
}

LinearFit fit_alpha_beta(const std::vector<CostTerms>& terms, const std::vector<double>& times_s) {
  if (terms.size() != times_s.size())
    throw UsageError(fmt::format("alpha-beta fit: {} points but {} times", terms.size(), times_s.size()));
  for (double t : times_s)
    if (!(t > 0) || !std::isfinite(t)) throw UsageError(fmt::format("alpha-beta fit: time {} s is not positive", t));
  // Weighted by 1/t²: regress 1 on (a/t, b/t) without intercept, by modified Gram-Schmidt QR.
  const size_t n = terms.size();
  std::vector<double> x1(n), x2(n);
  for (size_t i = 0; i < n; ++i) {
    x1[i] = terms[i].alpha_coef / times_s[i];
    x2[i] = terms[i].beta_coef / times_s[i];
  }
  const auto dot = [n](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
  };
  const double n1 = std::sqrt(dot(x1, x1)), n2 = std::sqrt(dot(x2, x2));
  const char* singular = "alpha-beta fit: the points do not fix both alpha and beta (two or more sizes are needed)";
  if (!(n1 > 0) || !(n2 > 0)) throw UsageError(singular);
  std::vector<double> q1(n), q2(n);
  for (size_t i = 0; i < n; ++i) q1[i] = x1[i] / n1;
  const double r12 = dot(q1, x2);
  for (size_t i = 0; i < n; ++i) q2[i] = x2[i] - r12 * q1[i];
  const double r22 = std::sqrt(dot(q2, q2));
  if (!(r22 > 1e-9 * n2)) throw UsageError(singular);
  for (auto& v : q2) v /= r22;
  const std::vector<double> ones(n, 1.0);
  const double c1 = dot(q1, ones), c2 = dot(q2, ones);
  LinearFit f;
  f.ab.beta_s_per_byte = c2 / r22;
  f.ab.alpha_s = (c1 - r12 * f.ab.beta_s_per_byte) / n1;

  double mean = 0;
  for (double t : times_s) mean += t;
  mean /= static_cast<double>(n);
  double ss_res = 0, ss_tot = 0;
  for (size_t i = 0; i < n; ++i) {
    const double fit = terms[i].alpha_coef * f.ab.alpha_s + terms[i].beta_coef * f.ab.beta_s_per_byte;
    ss_res += (fit - times_s[i]) * (fit - times_s[i]);
    ss_tot += (times_s[i] - mean) * (times_s[i] - mean);
    f.max_rel_residual = std::max(f.max_rel_residual, std::abs(fit - times_s[i]) / times_s[i]);
  }
  f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  return f;
}

double CommFit::bandwidth_gbps() const { return fit.ab.beta_s_per_byte > 0 ? 1.0 / fit.ab.beta_s_per_byte / 1e9 : 0.0; }

namespace {

LinkLevel level_of(int nodes) { return nodes > 1 ? LinkLevel::inter : LinkLevel::intra; }

// Why fit `c` of `rows` (indices into `all`) cannot be used for a prediction, "" when it can:
// no bandwidth (β ≤ 0), a bandwidth beyond any link, or times that fall as the size grows at
// one world size where the bandwidth term dominates (β·b ≥ α·a under the fit: beyond
// kMonotonicTolerance below the largest such time at a smaller size). Below that, in the
// latency regime, times of a few hundred microseconds scatter (thread wake-ups, Gloo's
// polling) and say nothing about the link.
std::string unusable_reason(const std::vector<CommResult>& all, const std::vector<size_t>& rows, const CommFit& c) {
  if (!(c.fit.ab.beta_s_per_byte > 0))
    return fmt::format("beta = {:.3g} s/byte, no bandwidth: the timings do not grow with size", c.fit.ab.beta_s_per_byte);
  if (c.bandwidth_gbps() > kMaxLinkGBps)
    return fmt::format("1/beta = {:.3g} GB/s, beyond any link (more than {:.0f} GB/s): the timings are flat",
                       c.bandwidth_gbps(), kMaxLinkGBps);
  std::vector<size_t> order;
  for (size_t i : rows) {
    const CostTerms t = cost_terms(c.collective, c.model, all[i].world_size, static_cast<double>(all[i].bytes));
    if (t.beta_coef * c.fit.ab.beta_s_per_byte >= t.alpha_coef * c.fit.ab.alpha_s) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(all[a].world_size, all[a].bytes) < std::make_pair(all[b].world_size, all[b].bytes);
  });
  for (size_t i = 1; i < order.size(); ++i) {
    const CommResult& r = all[order[i]];
    const CommResult* most = nullptr;
    for (size_t j = 0; j < i; ++j)
      if (all[order[j]].world_size == r.world_size && (!most || all[order[j]].time_us > most->time_us))
        most = &all[order[j]];
    if (most != nullptr && r.time_us < (1 - kMonotonicTolerance) * most->time_us)
      return fmt::format("on {} ranks the time falls as the size grows ({:.4g} us at {} bytes after {:.4g} us at {})",
                         r.world_size, r.time_us, r.bytes, most->time_us, most->bytes);
  }
  return "";
}

// One fit over `rows` (indices into `all`) under `model`; nullopt (with a note) when singular.
std::optional<CommFit> fit_group(const std::vector<CommResult>& all, const std::vector<size_t>& rows,
                                 const std::string& collective, const std::string& dtype, LinkLevel level,
                                 CostModel model, int world_size, std::vector<std::string>& notes) {
  CommFit c;
  c.collective = collective;
  c.dtype = dtype;
  c.level = level;
  c.model = model;
  c.world_size = world_size;
  std::set<int> sizes;
  std::vector<CostTerms> terms;
  std::vector<double> times;
  c.min_bytes = all[rows.front()].bytes;
  for (size_t i : rows) {
    const CommResult& r = all[i];
    sizes.insert(r.world_size);
    terms.push_back(cost_terms(collective, model, r.world_size, static_cast<double>(r.bytes)));
    times.push_back(r.time_us * 1e-6);
    c.min_bytes = std::min(c.min_bytes, r.bytes);
    c.max_bytes = std::max(c.max_bytes, r.bytes);
  }
  c.world_sizes.assign(sizes.begin(), sizes.end());
  c.points = rows.size();
  double cpu_s = 0, wall_s = 0;
  bool every_row = true;
  for (size_t i : rows) {
    const CommResult& r = all[i];
    every_row = every_row && r.cpu_cores && std::isfinite(*r.cpu_cores) && *r.cpu_cores >= 0;
    if (every_row) {
      cpu_s += *r.cpu_cores * r.time_us;
      wall_s += r.time_us;
    }
  }
  if (every_row && wall_s > 0) c.cpu_cores = cpu_s / wall_s;
  try {
    c.fit = fit_alpha_beta(terms, times);
  } catch (const UsageError&) {
    if (model == cost_models_of(collective).front())
      notes.push_back(fmt::format("{} {} {} on {} rank(s): not fitted, fewer than two distinct sizes", collective,
                                  dtype, link_level_name(level), fmt::join(c.world_sizes, ",")));
    return std::nullopt;
  }
  c.unusable = unusable_reason(all, rows, c);
  return c;
}

}  // namespace

std::vector<CommFit> fit_comm(const std::vector<CommResult>& rows, std::vector<std::string>& notes) {
  using GroupKey = std::tuple<std::string, std::string, LinkLevel, int>;  // collective, dtype, level, world size
  std::map<GroupKey, std::vector<size_t>> groups;
  size_t wrong = 0, untimed = 0, single = 0;
  std::set<std::string> unmodelled;
  for (size_t i = 0; i < rows.size(); ++i) {
    const CommResult& r = rows[i];
    if (!has_cost_model(r.collective)) {
      unmodelled.insert(r.collective);
      continue;
    }
    if (r.wrong > 0) ++wrong;
    else if (!(r.time_us > 0) || !std::isfinite(r.time_us) || r.bytes < 0) ++untimed;
    else if (r.world_size <= 1) ++single;
    else groups[{r.collective, r.dtype, level_of(r.nodes), r.world_size}].push_back(i);
  }
  if (wrong) notes.push_back(fmt::format("{} comm row(s) with #wrong > 0 left out of the fits", wrong));
  if (untimed) notes.push_back(fmt::format("{} comm row(s) without a positive time left out of the fits", untimed));
  if (single)
    notes.push_back(
        fmt::format("{} comm row(s) on 1 rank left out of the fits (no communication under the models)", single));
  if (!unmodelled.empty())
    notes.push_back(fmt::format("not fitted (no cost model here): {}", fmt::join(unmodelled, ", ")));

  std::vector<CommFit> fits;
  using LevelKey = std::tuple<std::string, std::string, LinkLevel>;
  std::map<LevelKey, std::vector<size_t>> pooled;
  std::map<LevelKey, int> world_sizes;
  for (const auto& [key, idx] : groups) {
    const auto& [collective, dtype, level, p] = key;
    for (CostModel m : cost_models_of(collective))
      if (auto f = fit_group(rows, idx, collective, dtype, level, m, p, notes)) fits.push_back(std::move(*f));
    auto& all = pooled[{collective, dtype, level}];
    all.insert(all.end(), idx.begin(), idx.end());
    ++world_sizes[{collective, dtype, level}];
  }
  for (const auto& [key, idx] : pooled) {
    if (world_sizes[key] < 2) continue;
    const auto& [collective, dtype, level] = key;
    for (CostModel m : cost_models_of(collective))
      if (auto f = fit_group(rows, idx, collective, dtype, level, m, 0, notes)) fits.push_back(std::move(*f));
  }
  return fits;
}

double OverlapTimeline::exposed_s() const { return std::max(0.0, comm_end_s - backward_end_s); }

double OverlapTimeline::span_s() const { return std::max(backward_end_s, comm_end_s); }

OverlapTimeline overlap_timeline(const std::vector<double>& bucket_bytes, const std::vector<double>& bucket_times_s,
                                 double backward_s, double cpu_share) {
  if (bucket_bytes.size() != bucket_times_s.size())
    throw std::invalid_argument("overlap_timeline: bucket sizes and times differ in length");
  if (!(cpu_share >= 0 && cpu_share <= 1))
    throw std::invalid_argument("overlap_timeline: the CPU share must lie in [0, 1]");
  if (!(backward_s >= 0) ||
      std::any_of(bucket_times_s.begin(), bucket_times_s.end(), [](double t) { return !(t >= 0); }))
    throw std::invalid_argument("overlap_timeline: a negative or undefined time");
  const size_t n = bucket_bytes.size();
  double total = 0;
  for (double b : bucket_bytes) total += b;
  // ready[i]: the backward work (s alone) after which bucket i can be reduced.
  std::vector<double> ready(n);
  double cum = 0;
  for (size_t i = 0; i < n; ++i) {
    cum += bucket_bytes[i];
    ready[i] = total > 0 ? backward_s * cum / total : backward_s;
  }
  // Rates while both run: the allreduce's share g of the budget, its speed g/φ, the backward's 1 − g.
  const double g = std::min(cpu_share, 0.5);
  const double comm_rate_shared = cpu_share > 0 ? g / cpu_share : 1.0;
  const double backward_rate_shared = 1.0 - g;
  OverlapTimeline out;
  double t = 0, done = 0;  // time; backward work done (s alone)
  bool backward_over = !(backward_s > 0);
  size_t i = 0;
  double left = n ? bucket_times_s[0] : 0;  // the current bucket's work left (s alone)
  // Events: the backward ends, bucket i becomes ready, bucket i ends. At most 2n + 1 steps.
  enum class Event { backward_ends, ready, bucket_ends };
  while (i < n) {
    const bool reducing = backward_over || done >= ready[i];
    const double rb = backward_over ? 0 : reducing ? backward_rate_shared : 1.0;
    const double rc = !reducing ? 0 : backward_over ? 1.0 : comm_rate_shared;
    double dt = std::numeric_limits<double>::infinity();
    Event ev = Event::backward_ends;
    if (!backward_over) dt = (backward_s - done) / rb;
    if (!backward_over && !reducing && (ready[i] - done) / rb < dt) {
      dt = (ready[i] - done) / rb;
      ev = Event::ready;
    }
    if (reducing && left / rc <= dt) {
      dt = left / rc;
      ev = Event::bucket_ends;
    }
    t += dt;
    if (!backward_over) done += rb * dt;
    if (reducing) left -= rc * dt;
    if (ev == Event::ready) done = ready[i];
    if (!backward_over && (ev == Event::backward_ends || backward_s - done <= 1e-12 * backward_s)) {
      done = backward_s;
      backward_over = true;
      out.backward_end_s = t;
    }
    if (ev == Event::bucket_ends) {
      out.comm_end_s = t;
      left = ++i < n ? bucket_times_s[i] : 0;
    }
  }
  if (!backward_over) out.backward_end_s = t + (backward_s - done);  // no buckets
  return out;
}

double exposed_comm_s(const std::vector<double>& bucket_bytes, const std::vector<double>& bucket_times_s,
                      double hideable_s) {
  return overlap_timeline(bucket_bytes, bucket_times_s, hideable_s, 0).exposed_s();
}

namespace {

// The ConfigKey fields two DDP rows of one weak-scaling series share: all but the group size.
FieldSet series_fields() { return all_fields() & ~fields({ConfigField::world_size, ConfigField::global_batch}); }

std::string hook_of(const BenchResult& r) {
  const std::string h = r.ddp_options.comm_hook.value_or("none");
  return h.empty() ? "none" : h;
}

// Bucket dtype of a hook the model covers; "" for hooks it does not (PowerSGD, top-k,
// hierarchical: other collectives, other byte counts).
std::string hook_dtype(const std::string& hook) {
  if (hook == "none" || hook == "allreduce") return "float32";
  if (hook == "fp16") return "float16";
  if (hook == "bf16") return "bfloat16";
  return "";
}

// A breakdown component (mean over ranks, s); nullopt when absent, negative or not finite.
std::optional<double> component(const BenchResult& r, Phase phase) {
  const auto v = r.breakdown.mean(phase);
  if (!v || !(*v >= 0)) return std::nullopt;
  return v;
}

std::vector<double> bucket_sizes(const BenchResult& r) {
  std::vector<double> out;
  for (const auto* sizes : {&r.communication.bucket_sizes_bytes, &r.checks.bucket_sizes_bytes}) {
    if (!*sizes) continue;
    for (long long b : **sizes)
      if (b > 0) out.push_back(static_cast<double>(b));
    if (!out.empty()) return out;
  }
  return out;
}

struct Measured {
  const BenchResult* row;
  bool same_file;
};

// A base row: the file it is in and the row.
using BaseRef = std::pair<const NamedResult*, const BenchResult*>;

// The notes gathered over all base rows, pushed after them: dtype substitutions, clamped
// alphas, and whether any point used the other link level's fit.
struct TrailingNotes {
  std::set<std::string> dtype_notes, clamped;
  bool substituted_any = false;
};

// What every base row's prediction reads: the run files, the options, the report of the runs,
// the allreduce fits and the ranks per node.
struct RowInputs {
  const std::vector<NamedResult>& runs;
  const PredictOptions& opts;
  const Report& rep;
  const std::vector<CommFit>& fits;
  int gpus_per_node;
};

// Checks the options (world sizes, gpus per node, models) and the files (at least one run and
// one comm file, each of its kind); throws UsageError naming the fix.
void check_inputs(const std::vector<NamedResult>& runs, const std::vector<NamedResult>& comms,
                  const PredictOptions& opts) {
  constexpr int kMaxWorld = 1'000'000;
  for (int p : opts.world_sizes)
    if (p < 1 || p > kMaxWorld)
      throw UsageError(fmt::format("--world-sizes {}: out of range; use 1..{}", p, kMaxWorld));
  if (opts.gpus_per_node < 0 || opts.gpus_per_node > kMaxWorld)
    throw UsageError(fmt::format("--gpus-per-node {}: out of range; use 1..{}", opts.gpus_per_node, kMaxWorld));
  if (opts.models.empty()) throw UsageError("--model: no cost model chosen; use ring, tree or both");
  if (runs.empty()) throw UsageError("predict needs a run result file (ddpbench run --json FILE)");
  for (const auto& f : runs)
    if (f.file.kind != "run")
      throw UsageError(
          fmt::format("{} is a {} result, not a run's; pass files of ddpbench comm with --comm, after "
                      "the run files",
                      f.name, f.file.kind));
  if (comms.empty())
    throw UsageError("predict needs allreduce timings: pass --comm FILE, written by ddpbench comm --json FILE");
  for (const auto& f : comms)
    if (f.file.kind != "comm")
      throw UsageError(
          fmt::format("--comm {} is a {} result; --comm takes files written by ddpbench comm", f.name, f.file.kind));
}

// The α–β fits of the comm files' rows (fit_comm, its notes into `notes`), the allreduce ones
// of the chosen models only; throws UsageError when no allreduce fit is left.
std::vector<CommFit> fit_allreduce(const std::vector<NamedResult>& comms, const PredictOptions& opts,
                                   std::vector<std::string>& notes) {
  std::vector<CommResult> comm_rows;
  for (const auto& f : comms) comm_rows.insert(comm_rows.end(), f.file.comm_results.begin(), f.file.comm_results.end());
  std::vector<CommFit> fits = fit_comm(comm_rows, notes);
  // Allreduce fits of the chosen models only (reduce_scatter and all_gather have just ring).
  fits.erase(std::remove_if(fits.begin(), fits.end(),
                            [&](const CommFit& c) {
                              return c.collective == "allreduce" &&
                                     std::find(opts.models.begin(), opts.models.end(), c.model) == opts.models.end();
                            }),
             fits.end());
  const bool have_allreduce =
      std::any_of(fits.begin(), fits.end(), [](const CommFit& c) { return c.collective == "allreduce"; });
  if (!have_allreduce)
    throw UsageError(
        "--comm files hold no allreduce timings at two or more sizes on 2+ ranks to fit alpha and beta; "
        "measure them with ddpbench comm");
  return fits;
}

// Refuses (UsageError) a chosen model whose allreduce fits are all unusable, and notes every
// unusable allreduce fit that is left out.
void refuse_unusable_fits(const std::vector<CommFit>& fits, const PredictOptions& opts,
                          std::vector<std::string>& notes) {
  for (CostModel model : opts.models) {  // a model with no usable allreduce fit predicts nothing
    const CommFit* refused = nullptr;
    bool usable = false;
    for (const auto& c : fits)
      if (c.collective == "allreduce" && c.model == model) {
        if (c.unusable.empty()) usable = true;
        else if (!refused) refused = &c;
      }
    if (!usable && refused)
      throw UsageError(fmt::format(
          "the {} {} allreduce fit ({} model) cannot be used: {}; predict makes no prediction from it (measure the "
          "allreduce again with ddpbench comm, over sizes up to 64 MiB or more)",
          refused->dtype, link_level_name(refused->level), cost_model_name(model), refused->unusable));
  }
  for (const auto& c : fits)
    if (!c.unusable.empty() && c.collective == "allreduce")
      notes.push_back(fmt::format("not used: the {} {} allreduce fit on {} rank(s) ({} model): {}", c.dtype,
                                  link_level_name(c.level), fmt::join(c.world_sizes, ","), cost_model_name(c.model),
                                  c.unusable));
}

// The models a base row of `backend` is predicted under: its backend's with --model auto,
// else the chosen ones.
std::vector<CostModel> models_of(const PredictOptions& opts, const std::string& backend) {
  return opts.models_from_backend ? cost_models_of_backend(backend) : opts.models;
}

// Ranks per node, into out.gpus_per_node and out.gpus_per_node_source: --gpus-per-node, else
// the most ranks a row of the run files ran on one node (at least 1).
void set_ranks_per_node(const std::vector<NamedResult>& runs, const PredictOptions& opts, Prediction& out) {
  if (opts.gpus_per_node > 0) {
    out.gpus_per_node = opts.gpus_per_node;
    out.gpus_per_node_source = "--gpus-per-node";
  } else {
    out.gpus_per_node = 1;
    for (const auto& f : runs)
      for (const auto& r : f.file.results)
        if (r.nodes >= 1 && r.world_size >= 1)
          out.gpus_per_node = std::max(out.gpus_per_node, (r.world_size + r.nodes - 1) / r.nodes);
    out.gpus_per_node_source = "the run files: the most ranks a row ran on one node";
  }
}

// The base rows, in file order: weak-scaling DDP rows with a breakdown, bucket sizes and a hook
// the model covers; the rows left out are counted in `notes`. Throws UsageError when none is left.
std::vector<BaseRef> select_base_rows(const std::vector<NamedResult>& runs, std::vector<std::string>& notes) {
  size_t no_breakdown = 0, strong = 0;
  std::set<std::string> hooks_skipped;
  std::vector<BaseRef> bases;
  for (const auto& f : runs)
    for (const auto& r : f.file.results) {
      if (!r.ddp || !(r.summary.p50_s > 0)) continue;
      if (!component(r, Phase::backward_compute) || !component(r, Phase::exposed_comm) || bucket_sizes(r).empty()) {
        ++no_breakdown;
        continue;
      }
      if (r.scaling != "weak") {
        ++strong;
        continue;
      }
      if (hook_dtype(hook_of(r)).empty()) {
        hooks_skipped.insert(hook_of(r));
        continue;
      }
      bases.push_back({&f, &r});
    }
  if (no_breakdown)
    notes.push_back(fmt::format("{} DDP row(s) without a breakdown or bucket sizes not used as a base", no_breakdown));
  if (strong)
    notes.push_back(
        fmt::format("{} strong-scaling DDP row(s) not used as a base (the predictor "
                    "keeps the batch per rank fixed)",
                    strong));
  if (!hooks_skipped.empty())
    notes.push_back(
        fmt::format("rows with comm hook {} not used as a base: the hook runs other collectives than "
                    "one allreduce per bucket",
                    fmt::join(hooks_skipped, ", ")));
  if (bases.empty())
    throw UsageError(
        "no weak-scaling DDP row with a step breakdown and bucket sizes in the run files (schema 1.5, "
        "plain/fp16/bf16 allreduce); measure one with ddpbench run");
  return bases;
}

// What the prediction takes from base row `r` of file `nf` (`key` its ConfigKey): its step and
// breakdown (s), the bytes each bucket puts on the wire, the weak-scaling baseline of `rep`.
// cpu_cores is left unset (cpu_cores_budget).
BaseRow fill_base_row(const NamedResult& nf, const BenchResult& r, const ConfigKey& key, const Report& rep) {
  BaseRow b;
  b.source = nf.name;
  b.comm_hook = hook_of(r);
  b.grad_accum = std::max(1, r.grad_accum);
  b.description = key.describe();
  if (b.comm_hook != "none") b.description += ", comm hook " + b.comm_hook;
  if (b.grad_accum > 1) b.description += fmt::format(", grad accum {}", b.grad_accum);
  b.world_size = r.world_size;
  b.nodes = std::max(1, r.nodes);
  b.batch_per_rank = r.batch_per_rank;
  b.dtype = hook_dtype(b.comm_hook);
  b.bucket_bytes = bucket_sizes(r);
  if (b.dtype != "float32") {  // fp16/bf16: the wire carries the compressed buckets
    const auto wire = r.communication.wire_bytes_per_step;
    const std::optional<double> full = r.communication.allreduce_bytes_per_step;
    const double ratio = wire && full && *full > 0 ? *wire / *full : 0.5;
    for (auto& v : b.bucket_bytes) v *= ratio;
  }
  b.step_p50_s = r.summary.p50_s;
  b.backward_compute_s = *component(r, Phase::backward_compute);
  b.backward_comm_s = component(r, Phase::backward_comm).value_or(0);
  b.overlap_s = component(r, Phase::overlap).value_or(0);
  b.exposed_comm_s = *component(r, Phase::exposed_comm);
  b.hideable_s = b.backward_compute_s / b.grad_accum;  // component() refuses negative values
  b.fixed_s = b.step_p50_s - b.exposed_comm_s;
  for (const auto& wt : rep.weak)
    if (same_on(wt.key, key, series_fields())) {
      b.baseline_per_gpu_ex_s = wt.baseline_per_gpu_ex_s;
      b.baseline = wt.baseline;
      break;
    }
  return b;
}

// The measured DDP rows of the base's series (configuration, hook, grad_accum) per world size,
// a row of the base's own file `nf` preferred.
std::map<int, Measured> measured_rows(const std::vector<NamedResult>& runs, const NamedResult& nf, const BaseRow& b,
                                      const ConfigKey& key) {
  // Measured rows of the same series (configuration, hook, grad_accum), the base's file first.
  std::map<int, Measured> measured;
  for (const auto& f : runs)
    for (const auto& q : f.file.results) {
      if (!q.ddp || !(q.summary.p50_s > 0) || hook_of(q) != b.comm_hook || std::max(1, q.grad_accum) != b.grad_accum)
        continue;
      if (!same_on(ConfigKey::of(f.file, q), key, series_fields())) continue;
      const bool same = &f == &nf;
      auto it = measured.find(q.world_size);
      if (it == measured.end()) measured.emplace(q.world_size, Measured{&q, same});
      else if (same && !it->second.same_file) it->second = Measured{&q, same};
    }
  return measured;
}

// Raises `cores` to what `metric` (cpu_cores) reads on `q`, when that is positive and larger.
void take_cores(const RowMetric& metric, const BenchResult& q, std::optional<double>& cores) {
  if (const auto c = metric.of(q); c && *c > 0 && *c > cores.value_or(0)) cores = c;
}

// BaseRow::cpu_cores of base `b` (in file `nf`, `key` its ConfigKey, `measured` its series):
// the cores budget on a CPU row; nullopt on GPU rows and where no row has the metric.
std::optional<double> cpu_cores_budget(const std::vector<NamedResult>& runs, const NamedResult& nf, const BaseRow& b,
                                       const ConfigKey& key, const std::map<int, Measured>& measured) {
  std::optional<double> cores;
  // On a CPU row the collective runs on the cores the backward runs on (Gloo on CPU tensors):
  // their budget is the most cores a row of the series on at most the base's ranks kept busy
  // (a rank waiting on the network reads fewer than its budget), the no-DDP baseline's among
  // them (the step alone, with nothing to wait for: a 2-rank base without a 1-rank DDP row
  // would otherwise divide by its own, lower, cores).
  if (!on_gpu(nf.file)) {
    const RowMetric* cores_metric = find_row_metric("cpu_cores");
    for (const auto& [p, m] : measured)
      if (p <= b.world_size) take_cores(*cores_metric, *m.row, cores);
    const FieldSet compute_fields = series_fields() & ~ddp_only_fields() & ~fields({ConfigField::ddp});
    for (const auto& f : runs)
      for (const auto& q : f.file.results)
        if (!q.ddp && q.world_size <= b.world_size && same_on(ConfigKey::of(f.file, q), key, compute_fields))
          take_cores(*cores_metric, q, cores);
  }
  return cores;
}

// How closely fit `c` matches `p` ranks: 2 for the fit of `p` itself, 1 for a pooled one, 0
// for another world size's.
int fit_rank(const CommFit& c, int p) { return c.world_size == p ? 2 : c.world_size == 0 ? 1 : 0; }

// The allreduce fit for `p` ranks on `nodes` nodes under `model`, usable ones only: wanted
// level first; the fit of `p` itself (comm measured at that size), then the pooled one,
// then that of the largest world size; the bucket dtype, then float32, then any. The
// check in refuse_unusable_fits guarantees a usable one for every model the allreduce has.
const CommFit* choose_fit(const std::vector<CommFit>& fits, const std::string& dtype, CostModel model, int nodes,
                          int p) {
  const LinkLevel want = level_of(nodes);
  const CommFit* fit = nullptr;
  for (LinkLevel lvl : {want, want == LinkLevel::intra ? LinkLevel::inter : LinkLevel::intra}) {
    for (const std::string& dt : {dtype, std::string("float32"), std::string()}) {
      for (const auto& c : fits) {
        if (c.collective != "allreduce" || c.model != model || c.level != lvl || !c.unusable.empty() ||
            (!dt.empty() && c.dtype != dt))
          continue;
        if (!fit || fit_rank(c, p) > fit_rank(*fit, p) ||
            (fit_rank(c, p) == 0 && fit_rank(*fit, p) == 0 && c.world_size > fit->world_size))
          fit = &c;
      }
      if (fit) break;
    }
    if (fit) break;
  }
  if (!fit) throw std::logic_error("predict: no usable allreduce fit survived the check");
  return fit;
}

// The α (s) and β (s/byte) of `fit` for the predictions: a negative α taken as 0, with a note
// into `clamped`.
AlphaBeta usable_ab(const CommFit* fit, CostModel model, std::set<std::string>& clamped) {
  AlphaBeta ab = fit->fit.ab;
  if (ab.alpha_s < 0) {  // noise at the small sizes; a negative latency would shrink T with p
    ab.alpha_s = 0;
    clamped.insert(
        fmt::format("the {} {} allreduce fit ({} model) has alpha < 0 ({:.3g} s, noise at small "
                    "sizes): 0 used in the predictions",
                    fit->dtype, link_level_name(fit->level), cost_model_name(model), fit->fit.ab.alpha_s));
  }
  return ab;
}

// The modelled allreduce time of each bucket (`bucket_bytes`, bytes) on `p` ranks, times `k`, s.
std::vector<double> bucket_times(const std::vector<double>& bucket_bytes, const AlphaBeta& ab, CostModel model, int p,
                                 double k) {
  std::vector<double> times;
  for (double bytes : bucket_bytes) times.push_back(k * model_time_s(ab, "allreduce", model, p, bytes));
  return times;
}

// φ of overlap_timeline at the fit used: the CPU the allreduce keeps busy in comm against
// this row's CPU (0 on GPU rows and where either is unmeasured).
double cpu_share_of(const BaseRow& b, const CommFit* fit) {
  if (!b.cpu_cores || !fit->cpu_cores) return 0.0;
  return std::clamp(*fit->cpu_cores / *b.cpu_cores, 0.0, 1.0);
}

// What the calibration of a base row under one model works with: the base, the α–β of its
// fit (α clamped) and φ at its own world size.
struct CalibrationInput {
  const BaseRow& b;
  AlphaBeta ab;
  CostModel model;
  double phi;
};

// The base's micro-step at its own world size with the modelled allreduce times × `kk` and a
// backward of `backward` s alone.
OverlapTimeline calibration_timeline(const CalibrationInput& in, double kk, double backward) {
  return overlap_timeline(in.b.bucket_bytes, bucket_times(in.b.bucket_bytes, in.ab, in.model, in.b.world_size, kk),
                          backward, in.phi);
}

// The backward alone (s) that, slowed by the allreduces × `kk` beside it, ends at the measured
// hideable_s (bisection); hideable_s itself when φ = 0.
double backward_alone(const CalibrationInput& in, double kk) {
  if (in.phi == 0) return in.b.hideable_s;
  double lo = 0, hi = in.b.hideable_s;
  for (int it = 0; it < 60; ++it) {
    const double mid = (lo + hi) / 2;
    (calibration_timeline(in, kk, mid).backward_end_s < in.b.hideable_s ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The exposed communication (s) of the base's own world size with the allreduce times × `kk`.
double exposed_at(const CalibrationInput& in, double kk) {
  return calibration_timeline(in, kk, backward_alone(in, kk)).exposed_s();
}

// The calibration of one base row under one model: its comm factor, its backward alone (s),
// and why it failed ("" when it did not).
struct ModelCalibration {
  double comm_factor = 1;
  double backward_alone_s = 0;
  std::string uncalibrated;
};

// The calibration of a base row on 2+ ranks: the factor k by which DDP's allreduces in the
// step are slower than comm's standalone ones, found from the base's measured exposed
// communication (exposed grows with k: bisection), and, where the allreduce shares the CPU
// with the backward (φ > 0), the backward alone: the one that, slowed by the allreduces
// beside it, takes the measured time (its end grows with it: bisection).
// A factor outside [1/kMaxCommFactor, kMaxCommFactor] (searched over a wider bracket so
// the note can say how far) leaves the row uncalibrated for that model: k = 1 shows the
// error at the measured sizes, and no unmeasured size is predicted from it.
ModelCalibration calibrate_model(const BaseRow& b, const std::vector<CommFit>& fits, CostModel model,
                                 std::set<std::string>& clamped) {
  ModelCalibration out;
  double k = 1;
  double alone = b.hideable_s;
  if (b.world_size >= 2) {
    const CommFit* fit = choose_fit(fits, b.dtype, model, b.nodes, b.world_size);
    const AlphaBeta ab = usable_ab(fit, model, clamped);
    const double phi = cpu_share_of(b, fit);
    const CalibrationInput in{b, ab, model, phi};
    if (b.exposed_comm_s > 0) {
      constexpr double kSearch = 1e6;
      double lo = 1.0 / kSearch, hi = kSearch;
      if (exposed_at(in, lo) <= b.exposed_comm_s && exposed_at(in, hi) >= b.exposed_comm_s) {
        for (int it = 0; it < 80; ++it) {
          const double mid = std::sqrt(lo * hi);
          (exposed_at(in, mid) < b.exposed_comm_s ? lo : hi) = mid;
        }
        k = std::sqrt(lo * hi);
        if (k > kMaxCommFactor || k < 1 / kMaxCommFactor) {
          out.uncalibrated = fmt::format(
              "the modelled allreduce times would need x {:.3g} to reproduce this row's exposed communication "
              "({:.4g} s), outside [1/{:.0f}, {:.0f}]: the --comm timings do not describe the links this run "
              "used",
              k, b.exposed_comm_s, kMaxCommFactor, kMaxCommFactor);
          k = 1;
        }
      } else {
        out.uncalibrated = fmt::format(
            "no factor in [1e-6, 1e6] on the modelled allreduce times reproduces this row's exposed "
            "communication ({:.4g} s) at its {} ranks",
            b.exposed_comm_s, b.world_size);
      }
    }
    alone = backward_alone(in, k);
  }
  out.comm_factor = k;
  out.backward_alone_s = alone;
  return out;
}

// Fills the measured values of `pt` from `q`, the series' row at its world size (s; backward
// per micro-step), and the prediction's relative error against its p50.
void add_measured(PredictedPoint& pt, const BenchResult& q, const BaseRow& b) {
  pt.measured_step_s = q.summary.p50_s;
  pt.measured_comm_s = component(q, Phase::backward_comm);
  pt.measured_exposed_s = component(q, Phase::exposed_comm);
  if (const auto bc = component(q, Phase::backward_compute)) pt.measured_backward_s = *bc / b.grad_accum;
  if (b.baseline_per_gpu_ex_s) pt.measured_efficiency = b.batch_per_rank / q.summary.p50_s / *b.baseline_per_gpu_ex_s;
  if (!pt.withheld) pt.error = (pt.step_s - q.summary.p50_s) / q.summary.p50_s;
}

// The prediction of calibrated base row `rp` at `p` ranks under `model`: the chosen fit's
// bucket times × the comm factor overlapped with the backward alone, the step (s) and
// efficiency, and the measured values where `measured` has that size; notes into `notes`.
PredictedPoint predict_point(const RowPrediction& rp, const RowInputs& in, const std::map<int, Measured>& measured,
                             int p, CostModel model, TrailingNotes& notes) {
  const BaseRow& b = rp.base;
  PredictedPoint pt;
  pt.world_size = p;
  pt.model = model;
  const auto m = measured.find(p);
  pt.nodes = m != measured.end() ? std::max(1, m->second.row->nodes) : (p + in.gpus_per_node - 1) / in.gpus_per_node;
  const LinkLevel want = level_of(pt.nodes);
  const CommFit* fit = choose_fit(in.fits, b.dtype, model, pt.nodes, p);
  pt.comm_measured_here = fit->world_size == p;
  pt.level = fit->level;
  pt.level_substituted = fit->level != want;
  notes.substituted_any = notes.substituted_any || pt.level_substituted;
  if (fit->dtype != b.dtype)
    notes.dtype_notes.insert(
        fmt::format("no {} allreduce fit: the {} buckets use the {} fit", b.dtype, b.comm_hook, fit->dtype));
  pt.ab = usable_ab(fit, model, notes.clamped);
  const std::vector<double> times = bucket_times(b.bucket_bytes, pt.ab, model, p, rp.comm_factor.at(model));
  for (double t : times) pt.comm_s += t;
  pt.cpu_share = p >= 2 ? cpu_share_of(b, fit) : 0;  // one rank reduces nothing
  const OverlapTimeline tl = overlap_timeline(b.bucket_bytes, times, rp.backward_alone_s.at(model), pt.cpu_share);
  pt.backward_s = tl.backward_end_s;
  pt.exposed_s = tl.exposed_s();
  // The base's step with its own backward and exposed communication replaced by this size's.
  pt.step_s = b.fixed_s - b.hideable_s + tl.span_s();
  // A model time that is not a positive, finite number (a base row whose compute split
  // leaves nothing at this size) is never printed as a step time: withheld, with why.
  if (!(pt.step_s > 0) || !std::isfinite(pt.step_s)) {
    pt.withheld = true;
    pt.withheld_reason = fmt::format("model time {:.3g} s is not positive", pt.step_s);
  }
  if (b.baseline_per_gpu_ex_s && !pt.withheld) pt.efficiency = b.batch_per_rank / pt.step_s / *b.baseline_per_gpu_ex_s;
  if (m != measured.end()) add_measured(pt, *m->second.row, b);
  return pt;
}

// Sets each point's backtest error (the largest relative error of the row's measured sizes
// under its model) and withholds the unmeasured points without a trustworthy bound.
void apply_backtest(RowPrediction& rp) {
  // The backtest: this row's predictions of every measured world size that communicates (2+
  // ranks), its own included, per model; a 1-rank size has no allreduce, and a step that small
  // next to the base's turns a few ms of the base's compute/communication split into a large
  // relative error no communicating size shows (its error is still printed in its row). An
  // unmeasured size is withheld when the backtest is above the limit, when it checked nothing
  // but the base's own size (which the calibration reproduces by construction), or when the
  // row could not be calibrated.
  const BaseRow& b = rp.base;
  for (auto& pt : rp.points) {
    std::optional<double> worst;
    bool other_size = false;
    for (const auto& q : rp.points)
      if (q.model == pt.model && q.error && (q.world_size >= 2 || q.world_size == b.world_size)) {
        worst = std::max(worst.value_or(0.0), std::abs(*q.error));
        other_size = other_size || q.world_size != b.world_size;
      }
    pt.backtest_error = worst;
    if (pt.measured_step_s || pt.withheld) continue;
    const auto unc = rp.uncalibrated.find(pt.model);
    if (unc != rp.uncalibrated.end()) pt.withheld_reason = "uncalibrated";
    else if (!worst || !other_size) pt.withheld_reason = "no backtest";
    else if (*worst > kMaxBacktestError) pt.withheld_reason = fmt::format("backtest above {:.0f}%", kMaxBacktestError * 100);
    pt.withheld = !pt.withheld_reason.empty();
  }
}

// The predictions from base row `r` of file `nf`: its BaseRow, its calibration per model, a
// point per world size (options and measured ones, ascending) and model, then the backtest.
RowPrediction predict_base_row(const NamedResult& nf, const BenchResult& r, const RowInputs& in,
                               TrailingNotes& notes) {
  RowPrediction rp;
  const ConfigKey key = ConfigKey::of(nf.file, r);
  rp.base = fill_base_row(nf, r, key, in.rep);
  const std::map<int, Measured> measured = measured_rows(in.runs, nf, rp.base, key);
  std::set<int> sizes(in.opts.world_sizes.begin(), in.opts.world_sizes.end());
  for (const auto& [p, m] : measured) sizes.insert(p);
  rp.base.cpu_cores = cpu_cores_budget(in.runs, nf, rp.base, key, measured);

  const std::vector<CostModel> row_models = models_of(in.opts, key.backend);
  std::map<CostModel, double> calibration;
  for (CostModel model : row_models) {
    const ModelCalibration c = calibrate_model(rp.base, in.fits, model, notes.clamped);
    if (!c.uncalibrated.empty()) rp.uncalibrated[model] = c.uncalibrated;
    calibration[model] = c.comm_factor;
    rp.backward_alone_s[model] = c.backward_alone_s;
  }
  rp.comm_factor = calibration;

  for (int p : sizes)
    for (CostModel model : row_models) rp.points.push_back(predict_point(rp, in, measured, p, model, notes));
  apply_backtest(rp);
  return rp;
}

// Appends the notes gathered over the base rows: substituted dtypes, clamped alphas, then the
// substituted link level.
void push_trailing_notes(const TrailingNotes& t, std::vector<std::string>& notes) {
  for (const auto& n : t.dtype_notes) notes.push_back(n);
  for (const auto& n : t.clamped) notes.push_back(n);
  if (t.substituted_any)
    notes.push_back(
        "link marked *: no allreduce fit of that level in the --comm files; the other level's "
        "alpha-beta is used (optimistic for inter-node sizes: measure ddpbench comm across nodes)");
}

}  // namespace

Prediction build_prediction(const std::vector<NamedResult>& runs, const std::vector<NamedResult>& comms,
                            const PredictOptions& opts) {
  check_inputs(runs, comms, opts);
  Prediction out;
  out.fits = fit_allreduce(comms, opts, out.notes);
  refuse_unusable_fits(out.fits, opts, out.notes);
  set_ranks_per_node(runs, opts, out);
  const std::vector<BaseRef> bases = select_base_rows(runs, out.notes);
  const Report rep = build_report(runs, ReportOptions{});
  const RowInputs in{runs, opts, rep, out.fits, out.gpus_per_node};
  TrailingNotes trailing;
  for (const auto& [nf, r] : bases) out.rows.push_back(predict_base_row(*nf, *r, in, trailing));
  push_trailing_notes(trailing, out.notes);
  return out;
}

namespace {

// The CPU cores comm's allreduce kept busy, per fit of `model`: "0.59 (2 ranks), 0.61 (3 ranks)".
std::string fit_cores_text(const std::vector<CommFit>& fits, CostModel model) {
  std::vector<std::string> parts;
  for (const auto& c : fits)
    if (c.collective == "allreduce" && c.model == model && c.cpu_cores && c.unusable.empty())
      parts.push_back(fmt::format("{:.3g} ({} {} ranks{})", *c.cpu_cores, c.dtype, fmt::join(c.world_sizes, ","),
                                  c.world_size == 0 ? " pooled" : ""));
  return parts.empty() ? std::string("none measured") : fmt::format("{}", fmt::join(parts, ", "));
}

std::function<std::string(const Value&)> micros() {
  return [](const Value& v) -> std::string {
    if (const auto* d = std::get_if<double>(&v)) return fmt::format("{:.2f} us", *d * 1e6);
    return "n/a";
  };
}

std::function<std::string(const Value&)> signed_percent() {
  return [](const Value& v) -> std::string {
    if (const auto* d = std::get_if<double>(&v)) return fmt::format("{:+.1f}%", *d * 100);
    return "n/a";
  };
}

Value opt(const std::optional<double>& v) { return v ? Value(*v) : Value(); }

// The table of the alpha-beta fits of the collectives, one row per fit, with the fitting
// method, the ranks per node and the prediction's notes under it.
Table comm_fit_table(const Prediction& p) {
  Table fit;
  fit.kind = "fit";
  fit.title = "alpha-beta fits of the collectives (ddpbench comm)";
  fit.columns = {
      {"collective", "collective", "", fmtcol::plain()},
      {"dtype", "dtype", "", fmtcol::plain()},
      {"link", "link", "", fmtcol::plain()},
      {"world_sizes", "ranks", "", fmtcol::plain()},
      {"model", "model", "", fmtcol::plain()},
      {"points", "points", "", fmtcol::plain()},
      {"min_bytes", "from", "bytes", fmtcol::size()},
      {"max_bytes", "to", "bytes", fmtcol::size()},
      {"alpha_s", "alpha", "s", micros()},
      {"beta_s_per_byte", "beta", "s/byte", fmtcol::sig3(), false},
      {"bandwidth_gbps", "1/beta GB/s", "GB/s", fmtcol::fixed(3)},
      {"r2", "R^2", "", fmtcol::fixed(5)},
      {"max_rel_residual", "max |resid|", "fraction", fmtcol::percent()},
  };
  bool two_point = false;
  for (const auto& c : p.fits) {
    std::string ws = fmt::format("{}", fmt::join(c.world_sizes, ","));
    if (c.world_size == 0) ws += " pooled";
    fit.rows.push_back({c.collective, c.dtype, link_level_name(c.level), ws, cost_model_name(c.model),
                        static_cast<long long>(c.points), c.min_bytes, c.max_bytes, c.fit.ab.alpha_s,
                        c.fit.ab.beta_s_per_byte, c.bandwidth_gbps(),
                        // Two points fix the two coefficients exactly: no residual to show.
                        c.points > 2 ? Value{c.fit.r2} : Value{}, c.points > 2 ? Value{c.fit.max_rel_residual} : Value{}});
    two_point = two_point || c.points <= 2;
  }
  if (two_point)
    fit.notes.push_back("R^2 and max |resid| n/a: a fit of two points goes through both (two coefficients), so it "
                        "has no residual to judge it by; measure three or more sizes (comm --stepfactor)");
  fit.notes.push_back(
      "least squares of time = a*alpha + b*beta over the sizes (weighted by 1/time^2, i.e. relative "
      "residuals), a and b the model's coefficients at each row's world size: allreduce ring "
      "a = 2(p-1), b = 2(p-1)/p*n; tree a = 2*ceil(log2 p), b = 2n; reduce_scatter/all_gather ring "
      "a = p-1, b = (p-1)/p*n (docs/METHODOLOGY.md)");
  fit.notes.push_back(fmt::format("ranks per node: {} ({}); a world size beyond it uses the inter-node fit",
                                  p.gpus_per_node, p.gpus_per_node_source));
  for (const auto& n : p.notes) fit.notes.push_back(n);
  return fit;
}

// The columns of a base row's prediction table (times in s, shares as fractions).
std::vector<Column> prediction_columns() {
  return {
      {"world_size", "ranks", "", fmtcol::plain()},
      {"nodes", "nodes", "", fmtcol::plain()},
      {"link", "link", "", fmtcol::plain()},
      {"model", "model", "", fmtcol::plain()},
      {"comm_source", "allreduce from", "", fmtcol::plain()},
      {"comm_s", "allreduce s", "s", fmtcol::sig3()},
      {"exposed_s", "exposed s", "s", fmtcol::sig3()},
      {"step_s", "step s", "s", fmtcol::sig3()},
      {"efficiency", "efficiency", "fraction", fmtcol::percent()},
      {"measured_step_s", "measured step s", "s", fmtcol::sig3()},
      {"error", "error", "fraction", signed_percent()},
      {"measured_comm_s", "measured comm s", "s", fmtcol::sig3()},
      {"measured_exposed_s", "measured exposed s", "s", fmtcol::sig3()},
      {"measured_efficiency", "measured efficiency", "fraction", fmtcol::percent()},
      {"backtest_error", "backtest +/-", "fraction", fmtcol::percent()},
      {"range", "predicted range", "", fmtcol::plain()},
      {"alpha_s", "alpha", "s", micros(), false},
      {"beta_s_per_byte", "beta", "s/byte", fmtcol::sig3(), false},
      {"cpu_share", "CPU share", "fraction", fmtcol::fixed(3), false},
      {"backward_s", "backward s", "s", fmtcol::sig3(), false},
      {"measured_backward_s", "measured backward s", "s", fmtcol::sig3(), false},
  };
}

// Which kinds of point a base row's predictions hold: the notes explain only those shown.
struct PointNoteFlags {
  bool any_withheld = false, any_backtest = false, any_measured_here = false, any_shared = false;
};

// Appends one row per predicted point of `rp` to `t` (columns of prediction_columns) and
// returns which kinds of point there were.
PointNoteFlags prediction_point_rows(const RowPrediction& rp, Table& t) {
  PointNoteFlags f;
  for (const auto& pt : rp.points) {
    // An unmeasured size: the prediction widened by the backtest, or withheld (no numbers).
    Value range;
    if (pt.withheld) range = "withheld: " + pt.withheld_reason;
    else if (!pt.measured_step_s && pt.backtest_error)
      range = fmt::format("{:.3g}-{:.3g} s", pt.step_s * (1 - *pt.backtest_error), pt.step_s * (1 + *pt.backtest_error));
    f.any_withheld = f.any_withheld || pt.withheld;
    f.any_backtest = f.any_backtest || pt.backtest_error.has_value();
    f.any_measured_here = f.any_measured_here || pt.comm_measured_here;
    const auto shown = [&pt](double v) { return pt.withheld ? Value() : Value(v); };
    t.rows.push_back({static_cast<long long>(pt.world_size),
                      static_cast<long long>(pt.nodes),
                      link_level_name(pt.level) + (pt.level_substituted ? "*" : ""),
                      cost_model_name(pt.model),
                      std::string(pt.world_size == 1      ? "-"
                                  : pt.comm_measured_here ? "comm here"
                                                          : "fit"),
                      shown(pt.comm_s),
                      shown(pt.exposed_s),
                      shown(pt.step_s),
                      pt.withheld ? Value() : opt(pt.efficiency),
                      opt(pt.measured_step_s),
                      opt(pt.error),
                      opt(pt.measured_comm_s),
                      opt(pt.measured_exposed_s),
                      opt(pt.measured_efficiency),
                      opt(pt.backtest_error),
                      range,
                      pt.ab.alpha_s,
                      pt.ab.beta_s_per_byte,
                      pt.cpu_share,
                      shown(pt.backward_s),
                      opt(pt.measured_backward_s)});
    f.any_shared = f.any_shared || pt.cpu_share > 0;
  }
  return f;
}

// Appends the notes on base row `b` to `t`: its measured step and buckets (s, MB), how a
// step is composed, and what efficiency and error compare against.
void row_breakdown_notes(const BaseRow& b, bool any_shared, Table& t) {
  double total = 0;
  for (double v : b.bucket_bytes) total += v;
  t.notes.push_back(
      fmt::format("{}: p50 {:.4g} s, exposed comm {:.4g} s (breakdown, mean over ranks): step "
                  "without exposed comm {:.4g} s; {} bucket(s), {:.4g} MB on the wire per step ({})",
                  b.source, b.step_p50_s, b.exposed_comm_s, b.fixed_s, b.bucket_bytes.size(), total / 1e6, b.dtype));
  t.notes.push_back(fmt::format(
      "step = {}; exposed: the buckets' allreduces in Reducer order, "
      "bucket i ready after its share of {:.4g} s of backward compute{}",
      any_shared ? fmt::format("{:.4g} s without the backward + the backward beside the allreduces + exposed",
                               b.fixed_s - b.hideable_s)
                 : fmt::format("{:.4g} s + exposed", b.fixed_s),
      b.hideable_s,
      b.grad_accum > 1 ? fmt::format(" (1/{} of the breakdown's: the synchronised "
                                     "micro-step)",
                                     b.grad_accum)
                       : ""));
  if (b.baseline_per_gpu_ex_s)
    t.notes.push_back(
        fmt::format("efficiency = per-rank ex/s / per-rank ex/s of the {} row ({:.4g} ex/s), as in "
                    "report's weak scaling; error = (predicted - measured) / measured step",
                    b.baseline, *b.baseline_per_gpu_ex_s));
  else t.notes.push_back("efficiency n/a: no weak-scaling baseline row in the run files");
}

// Appends the notes on the models' calibration of `rp` to `t` (comm factors, the shared CPU,
// uncalibrated models), then those explaining the kinds of point in `f`.
void row_model_notes(const Prediction& p, const RowPrediction& rp, const PointNoteFlags& f, Table& t) {
  const BaseRow& b = rp.base;
  for (const auto& [model, k] : rp.comm_factor)
    if (k != 1)
      t.notes.push_back(fmt::format(
          "comm factor {:.3g} ({}): the modelled allreduce times x {:.3g} reproduce this row's measured exposed "
          "communication ({:.4g} s) at its {} ranks; every prediction from this row uses the same factor "
          "(DDP's allreduces in the step against comm's standalone ones)",
          k, cost_model_name(model), k, b.exposed_comm_s, b.world_size));
  if (f.any_shared)
    for (const auto& [model, alone] : rp.backward_alone_s)
      t.notes.push_back(fmt::format(
          "CPU shared ({}): Gloo's allreduces run on this CPU row's cores (a budget of {:.3g} cores: the most a "
          "row of the series on at most its ranks kept busy, the no-DDP baseline's included; {} in comm's "
          "allreduce); while both run the allreduce gets min(share, 1/2) of them and the backward the rest "
          "(share = comm's cores / the budget, column cpu_share of the JSON), so the backward, {:.4g} s alone, "
          "stretches with the allreduce time",
          cost_model_name(model), b.cpu_cores.value_or(0), fit_cores_text(p.fits, model), alone));
  for (const auto& [model, why] : rp.uncalibrated)
    t.notes.push_back(fmt::format("uncalibrated ({}): {}; no unmeasured size is predicted from this row with it",
                                  cost_model_name(model), why));
  if (f.any_measured_here)
    t.notes.push_back(
        "allreduce from: \"comm here\" = the allreduce times come from comm rows measured at that very world "
        "size (that size's own alpha-beta fit); \"fit\" = from a fit of other sizes");
  if (f.any_backtest)
    t.notes.push_back(
        "backtest +/-: the largest |error| of this row's predictions of every measured world size of 2+ ranks, "
        "its own included (same model; a 1-rank size, without allreduce, shows its error but is not in it); an "
        "unmeasured size's predicted range is step +/- that");
  if (f.any_withheld)
    t.notes.push_back(fmt::format(
        "withheld: no number is given for an unmeasured size when the backtest is above {:.0f}% (the model does "
        "not hold on these measurements), when it checked nothing but this row's own size (no measured size "
        "left to test it on: measure two or more world sizes of 2+ ranks), or when the row is uncalibrated "
        "(METHODOLOGY, \"Scaling predictor\")",
        kMaxBacktestError * 100));
}

// The table of the predicted step times (s) from one base row, every world size and model,
// with its notes.
Table row_prediction_table(const Prediction& p, const RowPrediction& rp) {
  const BaseRow& b = rp.base;
  Table t;
  t.kind = "prediction";
  t.title = fmt::format("Predicted step time: {} (from the {}-rank row)", b.description, b.world_size);
  t.context = {{"source", b.source}, {"base_world_size", static_cast<long long>(b.world_size)}};
  t.columns = prediction_columns();
  const PointNoteFlags f = prediction_point_rows(rp, t);
  row_breakdown_notes(b, f.any_shared, t);
  row_model_notes(p, rp, f, t);
  return t;
}

}  // namespace

std::vector<Table> prediction_tables(const Prediction& p) {
  std::vector<Table> tables;
  tables.push_back(comm_fit_table(p));
  for (const auto& rp : p.rows) tables.push_back(row_prediction_table(p, rp));
  return tables;
}

std::string render_prediction(const Prediction& p, TableFormat format) {
  const auto tables = prediction_tables(p);
  if (format != TableFormat::json) return render_tables(tables, format);
  nlohmann::json j;
  j["tables"] = nlohmann::json::array();
  for (const auto& t : tables) j["tables"].push_back(table_json(t));
  j["gpus_per_node"] = p.gpus_per_node;
  j["notes"] = p.notes;
  return j.dump(2) + "\n";
}

}  // namespace ddpbench
