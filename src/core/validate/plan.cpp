#include "core/validate/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <set>
#include <string_view>
#include <utility>

#include "core/util/errors.hpp"

namespace ddpbench {

namespace {

PlanPlace place_of(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return {};
  return {m.line + 1, m.column + 1};
}

[[noreturn]] void fail(const std::string& path, const PlanPlace& at, const std::string& what) {
  throw UsageError(plan_where(path, at) + what);
}

std::string joined(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

// YAML maps may repeat a key (yaml-cpp keeps both): a plan may not.
void once(const std::string& path, std::set<std::string>& seen, const std::string& key, const YAML::Node& at,
          const std::string& where) {
  if (!seen.insert(key).second)
    fail(path, place_of(at), fmt::format("{}'{}' is given twice; give each key once", where, key));
}

const char* type_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "empty";
    default: return "a scalar";
  }
}

// A key of a map node must be a scalar.
std::string key_text(const std::string& path, const YAML::Node& key) {
  if (!key.IsScalar()) fail(path, place_of(key), "a key must be a plain word, not " + std::string(type_name(key)));
  return key.Scalar();
}

// A target: a number within [lo, hi] (lo excluded when lo_open).
double target_value(const std::string& path, const std::string& key, const YAML::Node& v, double lo, bool lo_open,
                    double hi, const std::string& range) {
  double x = 0;
  bool ok = v.IsScalar();
  if (ok) {
    const std::string& s = v.Scalar();
    size_t used = 0;
    try {
      x = std::stod(s, &used);
    } catch (const std::exception&) {
      ok = false;
    }
    ok = ok && used == s.size() && std::isfinite(x);
  }
  if (!ok)
    fail(path, place_of(v),
         fmt::format("targets: {} must be a number {}, not {}", key, range, v.IsScalar() ? "'" + v.Scalar() + "'" : type_name(v)));
  if (x < lo || (lo_open && x == lo) || x > hi)
    fail(path, place_of(v), fmt::format("targets: {} {} is out of range; use a number {}", key, v.Scalar(), range));
  return x;
}

void parse_model_targets(const std::string& path, const std::string& model, const YAML::Node& n,
                         PlanModelTargets& t) {
  if (!n.IsMap())
    fail(path, place_of(n),
         fmt::format("targets: models: {} must be a map of efficiency, exposed-comm, ex-s-per-gpu, not {}", model,
                     type_name(n)));
  std::set<std::string> seen;
  for (const auto& kv : n) {
    const std::string k = key_text(path, kv.first);
    once(path, seen, k, kv.first, "targets: models: " + model + ": ");
    const std::string what = "models: " + model + ": " + k;
    if (k == "efficiency") t.efficiency = target_value(path, what, kv.second, 0, true, 1, "in (0, 1]");
    else if (k == "exposed-comm") t.exposed_comm = target_value(path, what, kv.second, 0, false, 1, "in [0, 1]");
    else if (k == "ex-s-per-gpu") t.ex_s_per_gpu = target_value(path, what, kv.second, 0, true, 1e12, "above 0");
    else
      fail(path, place_of(kv.first),
           fmt::format("targets: models: {}: unknown key '{}'; use efficiency, exposed-comm or ex-s-per-gpu", model, k));
  }
}

PlanTargets parse_targets(const std::string& path, const YAML::Node& n) {
  PlanTargets t;
  if (n.IsNull()) return t;
  if (!n.IsMap()) fail(path, place_of(n), fmt::format("targets must be a map, not {}", type_name(n)));
  std::set<std::string> seen;
  for (const auto& kv : n) {
    const std::string k = key_text(path, kv.first);
    once(path, seen, k, kv.first, "targets: ");
    if (k == "efficiency") t.efficiency = target_value(path, k, kv.second, 0, true, 1, "in (0, 1]");
    else if (k == "exposed-comm") t.exposed_comm = target_value(path, k, kv.second, 0, false, 1, "in [0, 1]");
    else if (k == "ex-s-per-gpu") t.ex_s_per_gpu = target_value(path, k, kv.second, 0, true, 1e12, "above 0");
    else if (k == "busbw-gbs") t.busbw_gbs = target_value(path, k, kv.second, 0, true, 1e6, "above 0 (GB/s)");
    else if (k == "models") {
      if (!kv.second.IsMap())
        fail(path, place_of(kv.second),
             fmt::format("targets: models must be a map of model names, not {}", type_name(kv.second)));
      std::set<std::string> models;
      for (const auto& m : kv.second) {
        const std::string model = key_text(path, m.first);
        once(path, models, model, m.first, "targets: models: ");
        parse_model_targets(path, model, m.second, t.models[model]);
        t.model_places.emplace_back(model, place_of(m.first));
      }
    } else
      fail(path, place_of(kv.first),
           fmt::format("targets: unknown key '{}'; use efficiency, exposed-comm, ex-s-per-gpu, busbw-gbs or models", k));
  }
  return t;
}

// One option's value: a scalar, or a list of scalars.
PlanOption parse_option(const std::string& path, const std::string& kind, const YAML::Node& key,
                        const YAML::Node& value) {
  PlanOption o;
  o.key = key_text(path, key);
  o.place = place_of(key);
  if (o.key.rfind("--", 0) == 0) o.key = o.key.substr(2);  // "--model" reads as "model"
  const auto& reserved = plan_reserved_options();
  if (auto it = reserved.find(o.key); it != reserved.end())
    fail(path, o.place, fmt::format("{}: '{}' cannot be set in a plan: {}", kind, o.key, it->second));
  // Each value is one argument of the step's command line, exactly as its parser will see it.
  const auto take = [&](const YAML::Node& v) {
    const std::string& t = v.Scalar();
    if (t.size() > kMaxPlanValueBytes)
      fail(path, place_of(v), fmt::format("{}: {}: the value is {} bytes, more than the {} an option's value may have; "
                                          "shorten it",
                                          kind, o.key, t.size(), kMaxPlanValueBytes));
    if (t.size() > 1 && t[0] == '-' && !(std::isdigit(static_cast<unsigned char>(t[1])) || t[1] == '.'))
      fail(path, place_of(v), fmt::format("{}: {}: the value '{}' starts with '-' and would be read as an option; give "
                                          "options as keys of the step",
                                          kind, o.key, t.substr(0, 64)));
    o.values.push_back(t);
  };
  if (value.IsScalar()) {
    take(value);
  } else if (value.IsSequence()) {
    o.list = true;
    for (const auto& e : value) {
      if (!e.IsScalar())
        fail(path, place_of(e), fmt::format("{}: {}: a list element must be a scalar, not {}", kind, o.key, type_name(e)));
      take(e);
    }
    if (o.values.empty()) fail(path, place_of(value), fmt::format("{}: {}: the list is empty; give at least one value", kind, o.key));
  } else {
    fail(path, place_of(value),
         fmt::format("{}: {} must be a value or a list of values, not {}", kind, o.key, type_name(value)));
  }
  return o;
}

PlanStep parse_step(const std::string& path, const YAML::Node& n, int index) {
  PlanStep s;
  s.index = index;
  s.place = place_of(n);
  YAML::Node options;
  if (n.IsScalar()) {
    s.kind = n.Scalar();
  } else if (n.IsMap() && n.size() == 1) {
    const auto kv = *n.begin();
    s.kind = key_text(path, kv.first);
    options = kv.second;
  } else {
    fail(path, s.place,
         fmt::format("step {} must be a step name or one 'name: {{options}}' entry, not {}", index,
                     n.IsMap() ? "a map of " + std::to_string(n.size()) + " keys" : type_name(n)));
  }
  const auto& kinds = plan_step_kinds();
  if (std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end())
    fail(path, s.place, fmt::format("unknown step '{}'; use one of: {}", s.kind, joined(kinds)));
  if (options && !options.IsNull()) {
    if (!options.IsMap())
      fail(path, place_of(options),
           fmt::format("{}: its options must be a map (model: resnet50), not {}", s.kind, type_name(options)));
    std::set<std::string> seen, seen_cpu;  // a cpu: key may repeat a step key: it replaces it on CPU nodes
    const auto add = [&](std::vector<PlanOption>& to, const YAML::Node& key, const YAML::Node& value) {
      PlanOption o = parse_option(path, s.kind, key, value);
      if (!(&to == &s.cpu_options ? seen_cpu : seen).insert(o.key).second)
        fail(path, o.place, fmt::format("{}: '{}' is given twice; give each option once", s.kind, o.key));
      to.push_back(std::move(o));
    };
    for (const auto& kv : options) {
      if (kv.first.IsScalar() && kv.first.Scalar() == "cpu") {
        if (!kv.second.IsMap())
          fail(path, place_of(kv.second),
               fmt::format("{}: cpu must be a map of the options for CPU nodes (memory-limit: 4G), not {}", s.kind,
                           type_name(kv.second)));
        for (const auto& c : kv.second) add(s.cpu_options, c.first, c.second);
        continue;
      }
      add(s.options, kv.first, kv.second);
    }
  }
  if (s.kind == "env" && (!s.options.empty() || !s.cpu_options.empty())) {
    const PlanOption& o = s.options.empty() ? s.cpu_options.front() : s.options.front();
    fail(path, o.place, fmt::format("env: unknown option '{}'; env takes no options (write 'env' alone)", o.key));
  }
  if (s.kind == "burn-in" &&
      std::none_of(s.options.begin(), s.options.end(), [](const PlanOption& o) { return o.key == "duration"; }))
    fail(path, s.place, "burn-in: no duration; add 'duration: 30m' (run --duration)");
  return s;
}

}  // namespace

