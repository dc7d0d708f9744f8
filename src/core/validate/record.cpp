#include "core/validate/record.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <cstdint>
#include <map>
#include <set>

#include "core/analysis/diff.hpp"
#include "core/analysis/pairs.hpp"
#include "core/analysis/report_analysis.hpp"
#include "core/launch/node_env.hpp"
#include "core/result/row_validation.hpp"
#include "core/util/json_reader.hpp"
#include "core/util/errors.hpp"
#include "core/util/table.hpp"

namespace ddpbench {

const StepRecord* ValidateRecord::find(const std::string& name) const {
  for (const auto& s : steps)
    if (s.name == name) return &s;
  return nullptr;
}

namespace {

nlohmann::json step_json(const StepRecord& s) {
  return {{"name", s.name},
                     {"kind", s.kind},
                     {"fingerprint", s.fingerprint},
                     {"argv", s.argv},
                     {"launch", s.launch},
                     {"status", s.status},
                     {"exit_code", s.exit_code},
                     {"seconds", s.seconds},
                     {"started_utc", s.started_utc},
                     {"finished_utc", s.finished_utc},
          {"file", s.file},
          {"file_hash", s.file_hash}};
}

StepRecord step_from_json(const nlohmann::json& s) {
  StepRecord x;
  x.name = s.at("name").get<std::string>();
  x.kind = s.at("kind").get<std::string>();
  x.fingerprint = s.at("fingerprint").get<std::string>();
  x.argv = s.at("argv").get<std::vector<std::string>>();
  x.launch = s.at("launch");
  x.status = s.at("status").get<std::string>();
  x.exit_code = s.at("exit_code").get<int>();
  x.seconds = s.at("seconds").get<double>();
  x.started_utc = s.at("started_utc").get<std::string>();
  x.finished_utc = s.at("finished_utc").get<std::string>();
  x.file = s.at("file").get<std::string>();
  x.file_hash = s.at("file_hash").get<std::string>();
  return x;
}

}  // namespace

nlohmann::json record_json(const ValidateRecord& r) {
  nlohmann::json steps = nlohmann::json::array(), history = nlohmann::json::array();
  for (const auto& s : r.steps) steps.push_back(step_json(s));
  for (const auto& s : r.history) history.push_back(step_json(s));
  return {{"ddpbench_validate", 1},
          {"plan", {{"path", r.plan_path}, {"text", r.plan_text}}},
          {"steps", steps},
          {"history", history}};
}

ValidateRecord record_from_json(const nlohmann::json& j, const std::string& source) {
  try {
    if (!j.is_object() || j.value("ddpbench_validate", 0) != 1)
      throw UsageError(source + " is not a validate record (no \"ddpbench_validate\": 1); give the folder "
                                "ddpbench validate --out wrote");
    ValidateRecord r;
    r.plan_path = j.at("plan").at("path").get<std::string>();
    r.plan_text = j.at("plan").at("text").get<std::string>();
    for (const auto& s : j.at("steps")) r.steps.push_back(step_from_json(s));
    if (j.contains("history"))
      for (const auto& s : j.at("history")) r.history.push_back(step_from_json(s));
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("{} is not a validate record ({}); remove the folder or give another --out", source,
                                 e.what()));
  }
}

std::string content_hash(const std::string& bytes) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64 (Fowler, Noll, Vo)
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

std::vector<StepDecision> decide_steps(const Plan& plan, const std::optional<ValidateRecord>& old,
                                       const nlohmann::json& launch, const DirFacts& facts,
                                       const std::vector<std::string>& redo) {
  std::vector<StepDecision> out;
  for (const auto& step : plan.steps) {
    StepDecision d;
    const StepRecord* r = old ? old->find(step.name()) : nullptr;
    const std::string file = step.name() + ".json";
    if (!r) {
      out.push_back(d);
      continue;
    }
    d.action = StepAction::kRedo;
    if (std::find(redo.begin(), redo.end(), step.name()) != redo.end()) {
      d.note = "redone: --redo (the earlier record is kept in validate.json's history)";
    } else if (r->fingerprint != step.fingerprint()) {
      d.note = "redone: its plan entry changed";
    } else if (r->launch != launch) {
      d.note = fmt::format("redone: launched differently ({} before, {} now)", r->launch.dump(), launch.dump());
    } else if (r->status == "complete") {
      const auto hash = facts.hash_of(file);
      if (!hash) d.note = "redone: " + file + " is gone";
      else if (*hash != r->file_hash) d.note = "redone: " + file + " changed since it was written";
      else {
        d.action = StepAction::kKeep;
        d.note = "kept";
      }
    } else if ((step.kind == "run" || step.kind == "burn-in") && facts.exists(file + ".partial")) {
      d.action = StepAction::kResume;
      d.note = "continued from " + file + ".partial";
    } else {
      d.note = fmt::format("redone: it did not complete ({})", r->status == "running" ? "stopped while running"
                                                                                      : "exit " + std::to_string(r->exit_code));
    }
    out.push_back(d);
  }
  return out;
}

