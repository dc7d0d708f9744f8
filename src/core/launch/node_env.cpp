#include "core/launch/node_env.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "core/launch/process.hpp"
#include "core/util/table.hpp"
#include "core/util/utf8.hpp"

namespace ddpbench {
namespace {

// Standard output of a program (no shell), at most 64 KiB; "" when it cannot be started,
// fails, or runs longer than 10 s (a hung nvidia-smi must not stall rank start-up).
std::string capture(const std::vector<std::string>& argv) {
  ProcessOptions po;
  po.max_capture = 64 * 1024;
  try {
    const CaptureResult r = run_capture(argv, po, /*timeout_s=*/10);
    return r.ok() ? sanitize_utf8(r.out) : "";
  } catch (const std::runtime_error&) {  // not installed, or cannot be started
    return "";
  }
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// A field's value as a comparable string: strings as they are, other JSON as its text.
std::string field_text(const nlohmann::json& node, const char* key) {
  const auto it = node.find(key);
  if (it == node.end() || it->is_null()) return "(unrecorded)";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string gpu_model(const nlohmann::json& node) {
  const auto it = node.find("gpus");
  if (it == node.end() || !it->is_array()) return "(unrecorded)";
  std::vector<std::string> names;
  for (const auto& g : *it) {
    std::string n = g.is_object() ? (g.contains("name") && g["name"].is_string() ? g["name"].get<std::string>()
                                                                                 : std::string("(unnamed)"))
                                  : g.dump();
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  if (names.empty()) return "none";
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " + ") + n;
  return out;
}

std::string gpu_count(const nlohmann::json& node) {
  const auto it = node.find("gpus");
  if (it == node.end() || !it->is_array()) return "(unrecorded)";
  return std::to_string(it->size());
}

std::string host_of(const nlohmann::json& node) {
  const auto it = node.find("host");
  return it != node.end() && it->is_string() ? it->get<std::string>() : "(unnamed host)";
}

std::size_t size_of(const nlohmann::json& j) { return j.dump().size(); }

}  // namespace

std::string driver_version() {
  if (find_program("nvidia-smi").empty()) return "none";
  std::string out = capture({"nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"});
  out = trim(out.substr(0, out.find('\n')));
  return out.empty() ? "unknown" : out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) break;
      const auto start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? "" : sanitize_utf8(line.substr(start));
    }
  }
  return "";
}

std::string gpu_topology() {
  if (find_program("nvidia-smi").empty()) return "";
  static const std::regex ansi("\x1b\\[[0-9;]*m");
  return std::regex_replace(capture({"nvidia-smi", "topo", "-m"}), ansi, "");
}

std::string kernel_release() {
  utsname u{};
  return ::uname(&u) == 0 ? sanitize_utf8(u.release) : "";
}

int online_cpu_count() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 0;
}

nlohmann::json parse_gpu_query(const std::string& csv) {
  nlohmann::json gpus = nlohmann::json::array();
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string cell;
    std::istringstream ls(line);
    while (std::getline(ls, cell, ',')) f.push_back(trim(cell));
    if (f.size() != 5) continue;
    long long index = -1, mib = 0;
    try {
      index = std::stoll(f[0]);
    } catch (const std::exception&) {
      continue;
    }
    try {
      mib = std::stoll(f[2]);
    } catch (const std::exception&) {
      mib = 0;  // "[N/A]"
    }
    gpus.push_back(
        {{"index", index}, {"name", f[1]}, {"memory_bytes", mib * 1024 * 1024}, {"uuid", f[3]}, {"bus_id", f[4]}});
  }
  return gpus;
}

nlohmann::json query_gpus() {
  if (find_program("nvidia-smi").empty()) return nlohmann::json::array();
  return parse_gpu_query(
      capture({"nvidia-smi", "--query-gpu=index,name,memory.total,uuid,pci.bus_id", "--format=csv,noheader,nounits"}));
}

nlohmann::json node_env_vars(const EnvMap& env) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& kv : env) {  // EnvMap is ordered: the first 64 by name
    if (out.size() >= 64) break;
    if (kv.first.rfind("NCCL_", 0) == 0 || kv.first.rfind("TORCH_NCCL_", 0) == 0 || kv.first == "GLOO_SOCKET_IFNAME")
      out[sanitize_utf8(kv.first)] = sanitize_utf8(kv.second, 512);
  }
  return out;
}