std::string plan_where(const std::string& path, const PlanPlace& place) {
  if (place.line <= 0) return path + ": ";
  return fmt::format("{}:{}:{}: ", path, place.line, place.column);
}

const std::vector<std::string>& plan_step_kinds() {
  static const std::vector<std::string> kinds = {"env", "comm", "pairs", "find-max-bs", "run", "burn-in"};
  return kinds;
}

const std::map<std::string, std::string>& plan_reserved_options() {
  static const std::map<std::string, std::string> reserved = {
      {"json", "validate writes each step's result to DIR/<nn>-<step>.json; remove it"},
      {"resume", "validate resumes a stopped run step itself; remove it"},
      {"overwrite", "validate replaces a step's result when it redoes the step; remove it"},
      {"nproc-per-node", "it is the launch's: put it under 'launch:' or give validate --nproc-per-node"},
      {"pairs", "write a 'pairs' step instead of comm with pairs"},
      {"help", "remove it"},
      {"version", "remove it"},
  };
  return reserved;
}

std::string PlanStep::name() const { return fmt::format("{:02d}-{}", index, kind); }

std::string PlanStep::subcommand() const {
  if (kind == "pairs") return "comm";
  if (kind == "burn-in") return "run";
  return kind;
}

std::vector<std::string> PlanStep::implied_args() const {
  if (kind == "pairs") return {"--pairs"};
  // A burn-in holds the whole job for its duration, not each size of a sweep in turn.
  if (kind == "burn-in" &&
      std::none_of(options.begin(), options.end(), [](const PlanOption& o) { return o.key == "world-sizes"; }))
    return {"--world-sizes", "world"};
  return {};
}

