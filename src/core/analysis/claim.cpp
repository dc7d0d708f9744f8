#include "core/analysis/claim.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ddpbench {

std::optional<double> ClaimItem::number(const std::string& name) const {
  for (const auto& n : numbers)
    if (n.name == name) return n.value;
  return std::nullopt;
}

Claim& Claim::num(const std::string& name, double value, const std::string& unit) {
  numbers.push_back({name, value, unit});
  return *this;
}

Claim& Claim::word(const std::string& name, const std::string& t) {
  words.emplace_back(name, t);
  return *this;
}

double Claim::number(const std::string& name) const {
  if (const auto v = number_opt(name)) return *v;
  throw std::logic_error("claim '" + kind + "' has no number '" + name + "'");
}

std::optional<double> Claim::number_opt(const std::string& name) const {
  for (const auto& n : numbers)
    if (n.name == name) return n.value;
  return std::nullopt;
}

std::string Claim::text_of(const std::string& name) const {
  for (const auto& [k, v] : words)
    if (k == name) return v;
  return "";
}

bool Claim::has_word(const std::string& name) const {
  return std::any_of(words.begin(), words.end(), [&](const auto& w) { return w.first == name; });
}

std::string count_words(long long n, const std::string& unit) {
  return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s");
}

std::string signed_percent(double fraction) {
  const double v = 100 * fraction;
  return fmt::format("{:+.1f}%", std::fabs(v) < 0.05 ? 0.0 : v);
}

std::string and_list(const std::vector<std::string>& items) {
  if (items.empty()) return "";
  if (items.size() == 1) return items.front();
  return fmt::format("{} and {}", fmt::join(items.begin(), items.end() - 1, ", "), items.back());
}

