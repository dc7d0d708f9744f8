#include "core/analysis/diff.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <stdexcept>

#include "core/result/row_metrics.hpp"
#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"
#include "core/util/table.hpp"

namespace ddpbench {
namespace {

// Below this many iterations in a launch its median says too little to compare.
constexpr size_t kMinIterations = 5;

// The row's per-iteration means across ranks (see iteration_means): the values the
// bootstrap may treat as independent. Recorded in the row from schema 1.10, computed from
// every rank's samples before.
std::vector<double> iteration_series(const BenchResult& r) {
  if (!r.iteration_means_s.empty()) return r.iteration_means_s;
  std::vector<std::vector<double>> per_rank;
  for (const auto& rk : r.ranks)
    if (!rk.samples_s.empty()) per_rank.push_back(rk.samples_s);
  return iteration_means(per_rank);
}

// Paths whose values differ between any two launches and say nothing about the setup.
bool ignored(const std::string& path) {
  static const char* prefixes[] = {"created_utc",
                                   "argv",
                                   "config.json_path",
                                   "config.defaults_note",
                                   "environment.env.MASTER_PORT",
                                   "environment.env.DDPBENCH_LOCAL_SPAWNER",  // the built-in spawner's pid
                                   "environment.rendezvous.master_port",
                                   "environment.ranks",
                                   "environment.topology",
                                   "environment.env.SLURM_JOB_ID",
                                   "environment.slurm_job_id"};
  for (const char* p : prefixes)
    if (path.rfind(p, 0) == 0) return true;
  return false;
}

void flatten(const nlohmann::json& j, const std::string& path, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (j.is_array() && !j.empty() && (j.front().is_object() || j.front().is_array())) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], fmt::format("{}[{}]", path, i), out);
  } else {
    out[path] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

// Configuration, environment and tool values of each side; a side whose launches differ
// shows every value ("a | b").
std::vector<ConfigChange> changes_between(const std::vector<NamedResult>& base, const std::vector<NamedResult>& test) {
  using Section = nlohmann::json ResultFile::*;
  std::vector<ConfigChange> out;
  for (const auto& [name, section] : {std::pair<const char*, Section>{"config", &ResultFile::config},
                                      {"environment", &ResultFile::environment},
                                      {"tool", &ResultFile::tool}}) {
    auto side = [&, name = name, section = section](const std::vector<NamedResult>& files) {
      std::vector<std::map<std::string, std::string>> flat(files.size());
      for (size_t i = 0; i < files.size(); ++i) flatten(files[i].file.*section, name, flat[i]);
      return flat;
    };
    const auto fb = side(base), ft = side(test);
    std::set<std::string> keys;
    for (const auto* s : {&fb, &ft})
      for (const auto& m : *s)
        for (const auto& [k, v] : m) keys.insert(k);
    auto value = [](const std::vector<std::map<std::string, std::string>>& flat, const std::string& k) {
      std::set<std::string> vals;
      for (const auto& m : flat) {
        const auto it = m.find(k);
        vals.insert(it == m.end() ? "(absent)" : it->second);
      }
      return fmt::format("{}", fmt::join(vals, " | "));
    };
    for (const auto& k : keys) {
      if (ignored(k)) continue;
      std::string vb = value(fb, k), vt = value(ft, k);
      if (vb != vt) out.push_back({k, std::move(vb), std::move(vt)});
    }
  }
  return out;
}

// The launches of one configuration on one side.
struct SideRow {
  ConfigKey key;
  std::string label;
  std::vector<const BenchResult*> launches;
};

std::vector<SideRow> side_rows(const std::vector<NamedResult>& files) {
  std::vector<SideRow> rows;
  for (const auto& nf : files)
    for (const auto& r : nf.file.results) {
      const ConfigKey k = ConfigKey::of(nf.file, r);
      auto it = std::find_if(rows.begin(), rows.end(), [&](const SideRow& s) { return s.key == k; });
      if (it == rows.end()) rows.push_back({k, r.label, {&r}});
      else it->launches.push_back(&r);
    }
  return rows;
}

std::string verdict_of(const Interval& ci) {
  if (ci.lo > 0.0) return "slower";
  if (ci.hi < 0.0) return "faster";
  return "within noise";
}

// The mean of metric `m` over the launches of `s`; nullopt unless every launch has it.
std::optional<double> launches_mean(const RowMetric& m, const SideRow& s) {
  std::vector<double> v;
  for (const auto* r : s.launches) {
    const auto x = m.of(*r);
    if (!x) return std::nullopt;
    v.push_back(*x);
  }
  if (v.empty()) return std::nullopt;
  return mean(v);
}

}  // namespace

LaunchSpread measured_launch_spread(const std::string& device_type) {
  // (slowest - fastest) / median p50 of repeated launches of one configuration, as `report`
  // prints it; one entry per device type the repository's result files show.
  static const std::vector<LaunchSpread> kMeasured = {
      {"NVIDIA H100", 0.195,
       "3 launches of resnet50, batch 32, fp32 (cuDNN TF32) on one H100 80GB HBM3 (docs/results: 1,063 to 1,300 "
       "ex/s)"},
      {"CPU", 0.198, "5 launches of resnet18, batch 16 per rank, 64 px on 2 ranks of a 2-core machine (docs/examples)"},
  };
  for (const auto& m : kMeasured)
    if (device_type.rfind(m.device, 0) == 0) return m;
  LaunchSpread widest = kMeasured.front();
  for (const auto& m : kMeasured)
    if (m.spread > widest.spread) widest = m;
  return {"", widest.spread, widest.source};
}