std::vector<ValidateCheck> env_checks(const std::string& step, const nlohmann::json& nodes) {
  std::vector<ValidateCheck> out;
  const nlohmann::json diffs = node_differences(nodes);
  // What must agree for one job: the software stack and NCCL's settings. Hosts' kernels, CPUs
  // and topologies may differ without a verdict (they are listed by `run` as warnings).
  static const std::set<std::string> judged = {"driver", "gpu_model", "cuda", "nccl", "cudnn", "torch"};
  nlohmann::json bad = nlohmann::json::array();
  for (const auto& d : diffs) {
    const std::string field = d.value("field", "");
    if (judged.count(field) || field.rfind("env.NCCL_", 0) == 0) bad.push_back(d);
  }
  const size_t n = nodes.is_array() ? nodes.size() : 0;
  if (n == 0) {
    out.push_back({step, "nodes agree", "not evaluated", "no node environment arrived"});
  } else if (n == 1) {
    out.push_back({step, "nodes agree", "not evaluated", "one node: nothing to compare it with (its environment is in the file)"});
  } else if (bad.empty()) {
    out.push_back({step, "nodes agree", "PASS",
                   fmt::format("{} nodes agree on driver, GPU model, CUDA, NCCL, cuDNN, torch and NCCL_* variables", n)});
  } else {
    for (const auto& line : node_difference_lines(bad)) out.push_back({step, "nodes agree", "FAIL", line});
  }
  return out;
}

std::vector<ValidateCheck> comm_checks(const std::string& step, const ResultFile& f, std::optional<double> floor_gbs) {
  std::vector<ValidateCheck> out;
  // Per collective (and world size), the row of its largest size.
  std::map<std::string, const CommResult*> largest;
  for (const auto& c : f.comm_results) {
    const std::string key = fmt::format("{} {} on {} ranks", c.collective, c.dtype, c.world_size);
    auto& slot = largest[key];
    if (!slot || c.bytes > slot->bytes) slot = &c;
  }
  for (const auto& [key, c] : largest) {
    const std::string what = fmt::format("{} busbw at {}", key, fmtcol::size()(Value(static_cast<double>(c->bytes))));
    if (c->wrong > 0) {
      out.push_back({step, what, "FAIL", fmt::format("{} elements were wrong", c->wrong)});
    } else if (!floor_gbs) {
      out.push_back({step, what, "not evaluated",
                     fmt::format("{:.2f} GB/s; no busbw-gbs target in the plan", c->busbw_gbps)});
    } else {
      out.push_back({step, what, c->busbw_gbps >= *floor_gbs ? "PASS" : "FAIL",
                     fmt::format("{:.2f} GB/s against >= {:.2f} GB/s", c->busbw_gbps, *floor_gbs)});
    }
  }
  if (largest.empty()) out.push_back({step, "busbw", "not evaluated", "the file holds no collective"});
  return out;
}

std::vector<ValidateCheck> pairs_checks(const std::string& step, const ResultFile& f) {
  std::vector<ValidateCheck> out;
  const nlohmann::json& p = f.comm_pairs;
  const size_t n = p.contains("participants") && p["participants"].is_array() ? p["participants"].size() : 0;
  if (n < kMinPairParticipants) {
    out.push_back({step, "no slow node or link", "not evaluated",
                   fmt::format("{} participant{}: at least {} are needed to tell a slow node from its peer", n,
                               n == 1 ? "" : "s", kMinPairParticipants)});
    return out;
  }
  bool named = false;
  for (const char* key : {"slow_nodes", "slow_links"})
    if (p.contains(key))
      for (const auto& s : p[key]) {
        named = true;
        out.push_back({step, "no slow node or link", "FAIL", s.value("message", s.dump())});
      }
  if (!named)
    out.push_back({step, "no slow node or link", "PASS", fmt::format("{} participants, every pair within the limit", n)});
  return out;
}


