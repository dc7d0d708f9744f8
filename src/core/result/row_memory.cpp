#include "core/result/row_memory.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/result/result.hpp"
#include "core/result/row_sections.hpp"

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

namespace {
// The three peaks of `m`; one without a value is null with `nulls` (the row's maximum keeps
// its shape), else left out (a rank's entry, from schema 1.12).
void put_peaks(nlohmann::json& j, const RankMemory& m, bool nulls) {
  for (const auto& [key, v] :
       {std::pair{"peak_allocated_bytes", &m.peak_allocated_bytes},
        std::pair{"peak_reserved_bytes", &m.peak_reserved_bytes}, std::pair{"peak_rss_bytes", &m.peak_rss_bytes}})
    if (*v || nulls) j[key] = num_or_null(*v);
}

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

RankMemory read_peaks(const nlohmann::json& j) {
  RankMemory m;
  if (!j.is_object()) return m;
  if (const auto it = j.find("rank"); it != j.end() && it->is_number_integer()) m.rank = it->get<int>();
  m.peak_allocated_bytes = number_at(j, "peak_allocated_bytes");
  m.peak_reserved_bytes = number_at(j, "peak_reserved_bytes");
  m.peak_rss_bytes = number_at(j, "peak_rss_bytes");
  return m;
}
}  // namespace

void to_json(nlohmann::json& j, const RowMemory& m) {
  j = nlohmann::json::object();
  if (m.empty()) return;
  nlohmann::json per_rank = nlohmann::json::array();
  for (const RankMemory& r : m.per_rank) {
    nlohmann::json x = {{"rank", r.rank}};
    put_peaks(x, r, /*nulls=*/false);
    per_rank.push_back(std::move(x));
  }
  j["per_rank"] = std::move(per_rank);
  put_peaks(j["max_over_ranks"], m.max_over_ranks, /*nulls=*/true);
  j["model_state_bytes"] = m.model_state_bytes ? m.model_state_bytes->to_json() : nlohmann::json(nullptr);
  j["source"] = m.source;
  put_extra(j, m.extra);
}

void from_json(const nlohmann::json& j, RowMemory& m) {
  m = RowMemory{};
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const nlohmann::json& v = it.value();
    if (k == "per_rank" && v.is_array()) {
      for (const auto& r : v) m.per_rank.push_back(read_peaks(r));
    } else if (k == "max_over_ranks" && v.is_object()) {
      m.max_over_ranks = read_peaks(v);
    } else if (k == "model_state_bytes" && (v.is_object() || v.is_null())) {
      if (v.is_object()) {
        ModelStateBytes s;
        const auto get = [&](const char* key, int64_t& out) {
          const auto f = v.find(key);
          if (f != v.end() && f->is_number_integer()) out = f->get<int64_t>();
        };
        get("parameters", s.parameters);
        get("gradients", s.gradients);
        get("optimizer", s.optimizer);
        m.model_state_bytes = s;
      }
    } else if (k == "source" && v.is_string()) {
      m.source = v.get<std::string>();
    } else {
      m.extra[k] = v;
    }
  }
}

bool RowMemory::operator==(const RowMemory& o) const { return nlohmann::json(*this) == nlohmann::json(o); }

std::optional<double> RowMemory::peak_bytes() const {
  if (max_over_ranks.peak_allocated_bytes) return max_over_ranks.peak_allocated_bytes;
  return max_over_ranks.peak_rss_bytes;
}

std::optional<double> row_peak_memory_bytes(const BenchResult& row) {
  if (const auto peak = row.memory.peak_bytes()) return peak;
  const auto& telemetry = row.telemetry.peak_memory_bytes_max_over_ranks;
  if (telemetry && *telemetry > 0) return static_cast<double>(*telemetry);
  return std::nullopt;
}

RowMemory row_memory(const std::vector<RankMemory>& ranks, const std::optional<ModelStateBytes>& state,
                     const std::string& source) {
  RowMemory m;
  m.per_rank = ranks;
  const auto fold = [](std::optional<double>& to, const std::optional<double>& v) {
    if (v) to = std::max(to.value_or(*v), *v);
  };
  for (const RankMemory& r : ranks) {
    fold(m.max_over_ranks.peak_allocated_bytes, r.peak_allocated_bytes);
    fold(m.max_over_ranks.peak_reserved_bytes, r.peak_reserved_bytes);
    fold(m.max_over_ranks.peak_rss_bytes, r.peak_rss_bytes);
  }
  m.model_state_bytes = state;
  m.source = source;
  return m;
}

}  // namespace ddpbench