namespace {

// The floor of a row: --noise-floor when given, else the spread measured on its device type.
std::pair<double, std::string> floor_of(const SideRow& b, const DiffOptions& opts) {
  if (opts.noise_floor) return {*opts.noise_floor, "--noise-floor"};
  const LaunchSpread m = measured_launch_spread(b.key.device);
  return {m.spread, *m.device ? std::string(m.device) : "the widest measured"};
}

DiffRow compare(const SideRow& b, const SideRow& t, const DiffOptions& opts) {
  DiffRow row;
  row.base_key = b.key;
  row.test_key = t.key;
  row.differs = differences(b.key, t.key);
  row.label = b.label;
  row.test_label = t.label;
  for (const auto& m : row_metrics())
    if (m.used_in(kInDiff)) row.metrics.push_back({m.key, launches_mean(m, b), launches_mean(m, t)});
  std::vector<std::vector<double>> sb, st;  // per launch: iteration means
  for (const auto* r : b.launches) sb.push_back(iteration_series(*r));
  for (const auto* r : t.launches) st.push_back(iteration_series(*r));
  const auto empty = [](const auto& v) { return v.empty(); };
  if (std::any_of(sb.begin(), sb.end(), empty) || std::any_of(st.begin(), st.end(), empty)) {
    row.verdict = "no samples";
    return row;
  }
  for (const auto& s : sb) {
    row.base_launches.push_back(percentile(s, 50));
    row.base_iterations += static_cast<int>(s.size());
  }
  for (const auto& s : st) {
    row.test_launches.push_back(percentile(s, 50));
    row.test_iterations += static_cast<int>(s.size());
  }
  row.base_s = mean(row.base_launches);
  row.test_s = mean(row.test_launches);
  // Examples per rank per optimizer step: the micro-batch times the micro-steps.
  row.base_ex_s = static_cast<double>(b.key.batch_per_rank) * b.key.grad_accum / row.base_s;
  row.test_ex_s = static_cast<double>(t.key.batch_per_rank) * t.key.grad_accum / row.test_s;
  row.change = (row.test_s - row.base_s) / row.base_s;
  const auto few = [](const auto& v) { return v.size() < kMinIterations; };
  if (std::any_of(sb.begin(), sb.end(), few) || std::any_of(st.begin(), st.end(), few)) {
    row.verdict = "too few samples";
    return row;
  }
  Interval ci;
  if (sb.size() == 1 && st.size() == 1) {
    // One launch per side: the bootstrap sees only within-launch noise; launches of one
    // configuration differ by more, so the interval is widened by the floor on both sides.
    ci = bootstrap_median_diff_ci(sb.front(), st.front());
    std::tie(row.noise_floor, row.floor_basis) = floor_of(b, opts);
    const double floor = row.noise_floor * row.base_launches.front();
    ci.lo -= floor;
    ci.hi += floor;
    row.method = "bootstrap + noise floor";
  } else {
    ci = t_diff_ci(row.base_launches, row.test_launches);
    row.method = sb.size() >= 2 && st.size() >= 2 ? "Welch t" : "pooled t";
    if (ci.hi - ci.lo == 0) {
      // Launches that agree exactly (the same file given twice) show no spread at all:
      // that is no evidence of a small one, so the floor stands in for it.
      std::tie(row.noise_floor, row.floor_basis) = floor_of(b, opts);
      const double floor = row.noise_floor * row.base_s;
      ci.lo -= floor;
      ci.hi += floor;
      row.method += " + noise floor";
    }
  }
  row.ci = ci;
  row.verdict = verdict_of(ci);
  return row;
}

std::string short_row(const SideRow& s) { return s.key.describe() + " (" + s.label + ")"; }

// The rows of both sides as pairing sees them: per row and field a small integer (equal
// values, equal codes; base rows first), and which base and test rows have equal keys.
struct DiffRows {
  size_t nb = 0, nt = 0;
  std::vector<std::array<int, kConfigFieldCount>> codes;
  std::vector<std::vector<bool>> exact;  // [base][test]: the same configuration

