#include "core/stats/straggler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace ddpbench {

nlohmann::json straggler_entry(const std::string& model, long long batch_per_rank, int ddp_world_size,
                               const std::vector<RankScoreInput>& ranks, double threshold) {
  if (ranks.empty()) throw std::invalid_argument("straggler_entry: no ranks");
  double fastest = ranks.front().compute_step_s;
  for (const auto& r : ranks) {
    if (!(r.compute_step_s > 0))
      throw std::invalid_argument(
          fmt::format("straggler_entry: rank {} has compute step {}", r.rank, r.compute_step_s));
    fastest = std::min(fastest, r.compute_step_s);
  }
  const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  // The halves: confirmed only where every rank has both (the fastest of each half is then known).
  const bool halves = std::all_of(ranks.begin(), ranks.end(), [](const RankScoreInput& r) {
    return r.compute_halves_s && r.compute_halves_s->first > 0 && r.compute_halves_s->second > 0;
  });
  double fastest1 = INFINITY, fastest2 = INFINITY;
  if (halves)
    for (const auto& r : ranks) {
      fastest1 = std::min(fastest1, r.compute_halves_s->first);
      fastest2 = std::min(fastest2, r.compute_halves_s->second);
    }
  nlohmann::json out_ranks = nlohmann::json::array();
  std::vector<std::pair<double, int>> named;
  for (const auto& r : ranks) {
    const double score = fastest / r.compute_step_s;
    bool slow = score < threshold;
    nlohmann::json half_scores = nullptr;
    if (halves) {
      const double s1 = fastest1 / r.compute_halves_s->first, s2 = fastest2 / r.compute_halves_s->second;
      half_scores = {s1, s2};
      slow = slow && s1 < threshold && s2 < threshold;
    }
    if (slow) named.emplace_back(score, r.rank);
    out_ranks.push_back({{"rank", r.rank},
                         {"host", r.host},
                         {"local_rank", r.local_rank},
                         {"device", r.device},
                         {"gpu_index", r.gpu_index},
                         {"gpu_uuid", r.gpu_uuid},
                         {"bus_id", r.bus_id},
                         {"compute_step_s", r.compute_step_s},
                         {"ddp_step_s", opt(r.ddp_step_s)},
                         {"comm_wait_s", opt(r.comm_wait_s)},
                         {"score", score},
                         {"half_scores", half_scores},
                         {"straggler", slow}});
  }
  std::sort(named.begin(), named.end());
  nlohmann::json names = nlohmann::json::array();
  for (const auto& [s, r] : named) names.push_back(r);
  return {{"model", model},
          {"batch_per_rank", batch_per_rank},
          {"threshold", threshold},
          {"world_size", static_cast<int>(ranks.size())},
          {"ddp_world_size", ddp_world_size},
          {"ranks", out_ranks},
          {"named", names},
          {"note",
           halves ? "score = fastest rank's compute-only step p50 / this rank's (every rank measured at the same "
                    "time, without communication); a straggler scores below the threshold over its whole series and "
                    "over each half of it (half_scores); ddp_step_s and comm_wait_s from the largest DDP group"
                  : "score = fastest rank's compute-only step p50 / this rank's (every rank measured at the same "
                    "time, without communication); ddp_step_s and comm_wait_s from the largest DDP group"}};
}

std::string straggler_rank_words(const nlohmann::json& r) {
  const auto str = [&](const char* k) { return r.contains(k) && r[k].is_string() ? r[k].get<std::string>() : ""; };
  const auto num = [&](const char* k, long long dflt) {
    return r.contains(k) && r[k].is_number() ? r[k].get<long long>() : dflt;
  };
  const std::string host = str("host");
  std::string s =
      fmt::format("rank {} (host {}, local rank {}", num("rank", -1), host.empty() ? "?" : host, num("local_rank", -1));
  const long long gpu = num("gpu_index", -1);
  if (gpu < 0) return s + ", CPU)";
  s += fmt::format(", GPU {}", gpu);
  if (const auto u = str("gpu_uuid"); !u.empty()) s += ", UUID " + u;
  if (const auto b = str("bus_id"); !b.empty()) s += ", bus " + b;
  return s + ")";
}