namespace {

std::string pct(double f) { return fmt::format("{:.1f}%", 100.0 * f); }

// ---------------------------------------------------------------- the headline

std::string render_scope(const Claim& c) {
  return fmt::format("Scope: {} on {}; {}{}.", c.text_of("launches"), c.text_of("where"), c.text_of("software"),
                     c.text_of("dates"));
}

std::string render_tally(const Claim& c) {
  // One "(...)" per verdict with items: each FAIL and VOID by its target, value, threshold and
  // warnings (a VOID's first warning is the one that voids it).
  const auto named = [&](const std::string& verdict) {
    std::vector<std::string> v;
    for (const auto& it : c.items) {
      if (it.verdict != verdict) continue;
      std::string x = it.name;
      if (verdict == "VOID" && !it.warnings.empty()) {
        x += "; voided by " + it.warnings.front();
        if (it.warnings.size() > 1)
          x += fmt::format(", also {}", fmt::join(it.warnings.begin() + 1, it.warnings.end(), ", "));
      } else if (!it.warnings.empty()) {
        x += fmt::format("; {}", fmt::join(it.warnings, ", "));
      }
      v.push_back(x);
    }
    return v.empty() ? std::string() : " (" + fmt::format("{}", fmt::join(v, "; ")) + ")";
  };
  std::string out =
      fmt::format("{}: {} PASS, {} FAIL{}, {} VOID{}, {} not evaluated", c.text_of("lead"),
                  static_cast<long long>(c.number("pass")), static_cast<long long>(c.number("fail")), named("FAIL"),
                  static_cast<long long>(c.number("void")), named("VOID"), static_cast<long long>(c.number("not_evaluated")));
  if (const std::string why = c.text_of("not_evaluated_reasons"); !why.empty()) out += " (" + why + ")";
  return out + (c.text_of("end") == "none" ? "" : ".");
}

std::string render_model(const Claim& c) {
  const std::string u = c.text_of("unit");
  std::vector<std::string> parts;
  if (const auto best = c.number_opt("best_per_gpu_ex_s")) {
    const std::string w = c.text_of("best_warnings");
    parts.push_back(fmt::format("best {:.1f} ex/s per {} ({}, {}, {}{})", *best, u, c.text_of("best_setup"),
                                count_words(static_cast<long long>(c.number("best_gpus")), u), c.text_of("best_file"),
                                w.empty() ? "" : "; " + w));
  }
  if (const auto e = c.number_opt("efficiency")) {
    const long long n = static_cast<long long>(c.number("efficiency_gpus"));
    std::string s = c.text_of("efficiency_void").empty()
                        ? fmt::format("efficiency {} at {} ({})", pct(*e), count_words(n, u), c.text_of("efficiency_file"))
                        : fmt::format("efficiency VOID at {} ({}, {}; {})", count_words(n, u), pct(*e),
                                      c.text_of("efficiency_void"), c.text_of("efficiency_file"));
    if (const auto t = c.number_opt("trusted_efficiency"))
      s += fmt::format(", {} at {}", pct(*t), count_words(static_cast<long long>(c.number("trusted_gpus")), u));
    parts.push_back(s);
    const auto x = c.number_opt("exposed_comm");
    parts.push_back(x ? fmt::format("exposed comm {} there", pct(*x)) : "exposed comm not measured");
  } else if (const auto se = c.number_opt("strong_efficiency")) {
    parts.push_back(fmt::format("strong-scaling efficiency {} at {} ({}); weak scaling not measured", pct(*se),
                                count_words(static_cast<long long>(c.number("strong_gpus")), u), c.text_of("strong_file")));
  } else {
    parts.push_back(fmt::format("scaling not measured (1 {} only)", u));
  }
  if (const auto usd = c.number_opt("usd_per_million"))
    parts.push_back(fmt::format("cheapest {:.4f} USD per 1M samples ({}, {})", *usd,
                                count_words(static_cast<long long>(c.number("usd_gpus")), u), c.text_of("usd_file")));
  return fmt::format("{}: {}.", c.subject, fmt::join(parts, "; "));
}

std::string render_data_quality(const Claim& c) {
  std::vector<std::string> q;
  const long long rows = static_cast<long long>(c.number("rows")), noisy = static_cast<long long>(c.number("noisy"));
  q.push_back(noisy ? fmt::format("{} of {} rows noisy (worst {})", noisy, rows, c.text_of("worst_noisy"))
                    : fmt::format("no noisy row among {}", count_words(rows, "row")));
  if (const auto bn = c.number_opt("baseline_noisy"); bn && *bn > 0)
    q.push_back(fmt::format("{} of {} no-DDP baselines noisy (worst {})", static_cast<long long>(*bn),
                            static_cast<long long>(c.number("baseline_rows")), c.text_of("baseline_noisy_rows")));
  if (const long long few = static_cast<long long>(c.number("few_samples")))
    q.push_back(fmt::format("{} with fewer than 20 iterations ({})", few, c.text_of("few_rows")));
  if (const long long capped = static_cast<long long>(c.number("capped")))
    q.push_back(fmt::format("{} stopped before its CI target ({})", capped, c.text_of("capped_rows")));
  if (const long long voided = static_cast<long long>(c.number("voided")))
    q.push_back(fmt::format("{} voided by a warning ({})", voided, c.text_of("voided_rows")));
  if (static_cast<long long>(c.number("shared")))
    q.push_back(fmt::format("ranks sharing a GPU, not scaling: {}", c.text_of("shared_rows")));
  if (const auto spread = c.number_opt("max_spread"))
    q.push_back(fmt::format("launches of one setup spread up to {} ({})", pct(*spread), c.text_of("spread_what")));
  if (const std::string r = c.text_of("repeats"); !r.empty()) q.push_back(r);
  return fmt::format("Data quality: {}.", fmt::join(q, "; "));
}

std::string render_not_measured(const Claim& c) {
  return fmt::format("Not measured: {} ({}): {}", c.text_of("section"), c.text_of("why"), c.text_of("command"));
}

// ---------------------------------------------------------------- targets

std::string render_target(const Claim& c) {
  std::string line = fmt::format("{:<6} {} {} (required {}) on {}: {} [{}]", c.verdict, c.text_of("metric"),
                                 c.text_of("measured").empty() ? "n/a" : c.text_of("measured"), c.text_of("required"),
                                 c.text_of("size"), c.subject, c.text_of("from"));
  if (!c.text_of("void_warning").empty()) line += " voided by " + c.text_of("void_warning");
  else if (!c.warnings.empty()) line += fmt::format(" (row warnings: {})", fmt::join(c.warnings, ", "));
  return line;
}

// ---------------------------------------------------------------- recommendations

std::string render_world_size(const Claim& c) {
  const std::string u = c.text_of("units");
  if (c.verdict == "holds")
    return fmt::format(
        "{}: scaling holds to {} {}, the largest size measured: weak-scaling efficiency is {} there, meeting the {} "
        "target.",
        c.subject, static_cast<long long>(c.number("devices")), u, pct(c.number("efficiency")),
        pct(c.number("target")));
  if (c.verdict == "at_most")
    return fmt::format("{}: run jobs on at most {} {}: efficiency is {} at {} but {} at {}, below the {} target.",
                       c.subject, static_cast<long long>(c.number("ok_devices")), u, pct(c.number("ok_efficiency")),
                       static_cast<long long>(c.number("ok_devices")), pct(c.number("efficiency")),
                       static_cast<long long>(c.number("devices")), pct(c.number("target")));
  return fmt::format("{}: no size above 1 {} meets the {} efficiency target ({} at {} {}); {}.", c.subject,
                     c.text_of("unit"), pct(c.number("target")), pct(c.number("efficiency")),
                     static_cast<long long>(c.number("devices")), u,
                     c.number_opt("exposed_comm")
                         ? fmt::format("exposed communication is {} of that step (where the time goes)",
                                       pct(*c.number_opt("exposed_comm")))
                         : "measure where the time goes (run --breakdown) before scaling out");
}

// The launch-to-launch floor of a comparison in words: "the 19.5% launch-to-launch spread of
// F3, F4, F5" (measured), or "" (unmeasured).
std::string floor_words(const Claim& c) {
  const auto f = c.number_opt("noise_floor");
  if (!f) return "";
  const std::string from = c.text_of("floor_from");
  return fmt::format("the {} launch-to-launch spread{}", pct(*f), from.empty() ? "" : " of " + from);
}

// "the launch-to-launch noise of X and Y is unmeasured (one launch each): 3 launches of each would measure it".
std::string unmeasured_words(const std::vector<std::string>& names) {
  return fmt::format("the launch-to-launch noise of {} is unmeasured (one launch {}): {} launches of each would "
                     "measure it",
                     and_list(names), names.size() == 1 ? "only" : "each", kLaunchesForNoise);
}

std::string render_ddp_setting(const Claim& c) {
  const std::string tech = c.text_of("technique");
  const double gain = c.number("gain");
  if (c.verdict == "set")
    return fmt::format(
        "{}: set {}: {:.1f} against {:.1f} aggregate ex/s with DDP's defaults ({:+.1f}%, beyond {}).", c.subject, tech,
        c.number("best_ex_s"), c.number("base_ex_s"), 100 * gain, floor_words(c));
  if (c.verdict == "below_gain")
    return fmt::format("{}: keep DDP's defaults: no setting measured was more than {} faster (best: {}, {:+.1f}%).",
                       c.subject, pct(c.number("min_gain")), tech, 100 * gain);
  if (c.verdict == "within_noise")
    return fmt::format("{}: keep DDP's defaults: the best setting measured, {} ({:+.1f}%), is within {}.", c.subject,
                       tech, 100 * gain,
                       c.text_of("basis") == "ci" ? "the rows' own 95% confidence intervals" : floor_words(c));
  // unmeasured
  std::vector<std::string> names;
  for (const auto& it : c.items)
    if (it.verdict == "unmeasured") names.push_back(it.name);
  return fmt::format(
      "{}: {} measured {:+.1f}% ({:.1f} against {:.1f} aggregate ex/s with DDP's defaults), more than the rows' own "
      "95% confidence intervals; before changing the setting, {}.",
      c.subject, tech, 100 * gain, c.number("best_ex_s"), c.number("base_ex_s"), unmeasured_words(names));
}

std::string render_setup(const Claim& c) {
  const auto bytes = [](double b) {
    if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
    return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  };
  const ClaimItem* fastest = nullptr;
  std::vector<std::string> within, beyond, unmeasured_items, unmeasured_names;
  for (const auto& it : c.items) {
    const double x = it.number("aggregate_ex_s").value_or(0);
    const std::string cell =
        fmt::format("{} at {:.1f} ex/s (the fastest {:+.1f}%)", it.name, x, 100 * it.number("gap").value_or(0));
    if (it.verdict == "fastest") fastest = &it;
    else if (it.verdict == "within noise") within.push_back(cell);
    else if (it.verdict == "beyond noise") beyond.push_back(cell);
    else unmeasured_items.push_back(cell);
    if (it.number("launches").value_or(1) < 2) unmeasured_names.push_back(it.name);
  }
  if (!fastest) throw std::logic_error("setup claim without its fastest setup");
  std::string out = fmt::format("{}: the fastest setup measured is {} at {:.1f} aggregate ex/s", c.subject,
                                fastest->name, fastest->number("aggregate_ex_s").value_or(0));
  if (!within.empty())
    out += fmt::format("; within noise of it ({}): {}",
                       c.text_of("within_basis") == "ci" ? "the rows' own 95% confidence intervals overlap"
                                                         : floor_words(c),
                       and_list(within));
  if (!beyond.empty()) out += fmt::format("; beyond {}: {}", floor_words(c), and_list(beyond));
  if (!unmeasured_items.empty())
    out += fmt::format("; {} differ{} from it by more than the rows' own 95% confidence intervals, but {}",
                       and_list(unmeasured_items), unmeasured_items.size() == 1 ? "s" : "",
                       unmeasured_words(unmeasured_names));
  // Memory, from the strategy table's peak column, where every setup measured one.
  const bool memory = std::all_of(c.items.begin(), c.items.end(),
                                  [](const ClaimItem& it) { return it.number("peak_memory_bytes").has_value(); });
  if (memory) {
    std::vector<std::string> m;
    for (const auto& it : c.items) m.push_back(fmt::format("{} {}", it.name, bytes(*it.number("peak_memory_bytes"))));
    out += fmt::format("; peak memory per {}: {}", c.text_of("unit"), and_list(m));
    if (c.text_of("choose_by_memory") == "yes") out += fmt::format(" (within noise: choose by memory)");
  } else {
    out += "; peak memory not measured for every setup";
  }
  return out + ".";
}

std::string render_memory(const Claim& c) {
  if (c.verdict == "none")
    return fmt::format("{}: no technique measured lowered the {} per rank.", c.subject, c.text_of("peak_kind"));
  return fmt::format("{}: to fit a larger batch or model, use {}: it cuts the {} per rank by {} ({} to {}) for {:+.1f}% "
                     "step time.",
                     c.subject, c.text_of("technique"), c.text_of("peak_kind"), pct(c.number("saved")),
                     c.text_of("baseline_peak"), c.text_of("peak"), 100 * c.number("time_paid"));
}

std::string render_cost(const Claim& c) {
  return fmt::format(
      "{}: the most cost-efficient setup and size measured is {} on {}{}: {:.4f} USD per 1M samples; {} epochs of {} "
      "samples take {} and cost {:.2f} USD at {:.2f} USD per {}-hour.",
      c.subject, c.text_of("setup"), c.text_of("size"),
      c.warnings.empty() ? "" : fmt::format(" (its row's warnings: {})", fmt::join(c.warnings, ", ")),
      c.number("usd_per_million"),
      static_cast<long long>(c.number("epochs")), c.text_of("dataset"), c.text_of("hours"), c.number("usd"),
      c.number("gpu_hour_usd"), c.text_of("unit"));
}

std::string render_straggler(const Claim& c) {
  return fmt::format("Inspect {} before opening the cluster to users: it scored {:.3g}, below the {:g} straggler "
                     "threshold ({}).",
                     c.text_of("rank"), c.number("score"), c.number("threshold"), c.subject);
}

std::string render_slow_node(const Claim& c) {
  return fmt::format("Inspect the node's links before opening the cluster to users: {}.", c.text_of("message"));
}

// ---------------------------------------------------------------- diff

std::string render_diff_row(const Claim& c) {
  std::string out = fmt::format("{}: {}", c.subject, c.verdict);
  if (const auto d = c.number_opt("diff")) {
    out += fmt::format(" ({} at p50", signed_percent(*d));
    if (const auto lo = c.number_opt("ci_lo"), hi = c.number_opt("ci_hi"); lo && hi)
      out += fmt::format(", 95% interval [{}, {}]", signed_percent(*lo), signed_percent(*hi));
    const std::string method = c.text_of("method");
    out += fmt::format("{}; {})", method.empty() ? "" : ", " + method, c.text_of("n"));
  }
  if (const std::string why = c.text_of("why"); !why.empty()) out += ": " + why;
  if (const std::string b = c.text_of("base_warnings"); !b.empty()) out += "; base warnings: " + b;
  if (const std::string t = c.text_of("test_warnings"); !t.empty()) out += "; test warnings: " + t;
  return out;
}

// ---------------------------------------------------------------- validate

std::string render_validate_check(const Claim& c) {
  return fmt::format("{:<13} {:<7} {}: {}", c.subject, c.verdict, c.text_of("what"), c.text_of("detail"));
}

}  // namespace