  DiffRows(const std::vector<SideRow>& rb, const std::vector<SideRow>& rt) : nb(rb.size()), nt(rt.size()) {
    std::vector<std::map<std::string, int>> seen(kConfigFieldCount);
    for (const auto* side : {&rb, &rt})
      for (const auto& r : *side) {
        std::array<int, kConfigFieldCount> c{};
        for (size_t f = 0; f < kConfigFieldCount; ++f)
          c[f] =
              seen[f].emplace(r.key.value(static_cast<ConfigField>(f)), static_cast<int>(seen[f].size())).first->second;
        codes.push_back(c);
      }
    exact.assign(nb, std::vector<bool>(nt, false));
    for (size_t i = 0; i < nb; ++i)
      for (size_t j = 0; j < nt; ++j) exact[i][j] = rb[i].key == rt[j].key;
  }
  // Rows a and b (indices into codes) agree on every field of `on`.
  bool same(size_t a, size_t b, const FieldSet& on) const {
    for (size_t f = 0; f < kConfigFieldCount; ++f)
      if (on.test(f) && codes[a][f] != codes[b][f]) return false;
    return true;
  }
};

// Which base row pairs with which test row under a --match.
struct DiffPairing {
  std::vector<std::pair<size_t, size_t>> pairs;  // (base row, test row)
  bool ambiguous = false;                        // a --match group holds several rows of a side
  size_t row = 0;                                // then: a base row of that group,
  std::vector<size_t> alike_base, alike_test;    // and the group's rows of each side
};

// Equal configurations pair first; then each group of rows alike on `match`, when it holds
// one row of each side.
DiffPairing diff_pair_rows(const DiffRows& r, const FieldSet& match) {
  DiffPairing p;
  std::vector<bool> used_b(r.nb, false), used_t(r.nt, false);
  for (size_t i = 0; i < r.nb; ++i)
    for (size_t j = 0; j < r.nt; ++j)
      if (!used_b[i] && !used_t[j] && r.exact[i][j]) {
        used_b[i] = used_t[j] = true;
        p.pairs.emplace_back(i, j);
      }
  for (size_t i = 0; i < r.nb; ++i) {
    if (used_b[i]) continue;
    std::vector<size_t> tc, bc;
    for (size_t j = 0; j < r.nt; ++j)
      if (!used_t[j] && r.same(i, r.nb + j, match)) tc.push_back(j);
    for (size_t k = 0; k < r.nb; ++k)
      if (!used_b[k] && r.same(i, k, match)) bc.push_back(k);
    if (tc.empty()) continue;
    if (tc.size() > 1 || bc.size() > 1) {
      p.ambiguous = true;
      p.row = i;
      p.alike_base = std::move(bc);
      p.alike_test = std::move(tc);
      return p;
    }
    used_b[i] = used_t[tc.front()] = true;
    p.pairs.emplace_back(i, tc.front());
  }
  return p;
}

// Fields in the order a suggested --match prefers them: what names a row first, the rest in
// field order, then global_batch (batch x ranks says it) and the fields a no-DDP row lacks
// (ddp says that more plainly).
std::vector<size_t> diff_field_preference() {
  const std::vector<ConfigField> head = {ConfigField::model,          ConfigField::ddp,        ConfigField::world_size,
                                         ConfigField::batch_per_rank, ConfigField::image_size, ConfigField::device,
                                         ConfigField::precision,      ConfigField::math,       ConfigField::scaling};
  std::vector<size_t> order, last;
  for (auto f : head) order.push_back(static_cast<size_t>(f));
  for (size_t f = 0; f < kConfigFieldCount; ++f) {
    if (std::find(order.begin(), order.end(), f) != order.end()) continue;
    const bool late = f == static_cast<size_t>(ConfigField::global_batch) || ddp_only_fields().test(f);
    (late ? last : order).push_back(f);
  }
  order.insert(order.end(), last.begin(), last.end());
  return order;
}

// Above this many candidate fields, suggest_match removes fields one at a time instead of
// trying every subset.
constexpr size_t kMaxExhaustiveFields = 12;

std::optional<MatchSuggestion> diff_suggest(const DiffRows& r) {
  const size_t n = r.nb + r.nt;
  const auto preference = diff_field_preference();
  // Candidates: the fields that differ between two rows of one side, one per way of splitting
  // the rows of both sides (the first in preference order stands for the fields that split
  // them alike).
  std::vector<size_t> cand;
  std::set<std::vector<int>> splits;
  for (size_t f : preference) {
    bool varies = false;
    for (size_t k = 1; k < r.nb; ++k) varies = varies || r.codes[k][f] != r.codes[0][f];
    for (size_t k = r.nb + 1; k < n; ++k) varies = varies || r.codes[k][f] != r.codes[r.nb][f];
    if (!varies) continue;
    std::vector<int> split(n);
    std::map<int, int> relabel;
    for (size_t k = 0; k < n; ++k)
      split[k] = relabel.emplace(r.codes[k][f], static_cast<int>(relabel.size())).first->second;
    if (splits.insert(split).second) cand.push_back(f);
  }
  const auto as_set = [&](const std::vector<size_t>& idx) {
    FieldSet s;
    for (size_t i : idx) s.set(cand[i]);
    return s;
  };
  if (cand.empty()) {
    // One row a side: any field the two agree on pairs them; the plainest.
    for (size_t f : preference)
      if (r.same(0, r.nb, FieldSet().set(f))) return MatchSuggestion{FieldSet().set(f), 1};
    return std::nullopt;
  }
  struct Score {
    bool valid = false;
    size_t pairs = 0;
  };
  const auto score = [&](const FieldSet& s) {
    const DiffPairing p = diff_pair_rows(r, s);
    return Score{!p.ambiguous && !p.pairs.empty(), p.ambiguous ? 0 : p.pairs.size()};
  };
  std::vector<size_t> best;
  Score best_score;
  if (cand.size() <= kMaxExhaustiveFields) {
    // Every subset: valid first, then the most pairs, the fewest fields, the plainest fields.
    for (uint32_t mask = 1; mask < (1u << cand.size()); ++mask) {
      std::vector<size_t> idx;
      for (size_t i = 0; i < cand.size(); ++i)
        if (mask & (1u << i)) idx.push_back(i);
      const Score sc = score(as_set(idx));
      if (!sc.valid) continue;
      const bool better =
          !best_score.valid || sc.pairs > best_score.pairs ||
          (sc.pairs == best_score.pairs && (idx.size() < best.size() || (idx.size() == best.size() && idx < best)));
      if (better) {
        best = idx;
        best_score = sc;
      }
    }
  } else {
    // Every candidate, then each removed (the least plain first) while the pairing holds.
    for (size_t i = 0; i < cand.size(); ++i) best.push_back(i);
    best_score = score(as_set(best));
    for (size_t k = cand.size(); k-- > 0;) {
      std::vector<size_t> fewer;
      for (size_t i : best)
        if (i != k) fewer.push_back(i);
      if (fewer.empty()) continue;
      const Score sc = score(as_set(fewer));
      if (std::tie(sc.valid, sc.pairs) >= std::tie(best_score.valid, best_score.pairs)) {
        best = fewer;
        best_score = sc;
      }
    }
  }
  if (!best_score.valid) return std::nullopt;
  return MatchSuggestion{as_set(best), best_score.pairs};
}

}  // namespace

