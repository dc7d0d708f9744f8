#include "core/analysis/diff.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>

#include "core/config/ddp_settings.hpp"
#include "core/result/row_metrics.hpp"
#include "core/result/row_warnings.hpp"
#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"
#include "core/util/table.hpp"

namespace ddpbench {
namespace {

// Below this many iterations in a launch its median says too little to compare.
constexpr size_t kMinIterations = 5;

// Paths whose values differ between any two launches and say nothing at all: never listed.
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

// Whether a path holds a setting the measurement depends on (what the header lists by default):
// the run's configuration, the software and hardware it ran on, and the variables that change a
// step; not what names the launch (job ids, ports, temporary paths, the rendezvous, per-node
// detail, GPU UUIDs and bus ids, git SHAs, the schema version).
bool measured_setting(const std::string& path) {
  if (path.rfind("config.", 0) == 0) {
    for (const char* p : {"config.json_path", "config.defaults_note", "config.resume", "config.per_rank_series",
                          "config.batch_size_search", "config.timeout_s", "config.data_dir"})
      if (path.rfind(p, 0) == 0) return false;
    return true;
  }
  if (path == "tool.version") return true;
  if (path.rfind("environment.", 0) != 0) return false;
  const std::string e = path.substr(12);
  if (e.rfind("env.", 0) == 0) return measurement_variable(e.substr(4));
  if (e.rfind("gpus[", 0) == 0) return e.size() > 5 && e.substr(e.find(']') + 1) == ".name";
  for (const char* k : {"torch", "cuda", "nccl", "cudnn", "driver", "backend", "device_type", "cpu_model",
                        "threads_per_rank", "world_size", "launcher", "hosts"})
    if (e == k) return true;
  for (const char* k : {"math.", "malloc_tuning."})
    if (e.rfind(k, 0) == 0) return true;
  return false;
}

void flatten(const nlohmann::json& j, const std::string& path, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (j.is_array() && !j.empty() && (j.front().is_object() || j.front().is_array())) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], fmt::format("{}[{}]", path, i), out);
  } else if (!j.is_null()) {  // a null is a value not recorded: the same as absent
    out[path] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

// Configuration, environment and tool values of each side; a side whose launches differ
// shows every value ("a | b"). Without `all`, only measured settings (measured_setting);
// `hidden` counts the others that differ.
std::vector<ConfigChange> changes_between(const std::vector<NamedResult>& base, const std::vector<NamedResult>& test,
                                          bool all, int& hidden) {
  using Section = nlohmann::json ResultFile::*;
  std::vector<ConfigChange> out;
  hidden = 0;
  for (const auto& [name, section] : {std::pair<const char*, Section>{"config", &ResultFile::config},
                                      {"environment", &ResultFile::environment},
                                      {"tool", &ResultFile::tool}}) {
    auto side = [&, name = name, section = section](const std::vector<NamedResult>& files) {
      std::vector<std::map<std::string, std::string>> flat(files.size());
      for (size_t i = 0; i < files.size(); ++i)
        flatten(section == &ResultFile::config
                    ? run_config_with_later_defaults(files[i].file.config, files[i].file.kind)
                    : files[i].file.*section,
                name, flat[i]);
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
      if (vb == vt) continue;
      if (!all && !measured_setting(k)) {
        ++hidden;
        continue;
      }
      out.push_back({k, std::move(vb), std::move(vt)});
    }
  }
  // The schema version: a file format, not a setting.
  std::set<std::string> vb, vt;
  for (const auto& f : base) vb.insert(f.file.schema_version);
  for (const auto& f : test) vt.insert(f.file.schema_version);
  if (vb != vt) {
    if (all)
      out.push_back({"schema_version", fmt::format("{}", fmt::join(vb, " | ")), fmt::format("{}", fmt::join(vt, " | "))});
    else
      ++hidden;
  }
  return out;
}

// The launches of one configuration on one side (a launch given twice, the same series, counts once).
struct SideRow {
  ConfigKey key;
  std::string label;
  std::vector<const BenchResult*> launches;
  std::vector<std::string> files;  // the file of each launch
};

std::vector<SideRow> side_rows(const std::vector<NamedResult>& files) {
  std::vector<SideRow> rows;
  for (const auto& nf : files)
    for (const auto& r : nf.file.results) {
      const ConfigKey k = ConfigKey::of(nf.file, r);
      auto it = std::find_if(rows.begin(), rows.end(), [&](const SideRow& s) { return s.key == k; });
      if (it == rows.end()) {
        rows.push_back({k, r.label, {&r}, {nf.name}});
        continue;
      }
      const auto series = row_iteration_series(r);
      const bool repeat = std::any_of(it->launches.begin(), it->launches.end(), [&](const BenchResult* x) {
        return row_iteration_series(*x) == series && x->summary.p50_s == r.summary.p50_s;
      });
      if (repeat) continue;  // the same launch given again: no evidence of a spread of 0
      it->launches.push_back(&r);
      it->files.push_back(nf.name);
    }
  return rows;
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

// A side's warning codes over its launches, in first-seen order, and their words.
std::pair<std::vector<std::string>, std::string> side_warnings(const SideRow& s) {
  std::vector<std::string> codes, words;
  for (const auto* r : s.launches)
    for (const auto& w : r->warnings) {
      if (std::find(codes.begin(), codes.end(), w.code) != codes.end()) continue;
      codes.push_back(w.code);
      if (w.code == "noisy") words.push_back(fmt::format("noisy (cv {:.1f}%)", 100 * row_cv(*r)));
      else if (w.code == "few_samples") words.push_back(fmt::format("few_samples ({} iterations)", row_iterations(*r)));
      else words.push_back(w.code);
    }
  return {codes, fmt::format("{}", fmt::join(words, ", "))};
}

// The first warning of either side that voids the p50 (row_metrics undermining_warning).
const RowWarning* voiding_warning(const SideRow& b, const SideRow& t) {
  for (const auto* s : {&b, &t})
    for (const auto* r : s->launches)
      if (const RowWarning* w = undermining_warning(r->warnings, "p50_s")) return w;
  return nullptr;
}

// Pooled percentile p of a row's step times: the recorded summary's (benchmark.py's statistic,
// over every rank's samples).
double pooled_percentile(const BenchResult& r, int p) {
  if (p == 50) return r.summary.p50_s;
  if (p == 75) return r.summary.p75_s > 0 ? r.summary.p75_s : r.summary.p50_s;
  return r.summary.p95_s > 0 ? r.summary.p95_s : r.summary.p50_s;
}

// The interval's verdict: "slower" when it lies above 0, "faster" below, else "within noise".
std::string verdict_of(const Interval& ci) {
  if (ci.lo > 0.0) return "slower";
  if (ci.hi < 0.0) return "faster";
  return "within noise";
}

}  // namespace

FieldSet diff_default_fields() {
  return fields({ConfigField::model, ConfigField::batch_per_rank, ConfigField::image_size, ConfigField::scaling,
                 ConfigField::mode, ConfigField::world_size, ConfigField::ddp});
}

namespace {

// The fields of the measured changes that only communication reads: a row without DDP does not
// communicate, so a change of only these cannot move it (the DDP knobs, the backend, NCCL).
bool communication_only(const ConfigChange& c) {
  for (const char* k : {"config.bucket_cap_mb", "config.first_bucket_cap_mb", "config.comm_hook", "config.backend",
                        "environment.backend", "environment.nccl"})
    if (c.key == k) return true;
  for (const auto& d : ddp_flag_settings())
    if (c.key == std::string("config.") + d.name) return true;
  return c.key.rfind("environment.env.NCCL_", 0) == 0 || c.key.rfind("environment.env.TORCH_NCCL_", 0) == 0;
}

struct Compared {
  DiffRow row;
  std::vector<std::vector<double>> sb, st;  // per launch: iteration means
};

// The numbers of one pair, before its verdict.
Compared measure(const SideRow& b, const SideRow& t) {
  Compared c;
  DiffRow& row = c.row;
  row.base_key = b.key;
  row.test_key = t.key;
  row.differs = differences(b.key, t.key);
  row.label = b.label;
  row.test_label = t.label;
  for (const auto& m : row_metrics())
    if (m.used_in(kInDiff)) row.metrics.push_back({m.key, launches_mean(m, b), launches_mean(m, t)});
  std::tie(row.base_warnings, row.base_warning_words) = side_warnings(b);
  std::tie(row.test_warnings, row.test_warning_words) = side_warnings(t);
  for (const auto* r : b.launches) c.sb.push_back(row_iteration_series(*r));
  for (const auto* r : t.launches) c.st.push_back(row_iteration_series(*r));
  for (int p : {50, 75, 95}) {
    DiffPercentile x;
    x.p = p;
    std::vector<double> vb, vt;
    for (const auto* r : b.launches) vb.push_back(pooled_percentile(*r, p));
    for (const auto* r : t.launches) vt.push_back(pooled_percentile(*r, p));
    x.base_s = mean(vb);
    x.test_s = mean(vt);
    x.diff = -(x.test_s - x.base_s) / x.base_s;
    row.percentiles.push_back(x);
  }
  const auto empty = [](const auto& v) { return v.empty(); };
  if (std::any_of(c.sb.begin(), c.sb.end(), empty) || std::any_of(c.st.begin(), c.st.end(), empty)) return c;
  for (const auto& s : c.sb) {
    row.base_launches.push_back(percentile(s, 50));
    row.base_iterations += static_cast<int>(s.size());
  }
  for (const auto& s : c.st) {
    row.test_launches.push_back(percentile(s, 50));
    row.test_iterations += static_cast<int>(s.size());
  }
  row.base_s = mean(row.base_launches);
  row.test_s = mean(row.test_launches);
  // Examples per rank per optimizer step: the micro-batch times the micro-steps.
  row.base_ex_s = static_cast<double>(b.key.batch_per_rank) * b.key.grad_accum / row.base_s;
  row.test_ex_s = static_cast<double>(t.key.batch_per_rank) * t.key.grad_accum / row.test_s;
  row.change = (row.test_s - row.base_s) / row.base_s;
  return c;
}

// The 95% interval of one pair's change: the launches' spread (several launches a side), else
// the within-launch bootstrap, widened by `floor` (fraction of base; 0 for none).
Interval interval_of(Compared& c, double floor, const std::string& floor_method, const std::string& basis) {
  DiffRow& row = c.row;
  Interval ci;
  if (c.sb.size() == 1 && c.st.size() == 1) {
    ci = bootstrap_median_diff_ci(c.sb.front(), c.st.front());
    row.method = "bootstrap";
    if (floor > 0 || !floor_method.empty()) {
      row.noise_floor = floor;
      row.floor_basis = basis;
      ci.lo -= floor * row.base_launches.front();
      ci.hi += floor * row.base_launches.front();
      row.method += " + " + floor_method;
    }
  } else {
    ci = t_diff_ci(row.base_launches, row.test_launches);
    row.method = c.sb.size() >= 2 && c.st.size() >= 2 ? "Welch t" : "pooled t";
  }
  return ci;
}

// The verdict of a pair that is not a control: void, too few samples, or the interval's.
void judge(Compared& c, const SideRow& b, const SideRow& t, const DiffOptions& opts,
           const std::optional<std::pair<double, std::string>>& control_floor) {
  DiffRow& row = c.row;
  if (row.base_launches.empty()) {
    row.verdict = "no samples";
    return;
  }
  const auto few = [](const auto& v) { return v.size() < kMinIterations; };
  if (std::any_of(c.sb.begin(), c.sb.end(), few) || std::any_of(c.st.begin(), c.st.end(), few)) {
    row.verdict = "too few samples";
    return;
  }
  Interval ci;
  const bool one_each = c.sb.size() == 1 && c.st.size() == 1;
  if (one_each && opts.noise_floor) ci = interval_of(c, *opts.noise_floor, "noise floor", "--noise-floor");
  else if (one_each && control_floor) ci = interval_of(c, control_floor->first, "control", control_floor->second);
  else ci = interval_of(c, 0, "", "");
  row.ci = ci;
  if (const RowWarning* w = voiding_warning(b, t)) {  // a number the rows' own warnings void has no verdict
    row.verdict = "void (" + w->code + ")";
    return;
  }
  row.verdict = verdict_of(ci);
  if (one_each && row.method == "bootstrap" && row.verdict != "within noise") row.verdict += ", unconfirmed";
}

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

// The default match: diff_default_fields, then, when those leave rows of a side alike, the
// fewest fields varying within a side (plainest first) that tell them apart; every field when
// nothing does.
FieldSet default_match(const DiffRows& r) {
  const FieldSet base = diff_default_fields();
  if (!diff_pair_rows(r, base).ambiguous) return base;
  const size_t n = r.nb + r.nt;
  std::vector<size_t> cand;
  for (size_t f : diff_field_preference()) {
    if (base.test(f)) continue;
    bool varies = false;
    for (size_t k = 1; k < r.nb; ++k) varies = varies || r.codes[k][f] != r.codes[0][f];
    for (size_t k = r.nb + 1; k < n; ++k) varies = varies || r.codes[k][f] != r.codes[r.nb][f];
    if (varies) cand.push_back(f);
  }
  const size_t m = std::min(cand.size(), kMaxExhaustiveFields);
  std::optional<FieldSet> best;
  size_t best_count = 0, best_pairs = 0;
  for (uint32_t mask = 1; mask < (1u << m); ++mask) {
    FieldSet s = base;
    size_t count = 0;
    for (size_t i = 0; i < m; ++i)
      if (mask & (1u << i)) {
        s.set(cand[i]);
        ++count;
      }
    const DiffPairing p = diff_pair_rows(r, s);
    if (p.ambiguous || p.pairs.empty()) continue;
    if (!best || count < best_count || (count == best_count && p.pairs.size() > best_pairs)) {
      best = s;
      best_count = count;
      best_pairs = p.pairs.size();
    }
  }
  return best.value_or(all_fields());
}

std::string short_row(const SideRow& s) { return s.key.describe() + " (" + s.label + ")"; }

}  // namespace

std::string diff_row_name(const DiffRow& r) {
  const bool gpu = r.base_key.device.rfind("CPU", 0) != 0;
  const std::string label = r.label == r.test_label ? r.label : r.label + " -> " + r.test_label;
  const int n = r.base_key.ddp ? r.base_key.world_size : 1;
  return fmt::format("{} {}{} {}", n, gpu ? "GPU" : "CPU", n == 1 ? "" : "s", label);
}

namespace {

std::string row_name(const DiffRow& r) { return diff_row_name(r); }

// "a", or "a -> b" where the sides differ.
std::string diff_sides(const std::string& a, const std::string& b) { return a == b ? a : a + " -> " + b; }

// The claim of one row's verdict (kind "diff_row").
Claim diff_claim(const DiffRow& r, const SideRow& b, const SideRow& t, const std::vector<std::string>& base_labels,
                 const std::vector<std::string>& test_labels) {
  Claim c;
  c.kind = "diff_row";
  c.subject = fmt::format("{} {}", diff_sides(r.base_key.model, r.test_key.model), row_name(r));
  c.verdict = r.verdict;
  if (!r.base_launches.empty()) {
    c.num("base_s", r.base_s, "s").num("test_s", r.test_s, "s");
    c.num("diff", -r.change, "fraction");  // diff.py's sign: + is faster
    c.num("base_ex_s", r.base_ex_s, "ex/s").num("test_ex_s", r.test_ex_s, "ex/s");
  }
  for (const auto& p : r.percentiles) {
    c.num(fmt::format("base_p{}_s", p.p), p.base_s, "s");
    c.num(fmt::format("test_p{}_s", p.p), p.test_s, "s");
    c.num(fmt::format("diff_p{}", p.p), p.diff, "fraction");
  }
  if (r.ci) {  // of the diff, + faster: the interval of test - base, negated, over base
    c.num("ci_lo", -r.ci->hi / r.base_s, "fraction").num("ci_hi", -r.ci->lo / r.base_s, "fraction");
  }
  if (r.noise_floor > 0) c.num("noise_floor", r.noise_floor, "fraction");
  c.num("base_launches", static_cast<double>(r.base_launches.size()), "count");
  c.num("test_launches", static_cast<double>(r.test_launches.size()), "count");
  c.num("base_iterations", r.base_iterations, "count").num("test_iterations", r.test_iterations, "count");
  c.word("method", r.method).word("floor_basis", r.floor_basis);
  const auto n = [](size_t launches, int iterations) {
    return launches == 1 ? fmt::format("1x{}", iterations) : fmt::format("{}x, {} it", launches, iterations);
  };
  c.word("n", fmt::format("n {} and {}", n(r.base_launches.size(), r.base_iterations),
                          n(r.test_launches.size(), r.test_iterations)));
  c.word("base_warnings", r.base_warning_words).word("test_warnings", r.test_warning_words);
  std::string why;
  if (r.control)
    why = "the recorded change between the files cannot move a row without DDP, so its change is launch-to-launch "
          "noise (or a change the files do not record)";
  else if (r.verdict.rfind("void", 0) == 0)
    why = "a warning of its rows voids the p50, so neither faster nor slower is said";
  else if (r.verdict.find("unconfirmed") != std::string::npos)
    why = fmt::format("only the within-launch interval excludes 0; the launch-to-launch noise is unmeasured (one "
                      "launch a side): {} launches a side would confirm it",
                      kLaunchesForNoise);
  else if (r.method == "bootstrap + control")
    why = fmt::format("the interval is widened by +-{:.1f}% of base, {}", 100 * r.noise_floor, r.floor_basis);
  c.word("why", why);
  for (size_t i = 0; i < b.launches.size(); ++i)
    c.rows.push_back({b.files[i], base_labels[i], b.launches[i]->index_in_file, "base"});
  for (size_t i = 0; i < t.launches.size(); ++i)
    c.rows.push_back({t.files[i], test_labels[i], t.launches[i]->index_in_file, "test"});
  c.warnings = r.base_warnings;
  for (const auto& w : r.test_warnings)
    if (std::find(c.warnings.begin(), c.warnings.end(), w) == c.warnings.end()) c.warnings.push_back(w);
  return finish_claim(std::move(c));
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
  d.changes = changes_between(base, test, opts.all_fields, d.hidden_changes);
  int hidden = 0;
  const std::vector<ConfigChange> measured = opts.all_fields ? changes_between(base, test, false, hidden) : d.changes;

  const auto rb = side_rows(base), rt = side_rows(test);
  if (rb.empty() || rt.empty())
    throw UsageError("a side holds no benchmark rows; pass files written by ddpbench run --json");
  const DiffRows rows(rb, rt);
  const FieldSet match = opts.match ? *opts.match : default_match(rows);
  d.match = match;
  const DiffPairing p = diff_pair_rows(rows, match);
  if (p.ambiguous) {
    // The fields outside the match in which the alike rows differ: the ones to add.
    const size_t i = p.row;
    const auto& tc = p.alike_test;
    const auto& bc = p.alike_base;
    std::vector<std::string> missing;
    const auto add = [&](const ConfigKey& a, const ConfigKey& b) {
      for (const auto& x : differences(a, b, all_fields() & ~match))
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
    const std::string closest = describe_differences(differences(rb[bi].key, rt[ti].key, match));
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
  // DDP rows first (by model, batch, image size, world size), the no-DDP rows after them: diff.py's order.
  std::sort(pairs.begin(), pairs.end(), [&](const auto& x, const auto& y) {
    const ConfigKey &a = rb[x.first].key, &b = rb[y.first].key;
    return std::make_tuple(!a.ddp, a.model, a.batch_per_rank, a.image_size, a.world_size, x.first) <
           std::make_tuple(!b.ddp, b.model, b.batch_per_rank, b.image_size, b.world_size, y.first);
  });
  std::vector<Compared> cs;
  for (const auto& [i, j] : pairs) cs.push_back(measure(rb[i], rt[j]));
  // Controls: rows the recorded change cannot move. When only communication settings changed
  // (the DDP knobs, the backend, NCCL), the rows without DDP. (When nothing recorded changed, the
  // change may be one the files do not record, a patched torch of the same version: no control.)
  const bool comm_only =
      !measured.empty() && std::all_of(measured.begin(), measured.end(), communication_only);
  // Per benchmark (model, batch, image size, mode): the floor its control measured between
  // these launches, max(|change|, the interval's reach) / base, for its other rows.
  std::map<std::tuple<std::string, long long, int, std::string>, std::pair<double, std::string>> control_floor;
  for (size_t k = 0; k < cs.size(); ++k) {
    DiffRow& row = cs[k].row;
    const bool is_control = row.differs.empty() && comm_only && !row.base_key.ddp;
    if (!is_control) continue;
    row.control = true;
    if (row.base_launches.empty()) {
      row.verdict = "no samples";
      continue;
    }
    const Interval ci = interval_of(cs[k], 0, "", "");
    row.ci = ci;
    row.verdict = "control";
    const double reach = std::max({std::fabs(row.change), std::fabs(ci.lo) / row.base_s, std::fabs(ci.hi) / row.base_s});
    const auto key = std::make_tuple(row.base_key.model, row.base_key.batch_per_rank, row.base_key.image_size,
                                     row.base_key.mode);
    const std::string basis = fmt::format("what the control row {} moved between the same launches (its change {}, "
                                          "its 95% interval reaching {:.1f}%)",
                                          row_name(row), signed_percent(-row.change), 100 * reach);
    if (!control_floor.count(key) || reach > control_floor[key].first) control_floor[key] = {reach, basis};
  }
  for (size_t k = 0; k < cs.size(); ++k) {
    if (cs[k].row.control) continue;
    const auto& [i, j] = pairs[k];
    const ConfigKey& key = cs[k].row.base_key;
    const auto it = control_floor.find(std::make_tuple(key.model, key.batch_per_rank, key.image_size, key.mode));
    judge(cs[k], rb[i], rt[j], opts, it == control_floor.end() ? std::nullopt : std::optional(it->second));
  }
  const auto labels = [](const std::vector<std::string>& files, const std::string& side) {
    std::vector<std::string> out;
    for (size_t i = 0; i < files.size(); ++i) out.push_back(side + std::to_string(i + 1));
    return out;
  };
  std::map<std::string, std::string> base_label, test_label;
  for (size_t i = 0; i < base.size(); ++i) base_label[base[i].name] = "B" + std::to_string(i + 1);
  for (size_t i = 0; i < test.size(); ++i) test_label[test[i].name] = "T" + std::to_string(i + 1);
  for (size_t k = 0; k < cs.size(); ++k) {
    const auto& [i, j] = pairs[k];
    std::vector<std::string> bl, tl;
    for (const auto& f : rb[i].files) bl.push_back(base_label[f]);
    for (const auto& f : rt[j].files) tl.push_back(test_label[f]);
    cs[k].row.claim = diff_claim(cs[k].row, rb[i], rt[j], bl, tl);
    d.rows.push_back(std::move(cs[k].row));
  }
  (void)labels;
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

std::vector<Claim> DiffReport::claims() const {
  std::vector<Claim> out;
  for (const auto& r : rows) out.push_back(r.claim);
  return out;
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
    if (r.control) continue;
    if (r.verdict.rfind("slower", 0) == 0 && r.change > fraction)
      out.push_back(fmt::format("{}: slower by {:.1f}% (limit {:.1f}%){}", r.base_key.describe(), 100 * r.change,
                                100 * fraction,
                                r.verdict == "slower" ? "" : "; unconfirmed: one launch a side, launch noise unmeasured"));
    else if (r.verdict.rfind("slower", 0) != 0 && r.verdict.rfind("faster", 0) != 0 && r.verdict != "within noise")
      out.push_back(fmt::format("{}: no verdict ({})", r.base_key.describe(), r.verdict));
  }
  for (const auto& b : d.only_base) out.push_back(fmt::format("{}: not in the test files", b));
  return out;
}

namespace {

std::string n_text(size_t launches, int iterations) {
  return launches == 1 ? fmt::format("1x{}", iterations) : fmt::format("{}x, {} it", launches, iterations);
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

// "Benchmark: resnet50 with batch size 32 (224 px, fp32 -> bf16, NVIDIA H100 80GB HBM3)": diff.py's
// heading of one model at one batch size.
std::string benchmark_title(const DiffRow& r) {
  // The setup without the DDP knobs (the rows of a benchmark differ in them, the header says how).
  const auto setup = [](const ConfigKey& k) { return k.with_default_knobs().setup_label(); };
  return fmt::format("Benchmark: {} with batch size {} ({}, {}, {})", diff_sides(r.base_key.model, r.test_key.model),
                     diff_sides(std::to_string(r.base_key.batch_per_rank), std::to_string(r.test_key.batch_per_rank)),
                     r.base_key.input_size(), diff_sides(setup(r.base_key), setup(r.test_key)),
                     diff_sides(r.base_key.device, r.test_key.device));
}

// The rows of one benchmark (model, batch per rank, image size), in report order.
std::vector<std::vector<const DiffRow*>> benchmark_groups(const DiffReport& d) {
  std::vector<std::vector<const DiffRow*>> out;
  for (const auto& r : d.rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) {
      const ConfigKey& k = g.front()->base_key;
      return k.model == r.base_key.model && k.batch_per_rank == r.base_key.batch_per_rank &&
             k.image_size == r.base_key.image_size && g.front()->test_key.model == r.test_key.model;
    });
    if (it == out.end()) out.push_back({&r});
    else it->push_back(&r);
  }
  // DDP rows first, then the no-DDP row (diff_results' order holds across benchmarks; within one too).
  for (auto& g : out)
    std::stable_sort(g.begin(), g.end(), [](const DiffRow* a, const DiffRow* b) { return a->base_key.ddp > b->base_key.ddp; });
  return out;
}

// "base: noisy (cv 6.6%); test: noisy (cv 7.9%)" ("" when neither has a warning).
std::string warnings_cell(const DiffRow& r) {
  std::vector<std::string> parts;
  if (!r.base_warning_words.empty()) parts.push_back("base: " + r.base_warning_words);
  if (!r.test_warning_words.empty()) parts.push_back("test: " + r.test_warning_words);
  return fmt::format("{}", fmt::join(parts, "; "));
}

// diff.py's table of one benchmark: per row the test's sec/iter and ex/sec at p50, p75 and p95
// and the diff against the base (+ is faster), then the verdict, each side's warnings and n.
Table benchmark_table(const std::vector<const DiffRow*>& rows) {
  Table t;
  t.kind = "diff";
  t.title = benchmark_title(*rows.front());
  t.context = {{"model", rows.front()->base_key.model},
               {"batch_per_rank", rows.front()->base_key.batch_per_rank},
               {"image_size", static_cast<long long>(rows.front()->base_key.image_size)}};
  const auto col = [](std::string key, std::string header, std::string unit, std::function<std::string(const Value&)> f) {
    return Column{std::move(key), std::move(header), std::move(unit), std::move(f)};
  };
  t.columns.push_back(col("row", "", "", fmtcol::plain()));
  for (int p : {50, 75, 95}) {
    t.columns.push_back(col(fmt::format("p{}_s", p), fmt::format("p{} s/iter", p), "s", fmtcol::fixed(3)));
    t.columns.push_back(col(fmt::format("p{}_ex_s", p), "ex/sec", "ex/s", fmtcol::fixed(0)));
    t.columns.push_back(col(fmt::format("p{}_diff", p), "diff", "fraction", [](const Value& v) {
      return std::holds_alternative<double>(v) ? signed_percent(std::get<double>(v)) : std::string("n/a");
    }));
  }
  t.columns.push_back(col("verdict", "verdict", "", fmtcol::plain()));
  t.columns.push_back(col("warnings", "warnings", "", fmtcol::plain()));
  t.columns.push_back(col("n", "n base, test", "", fmtcol::plain()));
  for (const DiffRow* r : rows) {
    std::vector<Value> cells = {row_name(*r)};
    for (const auto& p : r->percentiles) {
      const double ex = static_cast<double>(r->test_key.batch_per_rank) * r->test_key.grad_accum / p.test_s;
      cells.push_back(p.test_s);
      cells.push_back(ex);
      cells.push_back(p.diff);
    }
    cells.push_back(r->verdict);
    const std::string w = warnings_cell(*r);
    cells.push_back(w.empty() ? Value() : Value(w));
    cells.push_back(n_text(r->base_launches.size(), r->base_iterations) + ", " +
                    n_text(r->test_launches.size(), r->test_iterations));
    t.rows.push_back(std::move(cells));
  }
  t.notes.push_back("the test side's numbers; diff = -(test - base) / base at each percentile of the pooled step "
                    "times, + is faster (as PyTorch's diff.py)");
  return t;
}

// The row metrics of both sides that some row has ("peak mem: 333.9 MiB -> 342.2 MiB").
std::optional<Table> metrics_table(const DiffReport& d) {
  std::vector<size_t> shown;
  for (size_t i = 0; !d.rows.empty() && i < d.rows.front().metrics.size(); ++i)
    if (std::any_of(d.rows.begin(), d.rows.end(), [i](const DiffRow& r) { return r.metrics[i].base || r.metrics[i].test; }))
      shown.push_back(i);
  if (shown.empty()) return std::nullopt;
  Table t;
  t.kind = "diff_metrics";
  t.title = "Row metrics (base -> test; shown, not judged: the verdicts are about the step time):";
  t.columns.push_back({"row", "row", "", fmtcol::plain()});
  for (size_t i : shown) {
    const RowMetric& m = *find_row_metric(d.rows.front().metrics[i].key);
    t.columns.push_back({m.key, m.header, "", fmtcol::plain()});
  }
  for (const auto& r : d.rows) {
    std::vector<Value> cells = {diff_sides(r.base_key.model, r.test_key.model) + " " + row_name(r)};
    for (size_t i : shown) {
      const auto& x = r.metrics[i];
      const RowMetric& m = *find_row_metric(x.key);
      const auto text = [&](const std::optional<double>& v) { return v ? m.format(Value(*v)) : std::string("n/a"); };
      cells.push_back(x.base || x.test ? Value(diff_sides(text(x.base), text(x.test))) : Value());
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// The notes under the tables: how the intervals were made, rows without a partner and the
// --match that would pair them.
std::vector<std::string> diff_notes(const DiffReport& d) {
  std::vector<std::string> notes;
  std::set<std::string> methods;
  for (const auto& r : d.rows)
    if (!r.method.empty() && !r.control) methods.insert(r.method);
  if (methods.count("bootstrap"))
    notes.push_back(fmt::format(
        "one launch per side: 95% bootstrap interval of the median difference of the per-iteration means; it holds "
        "the noise within the launches only, so a change it resolves is 'unconfirmed' until {} launches a side (or "
        "--noise-floor PCT) measure the launch-to-launch noise",
        kLaunchesForNoise));
  for (const auto& r : d.rows)
    if (r.method == "bootstrap + noise floor") {
      notes.push_back(fmt::format("one launch per side: 95% bootstrap interval widened by the noise floor of +-{:.1f}% "
                                  "of base (--noise-floor); 'within noise' when it contains 0",
                                  100 * r.noise_floor));
      break;
    }
  if (methods.count("bootstrap + control"))
    notes.push_back(
        "controls: the rows without DDP when only communication settings changed (the DDP knobs, the backend, "
        "NCCL), which that change cannot move; their change between the same launches is launch-to-launch noise, "
        "and the intervals of the other rows of their benchmark are widened by it");
  if (std::any_of(methods.begin(), methods.end(), [](const std::string& m) { return m.find(" t") != std::string::npos; }))
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

// What the paired rows differ in outside the match, as sentences: one when every pair differs
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
    out.push_back(fmt::format("Every pair differs in {}", *kinds.begin()));
    return out;
  }
  // A row whose every differing field is a setting the header lists as changed says nothing new.
  const auto explained = [&](const DiffRow& r) {
    return std::all_of(r.differs.begin(), r.differs.end(), [&](const FieldDifference& x) {
      const std::string key = std::string("config.") + config_field_name(x.field);
      return std::any_of(d.changes.begin(), d.changes.end(), [&](const ConfigChange& c) { return c.key == key; });
    });
  };
  for (const auto& r : d.rows)
    if (!r.differs.empty() && !explained(r))
      out.push_back(fmt::format("{} {}: differs in {}", r.base_key.model, row_name(r), describe_differences(r.differs)));
  return out;
}

// The header: the files, what changed, how rows were paired.
std::vector<std::string> header_lines(const DiffReport& d) {
  std::vector<std::string> out = {"Base: " + diff_launches(d.base_files), "Test: " + diff_launches(d.test_files)};
  if (d.changes.empty()) {
    out.push_back(d.opts.all_fields ? "Configuration and environment: no differences."
                                    : "What changed: no measured setting differs between the files.");
  } else {
    out.push_back(d.opts.all_fields ? "Every value that differs (base -> test):" : "What changed (base -> test):");
    for (const auto& c : d.changes) out.push_back(fmt::format("  {}: {} -> {}", c.key, c.base, c.test));
  }
  if (d.hidden_changes > 0)
    out.push_back(fmt::format("({} more value{} differ{} that name the launch rather than its setup: job ids, paths, "
                              "GPU UUIDs, git SHAs, the schema version; --all-fields lists them)",
                              d.hidden_changes, d.hidden_changes == 1 ? "" : "s", d.hidden_changes == 1 ? "s" : ""));
  if (d.opts.match)
    out.push_back(fmt::format("Rows paired on --match {}; the other fields may differ.", match_list(d.match)));
  else if (d.match != diff_default_fields())
    out.push_back(fmt::format("Rows paired on {} (diff.py's model, batch and GPU count, and what tells each side's rows "
                              "apart).",
                              match_list(d.match)));
  for (const auto& s : diff_differs_sentences(d)) out.push_back(s + ".");
  return out;
}

}  // namespace

std::string render_diff_text(const DiffReport& d, size_t width) {
  std::string out;
  for (const auto& l : header_lines(d)) out += diff_wrapped(l, width, l.rfind("  ", 0) == 0 ? 6 : 2);
  std::vector<Table> tables;
  for (const auto& g : benchmark_groups(d)) {
    Table t = benchmark_table(g);
    if (width > 0) {
      // The verdicts are sentences below the table: keep the columns diff.py prints.
      for (const char* k : {"verdict", "warnings", "n"}) {
        const size_t c = t.col(k);
        t.columns.erase(t.columns.begin() + static_cast<long>(c));
        for (auto& row : t.rows) row.erase(row.begin() + static_cast<long>(c));
      }
    }
    tables.push_back(std::move(t));
  }
  out += "\n" + render_tables(tables, TableFormat::text, width);
  out += "\n" + diff_wrapped("Verdicts (the median of the per-iteration means across ranks; the 95% interval of the diff, "
                             "+ is faster):",
                             width);
  for (const auto& r : d.rows) out += diff_wrapped("- " + r.claim.text, width, 4);
  if (const auto m = metrics_table(d)) out += "\n" + render_tables({*m}, TableFormat::text, width);
  out += "\n";
  for (const auto& n : diff_notes(d)) out += diff_wrapped(n, width);
  return out;
}

std::string render_diff_markdown(const DiffReport& d) {
  std::string out;
  for (const auto& l : header_lines(d))
    out += l.rfind("  ", 0) == 0 ? "- `" + l.substr(2, l.find(':') - 2) + "`" + l.substr(l.find(':')) + "\n" : "\n" + l + "\n";
  std::vector<Table> tables;
  for (const auto& g : benchmark_groups(d)) tables.push_back(benchmark_table(g));
  if (const auto m = metrics_table(d)) tables.push_back(*m);
  out += "\n" + render_tables(tables, TableFormat::markdown);
  out += "\nVerdicts (the median of the per-iteration means across ranks; the 95% interval of the diff, + is faster):\n\n";
  for (const auto& r : d.rows) out += "- " + r.claim.text + "\n";
  out += "\n";
  for (const auto& n : diff_notes(d)) out += n + "\n\n";
  return out;
}

nlohmann::json diff_json(const DiffReport& d) {
  using nlohmann::json;
  json j = {{"base_files", d.base_files},
            {"test_files", d.test_files},
            {"changes", json::array()},
            {"hidden_changes", d.hidden_changes},
            {"rows", json::array()},
            {"only_base", d.only_base},
            {"only_test", d.only_test},
            {"noise_floor", d.opts.noise_floor ? json(*d.opts.noise_floor) : json(nullptr)},
            {"match", d.match == all_fields() ? std::string("all") : match_list(d.match)},
            {"match_given", d.opts.match.has_value()},
            {"better_match", d.better_match
                                 ? json{{"match", match_list(d.better_match->fields)}, {"pairs", d.better_match->pairs}}
                                 : json(nullptr)},
            {"claims", claims_json(d.claims())}};
  for (const auto& c : d.changes) j["changes"].push_back({{"key", c.key}, {"base", c.base}, {"test", c.test}});
  for (const auto& r : d.rows) {
    json metrics = json::object();
    for (const auto& x : r.metrics)
      metrics[x.key] = {{"base", x.base ? json(*x.base) : json(nullptr)},
                        {"test", x.test ? json(*x.test) : json(nullptr)}};
    json differs = json::array();
    for (const auto& x : r.differs)
      differs.push_back({{"field", config_field_name(x.field)}, {"base", x.a}, {"test", x.b}});
    json pct = json::object();
    for (const auto& p : r.percentiles)
      pct["p" + std::to_string(p.p)] = {{"base_s", p.base_s}, {"test_s", p.test_s}, {"diff", p.diff}};
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
                         {"percentiles", pct},
                         {"ci_s", r.ci ? json{r.ci->lo, r.ci->hi} : json(nullptr)},
                         {"method", r.method},
                         {"noise_floor", r.noise_floor},
                         {"floor_basis", r.floor_basis},
                         {"verdict", r.verdict},
                         {"control", r.control},
                         {"base_warnings", r.base_warnings},
                         {"test_warnings", r.test_warnings},
                         {"metrics", metrics}});
  }
  return j;
}

}  // namespace ddpbench