nlohmann::json probe_node_environment(const EnvMap& env) {
  const bool smi = !find_program("nvidia-smi").empty();
  nlohmann::json node = {{"host", host_name()},
                         {"driver", driver_version()},
                         {"gpus", smi ? query_gpus() : nlohmann::json::array()},
                         {"topology", smi ? gpu_topology() : std::string()},
                         {"cuda", "none"},
                         {"nccl", "none"},
                         {"cudnn", "none"},
                         {"torch", "none"},
                         {"cpu_model", cpu_model()},
                         {"cpus", online_cpu_count()},
                         {"kernel", kernel_release()},
                         {"env", node_env_vars(env)}};
  bound_node_environment(node);
  return node;
}

void bound_node_environment(nlohmann::json& node, std::size_t max_bytes) {
  if (max_bytes < 1024) throw std::invalid_argument("bound_node_environment: max_bytes must be >= 1024");
  if (!node.is_object() || size_of(node) <= max_bytes) return;
  nlohmann::json truncated =
      node.contains("truncated") && node["truncated"].is_array() ? node["truncated"] : nlohmann::json::array();
  auto mark = [&](const std::string& field) {
    if (std::find(truncated.begin(), truncated.end(), field) == truncated.end()) truncated.push_back(field);
    node["truncated"] = truncated;
  };
  // 1. Every string but the topology: 256 bytes.
  for (auto& [key, value] : node.items()) {
    if (key != "topology" && value.is_string() && value.get<std::string>().size() > 256) {
      value = sanitize_utf8(value.get<std::string>(), 256);
      mark(key);
    }
  }
  // 2. The topology text.
  // (A topology of a few bytes is left alone: cutting it would only add the note.)
  if (size_of(node) > max_bytes && node.contains("topology") && node["topology"].is_string() &&
      node["topology"].get<std::string>().size() > 128) {
    const std::string topo = node["topology"].get<std::string>();
    mark("topology");
    const std::size_t excess = size_of(node) - max_bytes;
    // The note costs up to ~64 bytes, and JSON escapes (newlines) take 2 bytes per character.
    std::size_t keep = topo.size() > excess + 64 ? topo.size() - excess - 64 : 0;
    while (true) {
      node["topology"] =
          sanitize_utf8(topo, keep) + fmt::format("\n[truncated by ddpbench: kept {} of {} bytes]", keep, topo.size());
      if (size_of(node) <= max_bytes || keep == 0) break;
      keep = keep > (size_of(node) - max_bytes) ? keep - (size_of(node) - max_bytes) : 0;
    }
  }
  // 3. Variables, then GPUs, from the end.
  for (const char* field : {"env", "gpus"}) {
    if (size_of(node) <= max_bytes || !node.contains(field)) continue;
    auto& v = node[field];
    if (v.is_object()) {
      mark(field);
      while (!v.empty() && size_of(node) > max_bytes) {
        auto last = v.end();
        --last;
        v.erase(last.key());
      }
    } else if (v.is_array()) {
      mark(field);
      while (!v.empty() && size_of(node) > max_bytes) v.erase(v.size() - 1);
    }
  }
}

nlohmann::json node_differences(const nlohmann::json& nodes) {
  nlohmann::json out = nlohmann::json::array();
  if (!nodes.is_array()) return out;
  std::vector<const nlohmann::json*> ok;
  for (const auto& n : nodes)
    if (n.is_object() && !n.contains("error")) ok.push_back(&n);
  if (ok.size() < 2) return out;

  auto compare = [&](const std::string& field, const std::function<std::string(const nlohmann::json&)>& value) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto* n : ok) values[value(*n)].push_back(host_of(*n));
    if (values.size() > 1) out.push_back({{"field", field}, {"values", values}});
  };
  compare("driver", [](const nlohmann::json& n) { return field_text(n, "driver"); });
  compare("gpu_model", gpu_model);
  compare("gpu_count", gpu_count);
  for (const char* f : {"topology", "cuda", "nccl", "cudnn", "torch", "kernel", "cpu_model", "cpus"})
    compare(f, [f](const nlohmann::json& n) { return field_text(n, f); });
  std::vector<std::string> vars;  // sorted: nlohmann::json objects keep their keys in order
  for (const auto* n : ok)
    if (n->contains("env") && (*n)["env"].is_object())
      for (const auto& kv : (*n)["env"].items())
        if (std::find(vars.begin(), vars.end(), kv.key()) == vars.end()) vars.push_back(kv.key());
  std::sort(vars.begin(), vars.end());
  for (const auto& var : vars)
    compare("env." + var, [&var](const nlohmann::json& n) {
      if (!n.contains("env") || !n["env"].is_object() || !n["env"].contains(var)) return std::string("(unset)");
      const auto& v = n["env"][var];
      return v.is_string() ? v.get<std::string>() : v.dump();
    });
  return out;
}