Interval bootstrap_median_diff_ci(const std::vector<double>& base, const std::vector<double>& test, int resamples,
                                  uint64_t seed) {
  if (base.empty() || test.empty()) throw std::invalid_argument("bootstrap of an empty sample set");
  if (resamples < 1) throw std::invalid_argument("bootstrap needs at least 1 resample");
  std::mt19937_64 rng(seed);
  std::vector<double> diffs;
  diffs.reserve(static_cast<size_t>(resamples));
  std::vector<double> a(base.size()), b(test.size());
  for (int i = 0; i < resamples; ++i) {
    for (auto& x : a) x = base[rng() % base.size()];
    for (auto& x : b) x = test[rng() % test.size()];
    diffs.push_back(percentile(b, 50) - percentile(a, 50));
  }
  return {percentile(diffs, 2.5), percentile(diffs, 97.5)};
}

Interval t_diff_ci(const std::vector<double>& base, const std::vector<double>& test) {
  if (base.empty() || test.empty()) throw std::invalid_argument("t interval of an empty side");
  const double na = static_cast<double>(base.size()), nb = static_cast<double>(test.size());
  const double d = mean(test) - mean(base);
  double se = 0;
  int dof = 0;
  if (base.size() >= 2 && test.size() >= 2) {
    const double va = stddev(base) * stddev(base) / na, vb = stddev(test) * stddev(test) / nb;
    se = std::sqrt(va + vb);
    const double denom = va * va / (na - 1) + vb * vb / (nb - 1);
    dof = denom > 0 ? std::max(1, static_cast<int>(std::floor((va + vb) * (va + vb) / denom))) : 1;
  } else if (base.size() >= 2 || test.size() >= 2) {
    const auto& many = base.size() >= 2 ? base : test;
    se = stddev(many) * std::sqrt(1 / na + 1 / nb);
    dof = static_cast<int>(many.size()) - 1;
  } else {
    throw std::invalid_argument("a t interval needs two observations on at least one side");
  }
  const double h = t95(dof) * se;
  return {d - h, d + h};
}