namespace {

std::string outliers(const ResultFile& f) {
  std::vector<std::string> names;
  for (const char* key : {"slow_nodes", "slow_links"})
    if (f.comm_pairs.contains(key))
      for (const auto& s : f.comm_pairs[key]) names.push_back(s.value("message", s.dump()));
  return names.empty() ? "none named" : fmt::format("{}", fmt::join(names, "; "));
}

std::string node_versions(const nlohmann::json& env) {
  std::set<std::string> out;
  if (env.contains("nodes"))
    for (const auto& n : env["nodes"]) {
      std::string line;
      for (const char* k : {"driver", "cuda", "nccl", "cudnn", "torch"})
        line += fmt::format("{} {}, ", k, n.contains(k) ? (n[k].is_string() ? n[k].get<std::string>() : n[k].dump()) : "-");
      out.insert(line.substr(0, line.size() - 2));
    }
  return out.empty() ? "no node" : fmt::format("{}", fmt::join(out, " | "));
}

}  // namespace

std::string compare_validations(const std::string& dir_a, const ValidateRecord& a, const std::string& dir_b,
                                const ValidateRecord& b,
                                const std::function<ResultFile(const std::string&, const std::string&)>& load,
                                const std::function<nlohmann::json(const std::string&, const std::string&)>& load_json) {
  std::string out = fmt::format("validate --compare: A = {} (plan {}), B = {} (plan {})\n", dir_a, a.plan_path, dir_b,
                                b.plan_path);
  size_t common = 0;
  for (const auto& sa : a.steps) {
    const StepRecord* sb = b.find(sa.name);
    if (!sb) {
      out += fmt::format("\n## {}: in A only\n", sa.name);
      continue;
    }
    if (sb->fingerprint != sa.fingerprint) {
      out += fmt::format("\n## {}: the plan entries differ, not compared\n  A: {}\n  B: {}\n", sa.name, sa.fingerprint,
                         sb->fingerprint);
      continue;
    }
    ++common;
    out += fmt::format("\n## {} ({})\n", sa.name, sa.fingerprint);
    if (sa.status != "complete" || sb->status != "complete") {
      out += fmt::format("  not compared: A {} (exit {}), B {} (exit {})\n", sa.status, sa.exit_code, sb->status,
                         sb->exit_code);
      continue;
    }
    try {
      if (sa.kind == "env") {
        out += fmt::format("  A: {}\n  B: {}\n", node_versions(load_json(dir_a, sa.file)),
                           node_versions(load_json(dir_b, sb->file)));
      } else if (sa.kind == "comm") {
        const ResultFile fa = load(dir_a, sa.file), fb = load(dir_b, sb->file);
        std::map<std::string, std::pair<double, double>> rows;
        std::map<std::string, long long> size;
        for (const auto* side : {&fa, &fb})
          for (const auto& c : side->comm_results) {
            const std::string k = fmt::format("{} {} on {} ranks", c.collective, c.dtype, c.world_size);
            if (c.bytes < size[k]) continue;
            if (c.bytes > size[k]) rows[k] = {0, 0};
            size[k] = c.bytes;
            (side == &fa ? rows[k].first : rows[k].second) = c.busbw_gbps;
          }
        for (const auto& [k, v] : rows)
          out += fmt::format("  {} busbw at {}: A {:.2f} GB/s, B {:.2f} GB/s ({:+.1f}%)\n", k,
                             fmtcol::size()(Value(static_cast<double>(size[k]))), v.first,
                             v.second, v.first > 0 ? (v.second / v.first - 1) * 100 : 0.0);
      } else if (sa.kind == "pairs") {
        out += fmt::format("  A: {}\n  B: {}\n", outliers(load(dir_a, sa.file)), outliers(load(dir_b, sb->file)));
      } else if (sa.kind == "find-max-bs") {
        const auto mb = [](const ResultFile& f) {
          return f.max_batch.contains("max_batch") ? f.max_batch["max_batch"].dump() : std::string("-");
        };
        out += fmt::format("  largest batch: A {}, B {}\n", mb(load(dir_a, sa.file)), mb(load(dir_b, sb->file)));
      } else {
        const DiffReport d = diff_results(load(dir_a, sa.file), load(dir_b, sb->file));
        out += render_diff_text(d);
      }
    } catch (const UsageError& e) {
      out += fmt::format("  not compared: {}\n", e.what());
    }
  }
  for (const auto& sb : b.steps)
    if (!a.find(sb.name)) out += fmt::format("\n## {}: in B only\n", sb.name);
  if (common == 0)
    throw UsageError(fmt::format("{} and {} share no step of one plan entry; compare two validations of the same plan",
                                 dir_a, dir_b));
  return out;
}