const std::vector<ClaimKind>& claim_kinds() {
  static const std::vector<ClaimKind> kKinds = {
      {"scope", "docs/METHODOLOGY.md Executive summary and recommendations: Headline, Scope", render_scope},
      {"tally", "docs/METHODOLOGY.md Executive summary and recommendations: Targets", render_tally},
      {"model", "docs/METHODOLOGY.md Executive summary and recommendations: Headline, one line per model",
       render_model},
      {"data_quality", "docs/METHODOLOGY.md Statistics: warnings; Executive summary: Headline, Data quality",
       render_data_quality},
      {"not_measured", "docs/METHODOLOGY.md Executive summary and recommendations: Headline, Not measured",
       render_not_measured},
      {"target", "docs/METHODOLOGY.md Executive summary and recommendations: Targets", render_target},
      {"world_size", "docs/METHODOLOGY.md Executive summary and recommendations: world size", render_world_size},
      {"ddp_setting", "docs/METHODOLOGY.md Executive summary and recommendations: DDP setting; Noise floors",
       render_ddp_setting},
      {"setup", "docs/METHODOLOGY.md Executive summary and recommendations: setup; Noise floors", render_setup},
      {"memory", "docs/METHODOLOGY.md Executive summary and recommendations: memory", render_memory},
      {"cost", "docs/METHODOLOGY.md Executive summary and recommendations: cost", render_cost},
      {"straggler", "docs/METHODOLOGY.md Stragglers", render_straggler},
      {"slow_node", "docs/METHODOLOGY.md Pair bandwidth", render_slow_node},
      {"diff_row", "docs/METHODOLOGY.md diff: noise and launches", render_diff_row},
      {"validate_check", "docs/METHODOLOGY.md Validation plans", render_validate_check},
      {"validate_tally", "docs/METHODOLOGY.md Validation plans: the verdict", render_tally},
  };
  return kKinds;
}

