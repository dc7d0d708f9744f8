// `ddpbench report`'s appendix, what ran: the result files and their labels, the command and CPU
// of each launch, and each launch's nodes. Torch-free.
#include "core/render/report_tables_internal.hpp"

#include <fmt/ranges.h>

#include "core/launch/node_env.hpp"
#include "core/util/json_util.hpp"

namespace ddpbench::report_tables_internal {

// The result files and their labels: the appendix every row's "file" column points into.
Table files_tab(const std::vector<nlohmann::json>& files) {
  const auto str = [](const char* key) {
    return [key](const nlohmann::json& f) { return Value(json_str_or(f, key, "")); };
  };
  const auto num = [](const char* key) {
    return [key](const nlohmann::json& f) -> Value {
      const auto v = json_num_opt(f, key);
      return v ? Value(static_cast<long long>(*v)) : Value();
    };
  };
  const std::vector<Col<nlohmann::json>> cols = {
      {{"label", "file", "", fmtcol::plain()}, str("label")},
      {{"name", "path", "", fmtcol::plain()}, str("name")},
      {{"kind", "kind", "", fmtcol::plain()}, str("kind")},
      {{"device", "device", "", fmtcol::plain()}, str("device")},
      {{"created_utc", "created", "", fmtcol::plain()}, str("created_utc")},
      {{"torch", "torch", "", fmtcol::plain()}, str("torch")},
      {{"cuda", "CUDA", "", fmtcol::plain()}, str("cuda")},
      {{"nccl", "NCCL", "", fmtcol::plain()}, str("nccl")},
      {{"driver", "driver", "", fmtcol::plain()}, str("driver")},
      {{"backend", "backend", "", fmtcol::plain()}, str("backend")},
      {{"world_size", "ranks", "", fmtcol::plain()}, num("world_size")},
      {{"hosts", "hosts", "", fmtcol::plain()}, num("hosts")},
      {{"rows", "rows", "", fmtcol::plain()}, num("rows")},
  };
  Table t = make_table("files", "Result files", {}, cols, files);
  t.notes.push_back("file: the label every row's \"file\" column uses for the launch its numbers come from (Definitions)");
  for (const auto& f : files)
    if (f.contains("repeats") && f["repeats"].is_array())
      for (const auto& x : f["repeats"])
        t.notes.push_back(fmt::format("{} repeats {} ({}): counted once", json_str_or(f, "label", "?"),
                                      json_str_or(x, "of", "?"), json_str_or(x, "why", "?")));
  return t;
}

// The command line of each launch, one line per file.
Table commands_tab(const std::vector<nlohmann::json>& files) {
  const std::vector<Col<nlohmann::json>> cols = {
      {{"label", "file", "", fmtcol::plain()},
       [](const nlohmann::json& f) { return Value(json_str_or(f, "label", "")); }},
      {{"argv", "command", "", fmtcol::plain()},
       [](const nlohmann::json& f) {
         std::string cmd;
         if (f.contains("argv") && f["argv"].is_array())
           for (const auto& a : f["argv"])
             if (a.is_string()) cmd += (cmd.empty() ? "" : " ") + a.get<std::string>();
         return Value(cmd.empty() ? std::string("(not recorded)") : cmd);
       }},
      {{"cpu_model", "CPU", "", fmtcol::plain()},
       [](const nlohmann::json& f) { return Value(json_str_or(f, "cpu_model", "")); }},
  };
  Table t = make_table("commands", "What ran: the command and CPU of each launch", {}, cols, files);
  t.text_line = [](const std::vector<std::string>& c) { return fmt::format("{}: {} (CPU: {})", c[0], c[1], c[2]); };
  return t;
}

// Every node of each launch (environment.nodes, schema 1.6), one line per file: the first node's
// environment and the fields in which the nodes differ (node_differences), so thousands of
// alike nodes take one line and a node that differs is named.
Table nodes_tab(const std::vector<nlohmann::json>& files) {
  std::vector<const nlohmann::json*> with;
  for (const auto& f : files)
    if (f.contains("nodes") && f["nodes"].is_array() && !f["nodes"].empty()) with.push_back(&f);
  const auto text = [](const nlohmann::json& n, const char* k) {
    return n.contains(k) ? (n[k].is_string() ? n[k].get<std::string>() : n[k].dump()) : std::string("?");
  };
  const std::vector<Col<const nlohmann::json*>> cols = {
      {{"label", "file", "", fmtcol::plain()},
       [](const nlohmann::json* f) { return Value(json_str_or(*f, "label", "")); }},
      {{"hosts", "nodes", "", fmtcol::plain()},
       [](const nlohmann::json* f) { return Value(static_cast<long long>((*f)["nodes"].size())); }},
      {{"node", "first node", "", fmtcol::plain()},
       [text](const nlohmann::json* f) {
         const auto& n = (*f)["nodes"][0];
         size_t gpus = n.contains("gpus") && n["gpus"].is_array() ? n["gpus"].size() : 0;
         std::string gpu_names;
         if (gpus > 0 && n["gpus"][0].is_object()) gpu_names = " x " + json_str_or(n["gpus"][0], "name", "?");
         return Value(fmt::format("{}: {} ({} CPUs), {} GPU{}{}, driver {}, kernel {}, torch {}, CUDA {}, NCCL {}",
                                  text(n, "host"), text(n, "cpu_model"), text(n, "cpus"), gpus, gpus == 1 ? "" : "s",
                                  gpu_names, text(n, "driver"), text(n, "kernel"), text(n, "torch"), text(n, "cuda"),
                                  text(n, "nccl")));
       }},
      {{"differences", "the nodes differ in", "", fmtcol::plain()},
       [](const nlohmann::json* f) {
         const auto lines = node_difference_lines(node_differences((*f)["nodes"]));
         return Value(lines.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(lines, "; ")));
       }},
  };
  Table t = make_table("nodes", "The nodes of each launch", {}, cols, with);
  t.text_line = [](const std::vector<std::string>& c) {
    return fmt::format("{}: {} node{}; {}; the nodes differ in: {}", c[0], c[1], c[1] == "1" ? "" : "s", c[2], c[3]);
  };
  t.notes.push_back(
      "the first node's environment in full; the fields compared across nodes (driver, GPU model and count, "
      "topology, CUDA, NCCL, cuDNN, torch, kernel, CPU, environment variables) name the hosts that differ "
      "(`ddpbench env` prints one node in full)");
  return t;
}

}  // namespace ddpbench::report_tables_internal