DiffReport diff_results(const std::vector<NamedResult>& base, const std::vector<NamedResult>& test,
                        const DiffOptions& opts) {
  if (base.empty() || test.empty())
    throw UsageError("diff needs result files on both sides: ddpbench diff BASE... -- TEST...");
  if (opts.noise_floor && !(*opts.noise_floor >= 0 && *opts.noise_floor < 1))
    throw UsageError(fmt::format("--noise-floor {} must be a percentage in [0, 100)", 100 * *opts.noise_floor));
  DiffReport d;
  d.opts = opts;
  for (const auto& f : base) d.base_files.push_back(f.name);
  for (const auto& f : test) d.test_files.push_back(f.name);
  d.changes = changes_between(base, test);

  const auto rb = side_rows(base), rt = side_rows(test);
  if (rb.empty() || rt.empty())
    throw UsageError("a side holds no benchmark rows; pass files written by ddpbench run --json");
  const DiffRows rows(rb, rt);
  const DiffPairing p = diff_pair_rows(rows, opts.match);
  if (p.ambiguous) {
    // The fields outside --match in which the alike rows differ: the ones to add.
    const size_t i = p.row;
    const auto& tc = p.alike_test;
    const auto& bc = p.alike_base;
    std::vector<std::string> missing;
    const auto add = [&](const ConfigKey& a, const ConfigKey& b) {
      for (const auto& x : differences(a, b, all_fields() & ~opts.match))
        if (std::find(missing.begin(), missing.end(), config_field_name(x.field)) == missing.end())
          missing.push_back(config_field_name(x.field));
    };
    for (size_t k : bc) add(rb[i].key, rb[k].key);
    for (size_t j : tc) add(rt[tc.front()].key, rt[j].key);
    // A no-DDP row has no DDP knobs (nor a backend of its own): ddp alone tells it apart.
    if (std::find(missing.begin(), missing.end(), "ddp") != missing.end()) missing = {"ddp"};
    throw UsageError(fmt::format(
        "--match leaves {} base row(s) and {} test row(s) alike, e.g. {}; they differ in {}: add {} to --match",
        bc.size(), tc.size(), short_row(rb[i]), fmt::join(missing, ", "), fmt::join(missing, ",")));
  }
  auto pairs = p.pairs;
  if (pairs.empty()) {
    // Name what the closest rows differ in, and the --match that would pair them.
    size_t bi = 0, ti = 0, best = kConfigFieldCount + 1;
    for (size_t i = 0; i < rb.size(); ++i)
      for (size_t j = 0; j < rt.size(); ++j)
        if (const size_t n = differences(rb[i].key, rt[j].key).size(); n < best) {
          best = n;
          bi = i;
          ti = j;
        }
    const std::string closest = describe_differences(differences(rb[bi].key, rt[ti].key, opts.match));
    if (const auto s = diff_suggest(rows))
      throw UsageError(fmt::format(
          "no row of the base files has the configuration of a row of the test files (the closest differ in "
          "{}); to pair their rows across that, pass --match {} (it pairs {} row(s) of each side)",
          closest, match_list(s->fields), s->pairs));
    throw UsageError(
        fmt::format("no row of the base files has the configuration of a row of the test files (the closest "
                    "differ in {}), and no --match pairs their rows one to one; compare files that measured "
                    "the same rows",
                    closest));
  }
  std::sort(pairs.begin(), pairs.end());
  for (const auto& [i, j] : pairs) d.rows.push_back(compare(rb[i], rt[j], opts));
  std::vector<bool> used_b(rb.size(), false), used_t(rt.size(), false);
  for (const auto& [i, j] : pairs) used_b[i] = used_t[j] = true;
  for (size_t i = 0; i < rb.size(); ++i)
    if (!used_b[i]) d.only_base.push_back(short_row(rb[i]));
  for (size_t j = 0; j < rt.size(); ++j)
    if (!used_t[j]) d.only_test.push_back(short_row(rt[j]));
  if (!d.only_base.empty() && !d.only_test.empty())
    if (auto s = diff_suggest(rows); s && s->pairs > pairs.size()) d.better_match = s;
  return d;
}

std::optional<MatchSuggestion> suggest_match(const std::vector<NamedResult>& base,
                                             const std::vector<NamedResult>& test) {
  const auto rb = side_rows(base), rt = side_rows(test);
  if (rb.empty() || rt.empty()) return std::nullopt;
  return diff_suggest(DiffRows(rb, rt));
}

std::string match_list(const FieldSet& fields) {
  std::vector<std::string> names;
  for (size_t f = 0; f < kConfigFieldCount; ++f)
    if (fields.test(f)) names.push_back(config_field_name(static_cast<ConfigField>(f)));
  return fmt::format("{}", fmt::join(names, ","));
}

DiffReport diff_results(const ResultFile& base, const ResultFile& test, const DiffOptions& opts) {
  return diff_results(std::vector<NamedResult>{{"base", base}}, std::vector<NamedResult>{{"test", test}}, opts);
}

std::vector<std::string> gate_failures(const DiffReport& d, double fraction) {
  std::vector<std::string> out;
  for (const auto& r : d.rows) {
    if (r.verdict == "slower" && r.change > fraction)
      out.push_back(
          fmt::format("{}: slower by {:.1f}% (limit {:.1f}%)", r.base_key.describe(), 100 * r.change, 100 * fraction));
    else if (r.verdict != "slower" && r.verdict != "faster" && r.verdict != "within noise")
      out.push_back(fmt::format("{}: no verdict ({})", r.base_key.describe(), r.verdict));
  }
  for (const auto& b : d.only_base) out.push_back(fmt::format("{}: not in the test files", b));
  return out;
}

namespace {

std::string n_text(size_t launches, int iterations) {
  return launches == 1 ? fmt::format("1x{}", iterations) : fmt::format("{}x, {} it", launches, iterations);
}

// "a", or "a -> b" where the sides differ.
std::string diff_sides(const std::string& a, const std::string& b) { return a == b ? a : a + " -> " + b; }

// The row as the tables name it: model and benchmark.py's label, each side's where they differ.
std::string diff_row_name(const DiffRow& r) {
  return diff_sides(r.base_key.model + " " + r.label, r.test_key.model + " " + r.test_label);
}

std::string diff_launches(const std::vector<std::string>& files) {
  return fmt::format("{} ({} launch{})", fmt::join(files, ", "), files.size(), files.size() == 1 ? "" : "es");
}

// `text` in lines of at most `width` characters (0: one line), broken at spaces; a word longer
// than a line is cut. Lines after the first start with `indent` spaces.
std::vector<std::string> diff_wrap(const std::string& text, size_t width, size_t indent = 0) {
  if (width == 0 || text.size() <= width) return {text};
  indent = std::min(indent, width / 2);
  const size_t lead = std::min(text.find_first_not_of(' '), text.size());
  std::vector<std::string> lines;
  std::string line(std::min(lead, width / 2), ' ');
  bool has_word = false;
  size_t start = lead;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    start = end + 1;
    while (!word.empty()) {
      if (line.size() + (has_word ? 1 : 0) + word.size() <= width) {
        line += (has_word ? " " : "") + word;
        has_word = true;
        break;
      }
      if (has_word) {
        lines.push_back(line);
        line = std::string(indent, ' ');
        has_word = false;
        continue;
      }
      const size_t room = width - line.size();  // the line holds its indent only: cut the word
      lines.push_back(line + word.substr(0, room));
      word.erase(0, room);
      line = std::string(indent, ' ');
    }
  }
  if (has_word) lines.push_back(line);
  return lines;
}