std::vector<std::string> node_difference_lines(const nlohmann::json& differences) {
  std::vector<std::string> lines;
  if (!differences.is_array()) return lines;
  for (const auto& d : differences) {
    if (!d.is_object() || !d.contains("values") || !d["values"].is_object()) continue;
    std::vector<std::pair<std::string, std::vector<std::string>>> values;
    for (const auto& kv : d["values"].items()) {
      std::vector<std::string> hosts;
      if (kv.value().is_array())
        for (const auto& h : kv.value()) hosts.push_back(h.is_string() ? h.get<std::string>() : h.dump());
      values.emplace_back(kv.key(), hosts);
    }
    std::stable_sort(values.begin(), values.end(),
                     [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    bool long_values = false;
    for (const auto& v : values)
      long_values = long_values || v.first.size() > 48 || v.first.find('\n') != std::string::npos;
    std::string line = fmt::format("nodes differ in {}: ", d.value("field", std::string("?")));
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto& [value, hosts] = values[i];
      std::string named;
      for (std::size_t h = 0; h < hosts.size() && h < 8; ++h) named += (h ? "," : "") + hosts[h];
      if (hosts.size() > 8) named += fmt::format(" and {} more", hosts.size() - 8);
      line += fmt::format("{}{} on {}", i ? "; " : "",
                          long_values ? fmt::format("variant {}", i + 1) : (value.empty() ? "(empty)" : value), named);
    }
    lines.push_back(line);
  }
  return lines;
}

std::string render_node_environment(const nlohmann::json& node) {
  std::string out;
  auto line = [&](const std::string& name, const std::string& value) {
    out += fmt::format("{:<10} {}\n", name + ":", value);
  };
  line("host", field_text(node, "host"));
  line("kernel", field_text(node, "kernel"));
  line("cpu", fmt::format("{} ({} CPUs online)", field_text(node, "cpu_model"), field_text(node, "cpus")));
  line("torch", field_text(node, "torch"));
  line("cuda", field_text(node, "cuda"));
  line("nccl", field_text(node, "nccl"));
  line("cudnn", field_text(node, "cudnn"));
  line("driver", field_text(node, "driver"));
  const nlohmann::json gpus = node.contains("gpus") && node["gpus"].is_array() ? node["gpus"] : nlohmann::json::array();
  if (gpus.empty()) {
    line("gpus", "none");
  } else {
    Table t;
    t.kind = "gpus";
    t.title = fmt::format("{} GPU(s)", gpus.size());
    t.columns = {{"index", "index", "", fmtcol::plain()},
                 {"name", "name", "", fmtcol::plain()},
                 {"memory_bytes", "memory", "bytes", fmtcol::bytes()},
                 {"uuid", "UUID", "", fmtcol::plain()},
                 {"bus_id", "bus id", "", fmtcol::plain()}};
    for (const auto& g : gpus) {
      auto num = [&](const char* k) -> Value {
        return g.is_object() && g.contains(k) && g[k].is_number_integer() ? Value(g[k].get<long long>()) : Value();
      };
      auto str = [&](const char* k) -> Value {
        return g.is_object() && g.contains(k) && g[k].is_string() ? Value(g[k].get<std::string>()) : Value();
      };
      t.rows.push_back({num("index"), str("name"), num("memory_bytes"), str("uuid"), str("bus_id")});
    }
    out += "\n" + render_tables({t}, TableFormat::text);
  }
  const std::string topo = field_text(node, "topology");
  if (!topo.empty() && topo != "(unrecorded)")
    out += "\n--- nvidia-smi topo -m ---\n" + topo + (topo.back() == '\n' ? "" : "\n");
  out += "\nNCCL variables:";
  if (!node.contains("env") || !node["env"].is_object() || node["env"].empty()) {
    out += " none set\n";
  } else {
    out += "\n";
    for (const auto& kv : node["env"].items())
      out += fmt::format("  {}={}\n", kv.key(),
                         kv.value().is_string() ? kv.value().get<std::string>() : kv.value().dump());
  }
  if (node.contains("truncated") && node["truncated"].is_array() && !node["truncated"].empty()) {
    std::string fields;
    for (const auto& f : node["truncated"])
      fields += (fields.empty() ? "" : ", ") + (f.is_string() ? f.get<std::string>() : f.dump());
    out += fmt::format("\n(cut to {} bytes: {})\n", kMaxNodeEnvBytes, fields);
  }
  return out;
}

}  // namespace ddpbench