std::string PlanStep::fingerprint() const {
  std::string s = kind;
  const auto add = [&s](const std::vector<PlanOption>& opts, const char* prefix) {
    for (const auto& o : opts) {
      s += std::string(" ") + prefix + "--" + o.key + (o.list ? "=[" : "=");
      for (size_t i = 0; i < o.values.size(); ++i) s += (i ? "," : "") + o.values[i];
      if (o.list) s += "]";
    }
  };
  add(options, "");
  add(cpu_options, "cpu:");
  return s;
}

namespace {
// The line where a second YAML document starts in `text` (0: one document) and how many there
// are: a document marker ('---', or content after '...', at the start of a line; YAML 1.2
// section 9.1, which forbids them inside a scalar there) after the first document's content.
// Read from the text: yaml-cpp 0.7's LoadAll loops for ever on some malformed input (the fuzz
// target found one), and Load reads the first document only.
std::pair<int, int> extra_documents(const std::string& text) {
  bool content = false, ended = false;  // content seen; a '...' ended the document since
  int docs = 1, first_extra_line = 0;
  int line_no = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view line(text.data() + at, eol - at);
    ++line_no;
    at = eol + 1;
    const auto marker = [&](std::string_view m) {
      return line.substr(0, 3) == m && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
    };
    const auto another = [&] {
      ++docs;
      if (!first_extra_line) first_extra_line = line_no;
    };
    std::string_view rest = line;
    if (marker("---")) {
      if (content) another();  // a document starts after content
      ended = false;
      rest = line.substr(3);
    } else if (marker("...")) {
      ended = true;
      rest = line.substr(3);
    }
    const std::size_t first = rest.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || rest[first] == '#' || (rest.data() == line.data() && line[0] == '%'))
      continue;  // blank, a comment, a directive
    if (ended) {  // content after '...' without '---' is another document too
      another();
      ended = false;
    }
    content = true;
  }
  return {first_extra_line, docs};
}

}  // namespace