Claim finish_claim(Claim c) {
  for (const auto& k : claim_kinds())
    if (c.kind == k.kind) {
      c.rule = k.rule;
      c.text = k.render(c);
      return c;
    }
  throw std::logic_error("no claim kind '" + c.kind + "' in core/analysis/claim.cpp");
}

nlohmann::json claim_json(const Claim& c) {
  using nlohmann::json;
  const auto numbers = [](const std::vector<ClaimNumber>& ns) {
    json j = json::object();
    for (const auto& n : ns) j[n.name] = {{"value", std::isfinite(n.value) ? json(n.value) : json(nullptr)}, {"unit", n.unit}};
    return j;
  };
  const auto rows = [](const std::vector<ClaimRow>& rs) {
    json j = json::array();
    for (const auto& r : rs) j.push_back({{"file", r.file}, {"label", r.label}, {"row", r.row}, {"role", r.role}});
    return j;
  };
  json words = json::object();
  for (const auto& [k, v] : c.words) words[k] = v;
  json items = json::array();
  for (const auto& it : c.items)
    items.push_back({{"name", it.name},
                     {"verdict", it.verdict},
                     {"numbers", numbers(it.numbers)},
                     {"rows", rows(it.rows)},
                     {"warnings", it.warnings}});
  return {{"kind", c.kind},         {"subject", c.subject},   {"verdict", c.verdict},   {"text", c.text},
          {"rule", c.rule},         {"numbers", numbers(c.numbers)}, {"words", words}, {"rows", rows(c.rows)},
          {"items", items},         {"warnings", c.warnings}};
}

nlohmann::json claims_json(const std::vector<Claim>& cs) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : cs) j.push_back(claim_json(c));
  return j;
}

}  // namespace ddpbench