namespace {

// A score with 2 decimals, or as many more (up to 6) as it takes for the printed value to
// fall on the same side of `threshold` as the score ("0.9466 < 0.95" is never "0.95 < 0.95").
std::string score_text(double score, double threshold) {
  for (int d = 2; d <= 6; ++d) {
    const std::string t = fmt::format("{:.{}f}", score, d);
    if ((std::strtod(t.c_str(), nullptr) < threshold) == (score < threshold)) return t;
  }
  return fmt::format("{}", score);
}

}  // namespace

std::vector<std::string> straggler_lines(const nlohmann::json& entry) {
  std::vector<std::string> out;
  const auto& ranks = entry.at("ranks");
  const double threshold = entry.at("threshold").get<double>();
  double fastest = 0;
  for (const auto& r : ranks)
    if (r.at("score").get<double>() >= 1.0) fastest = r.at("compute_step_s").get<double>();
  for (const auto& id : entry.at("named")) {
    for (const auto& r : ranks) {
      if (r.at("rank") != id) continue;
      std::string halves;
      if (r.contains("half_scores") && r["half_scores"].is_array())
        halves = fmt::format(" (and {} / {} over the two halves of its series)",
                             score_text(r["half_scores"][0].get<double>(), threshold),
                             score_text(r["half_scores"][1].get<double>(), threshold));
      out.push_back(
          fmt::format("straggler: {} scores {} < {:g}{}: its compute-only step is {:.1f} ms, the "
                      "fastest rank's {:.1f} ms",
                      straggler_rank_words(r), score_text(r["score"].get<double>(), threshold), threshold, halves,
                      1e3 * r["compute_step_s"].get<double>(), 1e3 * fastest));
    }
  }
  if (out.empty()) out.push_back(fmt::format("no straggler among {} ranks: {}", ranks.size(), no_straggler_words(entry)));
  return out;
}

std::string no_straggler_words(const nlohmann::json& entry) {
  if (!entry.is_object() || !entry.contains("ranks") || !entry["ranks"].is_array()) return "no rank has a score";
  const auto& ranks = entry["ranks"];
  const double threshold =
      entry.contains("threshold") && entry["threshold"].is_number() ? entry["threshold"].get<double>() : 0.95;
  const nlohmann::json* low = nullptr;
  for (const auto& r : ranks)
    if (r.contains("score") && r["score"].is_number() &&
        (!low || r["score"].get<double>() < (*low)["score"].get<double>()))
      low = &r;
  if (!low) return "no rank has a score";
  const double score = (*low)["score"].get<double>();
  if (score >= threshold)
    return fmt::format("every score >= {:g} (lowest: rank {}, {})", threshold,
                       (*low).contains("rank") && (*low)["rank"].is_number() ? (*low)["rank"].get<long long>() : -1,
                       score_text(score, threshold));
  // Below the threshold over its series, but not named: a half of its series scored at or above
  // it, so the slowness did not last (a transient, not a slow rank).
  std::string halves = "";
  if (low->contains("half_scores") && (*low)["half_scores"].is_array() && (*low)["half_scores"].size() == 2 &&
      (*low)["half_scores"][0].is_number() && (*low)["half_scores"][1].is_number()) {
    const double h1 = (*low)["half_scores"][0].get<double>(), h2 = (*low)["half_scores"][1].get<double>();
    halves = fmt::format(" but {} over its {} half", score_text(h1 >= threshold ? h1 : h2, threshold),
                         h1 >= threshold ? "first" : "second");
  }
  const long long rank = (*low).contains("rank") && (*low)["rank"].is_number() ? (*low)["rank"].get<long long>() : -1;
  return fmt::format("rank {} scored {} < {:g} over its series{}: not slow throughout its series, so not named "
                     "(a straggler scores below the threshold over the whole series and each half)",
                     rank, score_text(score, threshold), threshold, halves);
}

}  // namespace ddpbench