std::string diff_wrapped(const std::string& text, size_t width, size_t indent = 2) {
  std::string out;
  for (const auto& l : diff_wrap(text, width, indent)) out += l + "\n";
  return out;
}

// The per-row table with every column; `differs` only where some row differs outside --match.
Table diff_table(const DiffReport& d) {
  const bool any_differs =
      std::any_of(d.rows.begin(), d.rows.end(), [](const DiffRow& r) { return !r.differs.empty(); });
  Table t;
  t.kind = "diff";
  t.title =
      "Per row (s/iter: median of the per-iteration means across ranks, mean over launches; change = test vs "
      "base; n = launches x iterations):";
  auto col = [](std::string key, std::string header) {
    return Column{std::move(key), std::move(header), "", fmtcol::plain()};
  };
  t.columns = {col("row", "row"),       col("base_s", "base s/iter"),  col("test_s", "test s/iter"),
               col("change", "change"), col("ci", "95% interval"),     col("verdict", "verdict"),
               col("setup", "setup"),   col("batch", "batch"),         col("n_base", "n base"),
               col("n_test", "n test"), col("base_ex_s", "base ex/s"), col("test_ex_s", "test ex/s")};
  // The per-row metrics that some row has on both sides: base and test, in the metric's format.
  std::vector<size_t> shown_metrics;
  for (size_t i = 0; !d.rows.empty() && i < d.rows.front().metrics.size(); ++i)
    if (std::any_of(d.rows.begin(), d.rows.end(),
                    [i](const DiffRow& r) { return r.metrics[i].base && r.metrics[i].test; }))
      shown_metrics.push_back(i);
  for (size_t i : shown_metrics) {
    const RowMetric& m = *find_row_metric(d.rows.front().metrics[i].key);
    t.columns.push_back(col("base_" + std::string(m.key), "base " + std::string(m.header)));
    t.columns.push_back(col("test_" + std::string(m.key), "test " + std::string(m.header)));
  }
  if (any_differs) t.columns.push_back(col("differs", "differs (outside --match)"));
  for (const auto& r : d.rows) {
    const bool have = !r.base_launches.empty();
    std::vector<Value> cells = {
        diff_row_name(r),
        have ? Value(fmt::format("{:.4f}", r.base_s)) : Value(),
        have ? Value(fmt::format("{:.4f}", r.test_s)) : Value(),
        have ? Value(fmt::format("{:+.1f}%", 100 * r.change)) : Value(),
        r.ci ? Value(fmt::format("[{:+.1f}%, {:+.1f}%]", 100 * r.ci->lo / r.base_s, 100 * r.ci->hi / r.base_s))
             : Value(),
        r.verdict,
        diff_sides(r.base_key.setup_label(), r.test_key.setup_label()),
        diff_sides(std::to_string(r.base_key.batch_per_rank), std::to_string(r.test_key.batch_per_rank)),
        n_text(r.base_launches.size(), r.base_iterations),
        n_text(r.test_launches.size(), r.test_iterations),
        have ? Value(fmt::format("{:.1f}", r.base_ex_s)) : Value(),
        have ? Value(fmt::format("{:.1f}", r.test_ex_s)) : Value()};
    for (size_t i : shown_metrics) {
      const auto& x = r.metrics[i];
      const RowMetric& m = *find_row_metric(x.key);
      cells.push_back(x.base ? Value(m.format(Value(*x.base))) : Value());
      cells.push_back(x.test ? Value(m.format(Value(*x.test))) : Value());
    }
    if (any_differs) cells.push_back(describe_differences(r.differs));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// The notes under the table: how the intervals were made, rows without a partner and the
// --match that would pair them.
std::vector<std::string> diff_notes(const DiffReport& d) {
  std::vector<std::string> notes;
  std::set<std::string> methods;
  for (const auto& r : d.rows)
    if (!r.method.empty()) methods.insert(r.method);
  if (methods.count("bootstrap + noise floor")) {
    // One note per floor applied: its size and where it comes from.
    std::set<std::pair<double, std::string>> floors;
    for (const auto& r : d.rows)
      if (r.method == "bootstrap + noise floor") floors.insert({r.noise_floor, r.floor_basis});
    for (const auto& [f, basis] : floors)
      notes.push_back(
          basis == "--noise-floor"
              ? fmt::format("one launch per side: 95% bootstrap interval of the median difference, widened by the "
                            "launch-to-launch noise floor of +-{:.1f}% of base (--noise-floor); 'within noise' when it "
                            "contains 0",
                            100 * f)
              : fmt::format(
                    "one launch per side: 95% bootstrap interval of the median difference, widened by +-{:.1f}% "
                    "of base, the launch-to-launch spread measured on {} ({}; --noise-floor to set another); "
                    "'within noise' when it contains 0",
                    100 * f, basis, measured_launch_spread(basis == "the widest measured" ? "" : basis).source));
  }
  if (std::any_of(methods.begin(), methods.end(),
                  [](const std::string& m) { return m.find(" t") != std::string::npos; }))
    notes.push_back(
        "several launches: 95% t interval (Welch) of the difference of the launch means; 'within noise' "
        "when it contains 0");
  notes.push_back("docs/METHODOLOGY.md, \"diff: noise and launches\"");
  if (d.better_match)
    notes.push_back(fmt::format("{} base and {} test row(s) did not pair; --match {} pairs {} row(s) of each side",
                                d.only_base.size(), d.only_test.size(), match_list(d.better_match->fields),
                                d.better_match->pairs));
  for (const auto& s : d.only_base) notes.push_back("only in base: " + s);
  for (const auto& s : d.only_test) notes.push_back("only in test: " + s);
  return notes;
}

// What the paired rows differ in outside --match, as sentences: one when every pair differs
// alike, else one per row that differs.
std::vector<std::string> diff_differs_sentences(const DiffReport& d) {
  std::vector<std::string> out;
  std::set<std::string> kinds;
  bool all = !d.rows.empty();
  for (const auto& r : d.rows) {
    kinds.insert(describe_differences(r.differs));
    all = all && !r.differs.empty();
  }
  if (all && kinds.size() == 1) {
    out.push_back(fmt::format("Outside --match, every pair differs in {}", *kinds.begin()));
    return out;
  }
  for (const auto& r : d.rows)
    if (!r.differs.empty())
      out.push_back(
          fmt::format("{}: outside --match, differs in {}", diff_row_name(r), describe_differences(r.differs)));
  return out;
}

// A table's columns in text, in parts of at most `width` characters (0: one part), each part
// led by the first column; `groups` (column indices after the first) stay in one part where
// they fit together. A cell wider than its column is wrapped onto more lines.
std::string diff_columns_text(const Table& t, const std::vector<std::vector<size_t>>& groups, size_t width) {
  std::vector<std::vector<std::string>> cells(t.columns.size());
  std::vector<size_t> w(t.columns.size(), 0);
  for (size_t c = 0; c < t.columns.size(); ++c) {
    w[c] = t.columns[c].header.size();
    for (const auto& row : t.rows) {
      cells[c].push_back(t.columns[c].format(c < row.size() ? row[c] : Value()));
      w[c] = std::max(w[c], cells[c].back().size());
    }
  }
  std::vector<std::vector<size_t>> parts;
  if (width == 0) {
    parts.emplace_back();
    for (const auto& g : groups) parts.back().insert(parts.back().end(), g.begin(), g.end());
  } else {
    w[0] = std::min(w[0], width * 2 / 5);  // the row's name: at most 40 of 100 characters
    const size_t room = width - w[0] - 2;  // for the other columns of a part
    std::vector<std::vector<size_t>> fitted;
    for (const auto& g : groups) {
      size_t gw = 0;
      for (size_t c : g) gw += (gw ? 2 : 0) + std::min(w[c], room);
      if (gw <= room) {
        fitted.push_back(g);
      } else {
        for (size_t c : g) fitted.push_back({c});
      }
    }
    for (size_t c = 1; c < w.size(); ++c) w[c] = std::min(w[c], room);
    size_t used = 0;
    for (const auto& g : fitted) {
      size_t gw = 0;
      for (size_t c : g) gw += 2 + w[c];
      if (parts.empty() || used + gw > room + 2) {
        parts.emplace_back();
        used = 0;
      }
      parts.back().insert(parts.back().end(), g.begin(), g.end());
      used += gw;
    }
  }
  std::string out;
  for (size_t pi = 0; pi < parts.size(); ++pi) {
    std::vector<size_t> cols = {0};
    cols.insert(cols.end(), parts[pi].begin(), parts[pi].end());
    // One printed row: each cell wrapped to its column, the first left-aligned, the rest right.
    auto lines = [&](const std::vector<std::string>& texts) {
      std::vector<std::vector<std::string>> wrapped;
      size_t height = 1;
      for (size_t i = 0; i < cols.size(); ++i) {
        wrapped.push_back(diff_wrap(texts[i], w[cols[i]], 0));
        height = std::max(height, wrapped.back().size());
      }
      std::string o;
      for (size_t h = 0; h < height; ++h) {
        std::string line;
        for (size_t i = 0; i < cols.size(); ++i) {
          const std::string cell = h < wrapped[i].size() ? wrapped[i][h] : "";
          if (i) line += "  ";
          line += i == 0 ? fmt::format("{:<{}}", cell, w[cols[i]]) : fmt::format("{:>{}}", cell, w[cols[i]]);
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        o += line + "\n";
      }
      return o;
    };
    std::vector<std::string> head;
    for (size_t c : cols) head.push_back(t.columns[c].header);
    if (pi > 0) out += "\n";
    out += lines(head);
    size_t total = 0;
    for (size_t i = 0; i < cols.size(); ++i) total += w[cols[i]] + (i ? 2 : 0);
    out += std::string(total, '-') + "\n";
    for (size_t r = 0; r < t.rows.size(); ++r) {
      std::vector<std::string> texts;
      for (size_t c : cols) texts.push_back(cells[c][r]);
      out += lines(texts);
    }
  }
  return out;
}

}  // namespace

std::string render_diff_text(const DiffReport& d, size_t width) {
  std::string out = diff_wrapped("Base: " + diff_launches(d.base_files), width) +
                    diff_wrapped("Test: " + diff_launches(d.test_files), width);
  if (d.changes.empty()) {
    out += "Configuration and environment: no differences.\n";
  } else {
    out += "Configuration and environment differences (base -> test):\n";
    const size_t shown = std::min<size_t>(d.changes.size(), 60);
    for (size_t i = 0; i < shown; ++i)
      out +=
          diff_wrapped(fmt::format("  {}: {} -> {}", d.changes[i].key, d.changes[i].base, d.changes[i].test), width, 6);
    if (d.changes.size() > shown) out += fmt::format("  ... and {} more\n", d.changes.size() - shown);
  }
  if (d.opts.match != all_fields())
    out += diff_wrapped(
        fmt::format("Rows paired on --match {}; the other fields may differ.", match_list(d.opts.match)), width);
  const Table t = diff_table(d);
  out += "\n" + diff_wrapped(t.title, width);
  // The verdict and its numbers first, then the setup, batch, n and ex/s, then each metric.
  std::vector<std::vector<size_t>> groups = {
      {t.col("base_s"), t.col("test_s"), t.col("change"), t.col("ci"), t.col("verdict")},
      {t.col("setup")},
      {t.col("batch")},
      {t.col("n_base"), t.col("n_test")},
      {t.col("base_ex_s"), t.col("test_ex_s")}};
  for (size_t c = t.col("test_ex_s") + 1; c + 1 < t.columns.size(); c += 2)
    if (t.columns[c].key != "differs") groups.push_back({c, c + 1});
  std::vector<std::string> notes;
  if (width == 0) {
    if (t.columns.back().key == "differs") groups.push_back({t.columns.size() - 1});
  } else {
    notes = diff_differs_sentences(d);
  }
  out += diff_columns_text(t, groups, width);
  for (const auto& n : diff_notes(d)) notes.push_back(n);
  for (const auto& n : notes) out += diff_wrapped(n, width);
  return out;
}

std::string render_diff_markdown(const DiffReport& d) {
  std::string out = fmt::format("Base: {}; test: {}\n\n", diff_launches(d.base_files), diff_launches(d.test_files));
  if (d.changes.empty()) {
    out += "Configuration and environment: no differences.\n\n";
  } else {
    out += "Configuration and environment differences (base -> test):\n\n";
    for (const auto& c : d.changes) out += fmt::format("- `{}`: {} -> {}\n", c.key, c.base, c.test);
    out += "\n";
  }
  if (d.opts.match != all_fields())
    out += fmt::format("Rows paired on `--match {}`; the other fields may differ.\n\n", match_list(d.opts.match));
  Table t = diff_table(d);
  t.notes = diff_notes(d);
  return out + render_tables({t}, TableFormat::markdown);
}

nlohmann::json diff_json(const DiffReport& d) {
  using nlohmann::json;
  json j = {{"base_files", d.base_files},
            {"test_files", d.test_files},
            {"changes", json::array()},
            {"rows", json::array()},
            {"only_base", d.only_base},
            {"only_test", d.only_test},
            {"noise_floor", d.opts.noise_floor ? json(*d.opts.noise_floor) : json(nullptr)},
            {"match", d.opts.match == all_fields() ? std::string("all") : match_list(d.opts.match)},
            {"better_match", d.better_match
                                 ? json{{"match", match_list(d.better_match->fields)}, {"pairs", d.better_match->pairs}}
                                 : json(nullptr)}};
  for (const auto& c : d.changes) j["changes"].push_back({{"key", c.key}, {"base", c.base}, {"test", c.test}});
  for (const auto& r : d.rows) {
    json metrics = json::object();
    for (const auto& x : r.metrics)
      metrics[x.key] = {{"base", x.base ? json(*x.base) : json(nullptr)},
                        {"test", x.test ? json(*x.test) : json(nullptr)}};
    json differs = json::array();
    for (const auto& x : r.differs)
      differs.push_back({{"field", config_field_name(x.field)}, {"base", x.a}, {"test", x.b}});
    j["rows"].push_back({{"model", r.base_key.model},
                         {"test_model", r.test_key.model},
                         {"setup", r.base_key.setup_label()},
                         {"test_setup", r.test_key.setup_label()},
                         {"description", r.base_key.describe()},
                         {"label", r.label},
                         {"test_label", r.test_label},
                         {"batch_per_rank", r.base_key.batch_per_rank},
                         {"test_batch_per_rank", r.test_key.batch_per_rank},
                         {"world_size", r.base_key.world_size},
                         {"ddp", r.base_key.ddp},
                         {"differs", differs},
                         {"base_launch_medians_s", r.base_launches},
                         {"test_launch_medians_s", r.test_launches},
                         {"base_iterations", r.base_iterations},
                         {"test_iterations", r.test_iterations},
                         {"base_s", r.base_s},
                         {"test_s", r.test_s},
                         {"base_ex_s", r.base_ex_s},
                         {"test_ex_s", r.test_ex_s},
                         {"change", r.change},
                         {"ci_s", r.ci ? json{r.ci->lo, r.ci->hi} : json(nullptr)},
                         {"method", r.method},
                         {"verdict", r.verdict},
                         {"metrics", metrics}});
  }
  return j;
}

}  // namespace ddpbench
