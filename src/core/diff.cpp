#include "core/diff.hpp"

#include <fmt/format.h>

#include <map>
#include <random>
#include <stdexcept>
#include <tuple>

#include "core/stats.hpp"
#include "core/text_table.hpp"

namespace ddpbench {
namespace {

using Key = std::tuple<std::string, std::string, std::string, int, long long, int, bool>;

Key key_of(const BenchResult& r) {
  return {r.model, r.precision, r.scaling, r.image_size, r.batch_per_rank, r.world_size, r.ddp};
}

// Below this many iterations per side the bootstrap cannot tell a change from noise.
constexpr size_t kMinIterations = 5;

// The row's per-iteration means across ranks (see iteration_means): the values the
// bootstrap may treat as independent.
std::vector<double> iteration_series(const BenchResult& r) {
  std::vector<std::vector<double>> per_rank;
  for (const auto& rk : r.ranks)
    if (!rk.samples_s.empty()) per_rank.push_back(rk.samples_s);
  return iteration_means(per_rank);
}

// Paths whose values differ between any two launches and say nothing about the setup.
bool ignored(const std::string& path) {
  static const char* prefixes[] = {"created_utc", "argv", "config.json_path", "config.defaults_note",
                                   "environment.env.MASTER_PORT", "environment.rendezvous.master_port",
                                   "environment.ranks", "environment.topology", "environment.env.SLURM_JOB_ID",
                                   "environment.slurm_job_id"};
  for (const char* p : prefixes)
    if (path.rfind(p, 0) == 0) return true;
  return false;
}

void flatten(const nlohmann::json& j, const std::string& path, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (j.is_array() && !j.empty() && (j.front().is_object() || j.front().is_array())) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], fmt::format("{}[{}]", path, i), out);
  } else {
    out[path] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

// The interval alone decides: above 0 the test is slower, below 0 faster.
std::string verdict_of(const Interval& ci) {
  if (ci.lo > 0.0) return "slower";
  if (ci.hi < 0.0) return "faster";
  return "within noise";
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

DiffReport diff_results(const ResultFile& base, const ResultFile& test) {
  DiffReport d;
  std::map<std::string, std::string> fb, ft;
  using Section = nlohmann::json ResultFile::*;
  for (const auto& [name, section] : {std::pair<const char*, Section>{"config", &ResultFile::config},
                                      {"environment", &ResultFile::environment}, {"tool", &ResultFile::tool}}) {
    fb.clear();
    ft.clear();
    flatten(base.*section, name, fb);
    flatten(test.*section, name, ft);
    std::map<std::string, std::pair<std::string, std::string>> both;
    for (const auto& [k, v] : fb) both[k].first = v;
    for (const auto& [k, v] : ft) both[k].second = v;
    for (const auto& [k, v] : both)
      if (v.first != v.second && !ignored(k))
        d.changes.push_back({k, v.first.empty() ? "(absent)" : v.first, v.second.empty() ? "(absent)" : v.second});
  }

  std::map<Key, const BenchResult*> in_test;
  for (const auto& r : test.results) in_test.emplace(key_of(r), &r);
  std::map<Key, bool> matched;
  auto describe = [](const BenchResult& r) {
    return fmt::format("{} {} {} batch {} ({} scaling)", r.model, r.precision, r.label, r.batch_per_rank, r.scaling);
  };
  for (const auto& rb : base.results) {
    auto it = in_test.find(key_of(rb));
    if (it == in_test.end()) {
      d.only_base.push_back(describe(rb));
      continue;
    }
    matched[key_of(rb)] = true;
    const BenchResult& rt = *it->second;
    DiffRow row;
    row.model = rb.model;
    row.precision = rb.precision;
    row.scaling = rb.scaling;
    row.label = rb.label;
    row.batch_per_rank = rb.batch_per_rank;
    row.world_size = rb.world_size;
    row.ddp = rb.ddp;
    row.base = rb.summary;
    row.test = rt.summary;
    row.p50_change = rb.summary.p50_s > 0 ? (rt.summary.p50_s - rb.summary.p50_s) / rb.summary.p50_s : 0.0;
    row.ex_change = rb.summary.ex_per_s_per_gpu > 0
                        ? (rt.summary.ex_per_s_per_gpu - rb.summary.ex_per_s_per_gpu) / rb.summary.ex_per_s_per_gpu
                        : 0.0;
    const auto sb = iteration_series(rb), st = iteration_series(rt);
    if (sb.empty() || st.empty()) {
      row.verdict = "no samples";
    } else if (sb.size() < kMinIterations || st.size() < kMinIterations) {
      row.verdict = "too few samples";
    } else {
      row.ci = bootstrap_median_diff_ci(sb, st);
      row.verdict = verdict_of(row.ci);
    }
    d.rows.push_back(row);
  }
  for (const auto& rt : test.results)
    if (!matched.count(key_of(rt))) d.only_test.push_back(describe(rt));
  return d;
}

std::string render_diff_text(const DiffReport& d) {
  std::string out;
  if (d.changes.empty()) {
    out += "Configuration and environment: no differences.\n";
  } else {
    out += "Configuration and environment differences (base -> test):\n";
    const size_t shown = std::min<size_t>(d.changes.size(), 60);
    for (size_t i = 0; i < shown; ++i)
      out += fmt::format("  {}: {} -> {}\n", d.changes[i].key, d.changes[i].base, d.changes[i].test);
    if (d.changes.size() > shown) out += fmt::format("  ... and {} more\n", d.changes.size() - shown);
  }
  TextTable t;
  t.title = "\nPer model and world size (sec/iter pooled over ranks; ex/s per GPU at p50; change = test vs base):";
  t.header = {"model", "precision", "batch", "row", "base p50", "test p50", "p50 chg", "base p75", "test p75",
              "base p95", "test p95", "base ex/s", "test ex/s", "ex/s chg", "verdict"};
  for (const auto& r : d.rows)
    t.rows.push_back({r.model, r.precision, std::to_string(r.batch_per_rank), r.label,
                      fmt::format("{:.4f}", r.base.p50_s), fmt::format("{:.4f}", r.test.p50_s),
                      fmt::format("{:+.1f}%", 100 * r.p50_change), fmt::format("{:.4f}", r.base.p75_s),
                      fmt::format("{:.4f}", r.test.p75_s), fmt::format("{:.4f}", r.base.p95_s),
                      fmt::format("{:.4f}", r.test.p95_s), fmt::format("{:.1f}", r.base.ex_per_s_per_gpu),
                      fmt::format("{:.1f}", r.test.ex_per_s_per_gpu), fmt::format("{:+.1f}%", 100 * r.ex_change),
                      r.verdict});
  t.notes.push_back(
      "verdict: 'within noise' when the 95% bootstrap interval of median(test) - median(base) contains 0 "
      "(docs/METHODOLOGY.md)");
  for (const auto& s : d.only_base) t.notes.push_back("only in base: " + s);
  for (const auto& s : d.only_test) t.notes.push_back("only in test: " + s);
  return out + render_text(t);
}

nlohmann::json diff_json(const DiffReport& d) {
  nlohmann::json j = {{"changes", nlohmann::json::array()}, {"rows", nlohmann::json::array()},
                      {"only_base", d.only_base}, {"only_test", d.only_test}};
  for (const auto& c : d.changes) j["changes"].push_back({{"key", c.key}, {"base", c.base}, {"test", c.test}});
  for (const auto& r : d.rows)
    j["rows"].push_back({{"model", r.model}, {"precision", r.precision}, {"scaling", r.scaling}, {"label", r.label},
                         {"batch_per_rank", r.batch_per_rank}, {"world_size", r.world_size}, {"ddp", r.ddp},
                         {"base", r.base}, {"test", r.test}, {"p50_change", r.p50_change},
                         {"ex_change", r.ex_change}, {"median_diff_ci_s", {r.ci.lo, r.ci.hi}}, {"verdict", r.verdict}});
  return j;
}

}  // namespace ddpbench