Plan parse_plan(const std::string& text, const std::string& path) {
  if (static_cast<long long>(text.size()) > kMaxPlanBytes)
    fail(path, {}, fmt::format("the plan is {} bytes, more than the {} KiB a plan may have; give a plan of its steps "
                               "and targets (plans/quick.yaml is an example)",
                               text.size(), kMaxPlanBytes >> 10));
  if (const auto [line, docs] = extra_documents(text); docs > 1)
    fail(path, {line, 1}, fmt::format("the file holds {} YAML documents; a plan is one: remove the '---' and merge "
                                      "what follows into the first",
                                      docs));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    const PlanPlace at = e.mark.line >= 0 ? PlanPlace{e.mark.line + 1, e.mark.column + 1} : PlanPlace{};
    fail(path, at, fmt::format("not a YAML plan: {}; fix the YAML (plans/quick.yaml is an example)", e.msg));
  }
  const char* example = "plans/quick.yaml is an example";
  if (!root || root.IsNull())
    fail(path, {}, fmt::format("the plan is empty; give it a 'steps:' list ({})", example));
  if (!root.IsMap())
    fail(path, place_of(root), fmt::format("a plan is a map with 'steps:', not {} ({})", type_name(root), example));
  Plan p;
  p.path = path;
  bool have_steps = false;
  std::set<std::string> seen;
  for (const auto& kv : root) {
    const std::string k = key_text(path, kv.first);
    once(path, seen, k, kv.first, "");
    const YAML::Node& v = kv.second;
    if (k == "ddpbench_plan") {
      if (!v.IsScalar() || v.Scalar() != "1")
        fail(path, place_of(v), "ddpbench_plan must be 1 (the plan format this ddpbench reads)");
    } else if (k == "description") {
      if (!v.IsScalar()) fail(path, place_of(v), "description must be text");
      p.description = v.Scalar();
    } else if (k == "launch") {
      if (!v.IsMap()) fail(path, place_of(v), fmt::format("launch must be a map (nproc-per-node: 8), not {}", type_name(v)));
      std::set<std::string> launch_keys;
      for (const auto& l : v) {
        const std::string lk = key_text(path, l.first);
        once(path, launch_keys, lk, l.first, "launch: ");
        if (lk != "nproc-per-node")
          fail(path, place_of(l.first), fmt::format("launch: unknown key '{}'; use nproc-per-node", lk));
        const std::string s = l.second.IsScalar() ? l.second.Scalar() : "";
        int n = 0;
        try {
          size_t used = 0;
          n = std::stoi(s, &used);
          if (used != s.size()) n = 0;
        } catch (const std::exception&) {
          n = 0;
        }
        if (n < 1 || n > 4096)
          fail(path, place_of(l.second),
               fmt::format("launch: nproc-per-node '{}' is not a rank count; use a whole number 1..4096", s));
        p.nproc_per_node = n;
      }
    } else if (k == "steps") {
      have_steps = true;
      if (v.IsNull() || (v.IsSequence() && v.size() == 0))
        fail(path, place_of(kv.first), fmt::format("steps: the list is empty; add at least one step ({})", example));
      if (!v.IsSequence())
        fail(path, place_of(v), fmt::format("steps must be a list ('- run: {{model: resnet50}}'), not {}", type_name(v)));
      int i = 0;
      for (const auto& s : v) p.steps.push_back(parse_step(path, s, ++i));
      if (p.steps.size() > 99) fail(path, place_of(kv.first), "steps: more than 99 steps; split the plan");
    } else if (k == "targets") {
      p.targets = parse_targets(path, v);
    } else {
      fail(path, place_of(kv.first),
           fmt::format("unknown key '{}'; a plan has ddpbench_plan, description, launch, steps and targets", k));
    }
  }
  if (!have_steps) fail(path, {}, fmt::format("the plan has no 'steps:' list; add one ({})", example));
  return p;
}

void check_plan_model_name(const Plan& plan, const PlanPlace& place, const std::string& what, const std::string& m,
                           const std::vector<std::string>& models) {
  if (std::find(models.begin(), models.end(), m) == models.end())
    throw UsageError(fmt::format("{}{}: unknown model '{}'; choose one of: {} (see 'ddpbench models')",
                                 plan_where(plan.path, place), what, m, fmt::join(models, ", ")));
}

}  // namespace ddpbench