std::vector<std::string> redo_steps(const Plan& plan, const std::string& list) {
  std::vector<std::string> out, names;
  for (const auto& s : plan.steps) names.push_back(s.name());
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    bool found = false;
    for (const auto& s : plan.steps)
      if (item == s.name() || item == s.kind || item == std::to_string(s.index)) {
        found = true;
        if (std::find(out.begin(), out.end(), s.name()) == out.end()) out.push_back(s.name());
      }
    if (!found)
      throw UsageError(fmt::format("--redo '{}': '{}' is none of the plan's steps; give a step's name, number or kind "
                                   "({})",
                                   list, item, fmt::join(names, ", ")));
  }
  std::vector<std::string> ordered;  // plan order
  for (const auto& n : names)
    if (std::find(out.begin(), out.end(), n) != out.end()) ordered.push_back(n);
  return ordered;
}

std::string history_file(const std::vector<StepRecord>& history, const std::string& name) {
  const auto k = std::count_if(history.begin(), history.end(), [&](const StepRecord& r) { return r.name == name; });
  return fmt::format("{}.{}.json", name, k + 1);
}

std::vector<std::string> plan_preflight_notes(const Plan& plan, int nodes, int ranks, int devices, bool gpu) {
  std::vector<std::string> out;
  const std::string unit = gpu ? "GPU" : "rank";
  const auto has = [&](const std::string& kind) {
    return std::any_of(plan.steps.begin(), plan.steps.end(), [&](const PlanStep& s) { return s.kind == kind; });
  };
  if (has("env") && nodes < 2)
    out.push_back("the env step runs on one node: there is no other node to compare its environment with, so "
                  "'nodes agree' will be not evaluated");
  for (const auto& s : plan.steps) {
    if (s.kind != "pairs") continue;
    bool by_rank = false;
    for (const auto& o : s.options)
      if (o.key == "pair-unit" && !o.values.empty()) by_rank = o.values.front() == "rank";
    const int n = by_rank ? ranks : nodes;
    if (n < static_cast<int>(kMinPairParticipants))
      out.push_back(fmt::format("{} has {} participant{} ({}): at least {} are needed to tell a slow node from its "
                                "peer, so 'no slow node or link' will be not evaluated",
                                s.name(), n, n == 1 ? "" : "s", by_rank ? "ranks" : "nodes", kMinPairParticipants));
  }
  if ((plan.targets.efficiency || plan.targets.exposed_comm) && (has("run") || has("burn-in")) && devices < 2)
    out.push_back(fmt::format("this job has {}: the efficiency and exposed-comm targets need 2 or more, so they will "
                              "be not evaluated",
                              count_words(devices, unit)));
  if (has("comm") && !plan.targets.busbw_gbs)
    out.push_back("the plan has no busbw-gbs target: comm's busbw will be reported, not evaluated");
  return out;
}

SummaryCheck validate_summary_check(const ValidateCheck& c, const std::string& file) {
  SummaryCheck s;
  s.what = c.step + " " + c.what;
  s.metric = c.what;
  s.measured = c.detail;
  s.status = c.status;
  s.from = c.step;
  s.unit = "";
  Claim k;
  k.kind = "validate_check";
  k.subject = c.step;
  k.verdict = c.status;
  k.word("what", c.what).word("detail", c.detail);
  if (!file.empty()) k.rows.push_back({file, c.step, -1, "step"});
  s.claim = finish_claim(std::move(k));
  return s;
}

std::string compare_validation_folders(const std::string& dir_a, const std::string& dir_b) {
  const auto load_record = [](const std::string& d) {
    const std::string p = d + "/validate.json";
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
      throw UsageError(fmt::format("{} holds no validate.json; give folders written by ddpbench validate --out", d));
    return record_from_json(parse_json_bounded(read_text_file(p), p, "give folders written by ddpbench validate --out"), p);
  };
  const ValidateRecord a = load_record(dir_a), b = load_record(dir_b);
  try {
    return compare_validations(
        dir_a, a, dir_b, b, [](const std::string& d, const std::string& f) { return load_result(d + "/" + f); },
        [](const std::string& d, const std::string& f) {
          const std::string p = d + "/" + f;
          return parse_json_bounded(read_text_file(p), p, "give folders written by ddpbench validate --out");
        });
  } catch (const nlohmann::json::exception& e) {  // a step file of the right name but not validate's shape
    throw UsageError(fmt::format("{} or {} holds a step file that is not what validate wrote ({}); compare folders "
                                 "written by ddpbench validate --out, unedited",
                                 dir_a, dir_b, first_line(e.what())));
  }
}

}  // namespace ddpbench
