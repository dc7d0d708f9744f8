#include "core/memory.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace ddpbench {

std::optional<double> proc_status_bytes(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream s(line.substr(key.size()));
    unsigned long long kb = 0;
    std::string unit;
    if (!(s >> kb)) return std::nullopt;
    if (s >> unit && unit != "kB") return std::nullopt;
    return static_cast<double>(kb) * 1024.0;
  }
  return std::nullopt;
}

std::optional<double> read_proc_status_bytes(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return proc_status_bytes(ss.str(), key);
}

nlohmann::json ModelStateBytes::to_json() const {
  return {{"parameters", parameters}, {"gradients", gradients}, {"optimizer", optimizer}, {"total", total()}};
}

namespace {
// Byte counts are whole numbers: written as integers ("253100032", not "253100032.0").
nlohmann::json num_or_null(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::abs(*v) < 9.0e15 && std::floor(*v) == *v) return static_cast<long long>(*v);
  return *v;
}
}  // namespace

nlohmann::json memory_json(const std::vector<RankMemory>& ranks, const std::optional<ModelStateBytes>& state,
                           const std::string& source) {
  nlohmann::json per_rank = nlohmann::json::array();
  std::optional<double> a, r, s;
  const auto fold = [](std::optional<double>& m, const std::optional<double>& v) {
    if (v) m = std::max(m.value_or(*v), *v);
  };
  for (const RankMemory& m : ranks) {
    per_rank.push_back({{"rank", m.rank},
                        {"peak_allocated_bytes", num_or_null(m.peak_allocated_bytes)},
                        {"peak_reserved_bytes", num_or_null(m.peak_reserved_bytes)},
                        {"peak_rss_bytes", num_or_null(m.peak_rss_bytes)}});
    fold(a, m.peak_allocated_bytes);
    fold(r, m.peak_reserved_bytes);
    fold(s, m.peak_rss_bytes);
  }
  return {{"per_rank", per_rank},
          {"max_over_ranks",
           {{"peak_allocated_bytes", num_or_null(a)},
            {"peak_reserved_bytes", num_or_null(r)},
            {"peak_rss_bytes", num_or_null(s)}}},
          {"model_state_bytes", state ? state->to_json() : nlohmann::json(nullptr)},
          {"source", source}};
}

std::optional<double> row_peak_memory_bytes(const nlohmann::json& memory) {
  if (!memory.is_object()) return std::nullopt;
  const auto m = memory.find("max_over_ranks");
  if (m == memory.end() || !m->is_object()) return std::nullopt;
  for (const char* k : {"peak_allocated_bytes", "peak_rss_bytes"}) {
    const auto v = m->find(k);
    if (v != m->end() && v->is_number()) return v->get<double>();
  }
  return std::nullopt;
}

}  // namespace ddpbench
