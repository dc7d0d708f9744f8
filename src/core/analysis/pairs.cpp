#include "core/analysis/pairs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {

std::vector<std::vector<PairIdx>> round_robin_rounds(int n) {
  if (n < 0) throw UsageError(fmt::format("a pair schedule of {} participants is impossible; use n >= 0", n));
  std::vector<std::vector<PairIdx>> rounds;
  if (n < 2) return rounds;
  // Odd n: a phantom participant m - 1 = n; whoever meets it sits the round out.
  const int m = n % 2 == 0 ? n : n + 1;
  const int ring = m - 1;  // participants 0..m-2 rotate around the fixed m-1
  for (int r = 0; r < ring; ++r) {
    std::vector<PairIdx> round;
    auto add = [&](int x, int y) {
      if (x >= n || y >= n) return;  // the bye
      round.emplace_back(std::min(x, y), std::max(x, y));
    };
    add(r, m - 1);
    for (int k = 1; k < m / 2; ++k) add((r + k) % ring, (r - k + ring) % ring);
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
  }
  return rounds;
}

namespace {

std::string gbps(double v) { return fmt::format("{:.3g}", v); }

// How far below the healthy pairs' lowest value a suspect's best alone value must be to stay
// slow: 5%, the run-to-run variation of a healthy link's bandwidth at a plateau size
// (nccl-tests' bus bandwidth plateau is flat to about 5%). The lowest healthy value is itself
// one measurement; an alone value within that variation of it is within the healthy spread.
constexpr double kHealthySpreadNoise = 0.05;

// A value per metric: p2p (both directions) and allreduce busbw, in GB/s.
struct PairLimits {
  double p2p = 0, ar = 0;
};

// One participant's tally over its pairs: how many, how many slow and in which metric.
struct PairNodeTally {
  int pairs = 0, slow = 0, send_slow = 0, recv_slow = 0, ar_slow = 0;
  double worst_send = 0, worst_recv = 0, worst_ar = 0;  // the largest value among its slow ones
};

// Throws UsageError for a slow_fraction outside (0, 1), std::invalid_argument for a pair that
// is not two distinct participants of n.
void check_pair_inputs(const std::vector<PairMeasurement>& m, int n, double slow_fraction) {
  if (!(slow_fraction > 0 && slow_fraction < 1))
    throw UsageError(fmt::format("--slow-fraction {:g} must be between 0 and 1 (e.g. 0.7)", slow_fraction));
  for (const auto& p : m)
    if (p.a < 0 || p.b < 0 || p.a >= n || p.b >= n || p.a == p.b)
      throw std::invalid_argument(fmt::format("pair ({}, {}) is not a pair of {} participants", p.a, p.b, n));
}

// The median over participants of each one's best value (-1: a participant without pairs, left out).
double median_of_bests(const std::vector<double>& best) {
  std::vector<double> v;
  for (double x : best)
    if (x >= 0) v.push_back(x);
  return percentile(v, 50);
}

// Sets out's p2p and allreduce references: the median over participants of each one's best pair.
void set_pair_references(const std::vector<PairMeasurement>& m, int n, PairsAnalysis& out) {
  // Each participant's best pair, per metric; the reference is the median over participants.
  std::vector<double> best_p2p(static_cast<size_t>(n), -1), best_ar(static_cast<size_t>(n), -1);
  for (const auto& p : m)
    for (int x : {p.a, p.b}) {
      best_p2p[x] = std::max({best_p2p[x], p.p2p_ab_gbps, p.p2p_ba_gbps});
      best_ar[x] = std::max(best_ar[x], p.allreduce_busbw_gbps);
    }
  out.ref_p2p_gbps = median_of_bests(best_p2p);
  out.ref_allreduce_gbps = median_of_bests(best_ar);
}

// The healthy pairs' lowest value of each metric (+inf when no pair is healthy), given the
// slow limits `lim`.
PairLimits healthy_pairs_floor(const std::vector<PairMeasurement>& m, const PairLimits& lim) {
  // The healthy pairs' spread: the lowest value of each metric over the pairs that were not
  // suspects and the suspects whose alone runs are all above the limit (their first pass and
  // alone values: what contention did to a healthy pair in this run). A suspect's alone value
  // at or above it is within that spread. +inf when no pair is healthy.
  double floor_p2p = INFINITY, floor_ar = INFINITY;
  for (const auto& p : m) {
    const bool suspect = p.p2p_ab_gbps < lim.p2p || p.p2p_ba_gbps < lim.p2p || p.allreduce_busbw_gbps < lim.ar;
    const bool cleared = suspect && p.alone_runs > 0 && p.alone_p2p_ab_gbps >= lim.p2p &&
                         p.alone_p2p_ba_gbps >= lim.p2p && p.alone_allreduce_busbw_gbps >= lim.ar;
    if (suspect && !cleared) continue;
    floor_p2p = std::min({floor_p2p, p.p2p_ab_gbps, p.p2p_ba_gbps});
    floor_ar = std::min(floor_ar, p.allreduce_busbw_gbps);
    if (cleared) {
      floor_p2p = std::min({floor_p2p, p.alone_p2p_ab_gbps, p.alone_p2p_ba_gbps});
      floor_ar = std::min(floor_ar, p.alone_allreduce_busbw_gbps);
    }
  }
  return {floor_p2p, floor_ar};
}

// Fills out's first_slow and slow_metrics per pair and each participant's tally in `acc`;
// returns, per pair, whether it is slow.
std::vector<bool> classify_pairs(const std::vector<std::string>& names, const std::vector<PairMeasurement>& m,
                                 const PairLimits& lim, const PairLimits& healthy_floor, PairsAnalysis& out,
                                 std::vector<PairNodeTally>& acc) {
  std::vector<bool> pair_slow(m.size(), false);
  for (size_t i = 0; i < m.size(); ++i) {
    const auto& p = m[i];
    auto& s = out.slow_metrics[i];
    // First pass; then, for a pair re-measured alone, what stayed slow there: below the limit
    // and below the healthy pairs' spread (their lowest value, less its noise).
    const bool ab0 = p.p2p_ab_gbps < lim.p2p, ba0 = p.p2p_ba_gbps < lim.p2p, ar0 = p.allreduce_busbw_gbps < lim.ar;
    const bool alone = p.alone_runs > 0;
    const double below_p2p = (1 - kHealthySpreadNoise) * healthy_floor.p2p,
                 below_ar = (1 - kHealthySpreadNoise) * healthy_floor.ar;
    const bool ab = ab0 && (!alone || (p.alone_p2p_ab_gbps < lim.p2p && p.alone_p2p_ab_gbps < below_p2p));
    const bool ba = ba0 && (!alone || (p.alone_p2p_ba_gbps < lim.p2p && p.alone_p2p_ba_gbps < below_p2p));
    const bool ar = ar0 && (!alone || (p.alone_allreduce_busbw_gbps < lim.ar && p.alone_allreduce_busbw_gbps < below_ar));
    const std::string ab_name = fmt::format("p2p {}->{}", names[p.a], names[p.b]),
                      ba_name = fmt::format("p2p {}->{}", names[p.b], names[p.a]);
    if (ab0) out.first_slow[i].push_back(ab_name);
    if (ba0) out.first_slow[i].push_back(ba_name);
    if (ar0) out.first_slow[i].push_back("allreduce");
    if (ab) s.push_back(ab_name);
    if (ba) s.push_back(ba_name);
    if (ar) s.push_back("allreduce");
    pair_slow[i] = !s.empty();
    auto& A = acc[p.a];
    auto& B = acc[p.b];
    ++A.pairs;
    ++B.pairs;
    if (!pair_slow[i]) continue;
    ++A.slow;
    ++B.slow;
    // The value a verdict rests on: the best alone run where there was one.
    const double v_ab = alone ? p.alone_p2p_ab_gbps : p.p2p_ab_gbps, v_ba = alone ? p.alone_p2p_ba_gbps : p.p2p_ba_gbps,
                 v_ar = alone ? p.alone_allreduce_busbw_gbps : p.allreduce_busbw_gbps;
    if (ab) {
      ++A.send_slow, ++B.recv_slow;
      A.worst_send = std::max(A.worst_send, v_ab);
      B.worst_recv = std::max(B.worst_recv, v_ab);
    }
    if (ba) {
      ++B.send_slow, ++A.recv_slow;
      B.worst_send = std::max(B.worst_send, v_ba);
      A.worst_recv = std::max(A.worst_recv, v_ba);
    }
    if (ar) {
      ++A.ar_slow, ++B.ar_slow;
      A.worst_ar = std::max(A.worst_ar, v_ar);
      B.worst_ar = std::max(B.worst_ar, v_ar);
    }
  }
  return pair_slow;
}

// The message naming participant `name` as a slow node: its slow pairs, the slow metrics with
// their worst values against the references, and the direction when only one is slow.
std::string slow_node_message(const std::string& name, const PairNodeTally& a, const PairsAnalysis::Node& node,
                              const PairsAnalysis& out) {
  std::vector<std::string> what;
  if (node.send_slow) what.push_back(fmt::format("p2p sending from {} <= {} GB/s", name, gbps(a.worst_send)));
  if (node.receive_slow) what.push_back(fmt::format("p2p receiving at {} <= {} GB/s", name, gbps(a.worst_recv)));
  if (node.send_slow || node.receive_slow) what.back() += fmt::format(" (reference {})", gbps(out.ref_p2p_gbps));
  if (node.allreduce_slow)
    what.push_back(
        fmt::format("allreduce busbw <= {} GB/s (reference {})", gbps(a.worst_ar), gbps(out.ref_allreduce_gbps)));
  std::string dir;
  if (node.send_slow && !node.receive_slow) dir = "; only its sending direction: its transmit path";
  if (node.receive_slow && !node.send_slow) dir = "; only its receiving direction: its receive path";
  return fmt::format(
      "{}: every pair with it is slow ({} of {}) -> {} or its link (NIC, cable, switch "
      "port, PCIe){}{}{}",
      name, a.slow, a.pairs, name, what.empty() ? "" : ": ",
      [&] {
        std::string s;
        for (size_t i = 0; i < what.size(); ++i) s += (i ? ", " : "") + what[i];
        return s;
      }(),
      dir);
}

// Appends to out.slow_nodes every participant all of whose pairs are slow; returns, per
// participant, whether it was named.
std::vector<bool> name_slow_nodes(const std::vector<std::string>& names, const std::vector<PairNodeTally>& acc,
                                  PairsAnalysis& out) {
  const int n = static_cast<int>(names.size());
  std::vector<bool> named(static_cast<size_t>(n), false);
  for (int x = 0; x < n; ++x) {
    const PairNodeTally& a = acc[x];
    if (a.pairs == 0 || a.slow < a.pairs) continue;
    named[x] = true;
    PairsAnalysis::Node node;
    node.index = x;
    node.pairs = a.pairs;
    node.slow_pairs = a.slow;
    node.send_slow = a.send_slow == a.pairs;
    node.receive_slow = a.recv_slow == a.pairs;
    node.allreduce_slow = a.ar_slow == a.pairs;
    node.message = slow_node_message(names[x], a, node, out);
    out.slow_nodes.push_back(node);
  }
  return named;
}

// Appends each slow pair with neither participant named to out.allreduce_only_links (slow in
// allreduce only, p2p healthy both ways) or else to out.slow_links.
void name_slow_links(const std::vector<std::string>& names, const std::vector<PairMeasurement>& m,
                     const std::vector<bool>& pair_slow, const std::vector<bool>& named, const PairLimits& lim,
                     PairsAnalysis& out) {
  for (size_t i = 0; i < m.size(); ++i) {
    const auto& p = m[i];
    if (!pair_slow[i] || named[p.a] || named[p.b]) continue;
    PairsAnalysis::Link l;
    l.a = p.a;
    l.b = p.b;
    const bool alone = p.alone_runs > 0;
    const double v_ab = alone ? p.alone_p2p_ab_gbps : p.p2p_ab_gbps, v_ba = alone ? p.alone_p2p_ba_gbps : p.p2p_ba_gbps,
                 v_ar = alone ? p.alone_allreduce_busbw_gbps : p.allreduce_busbw_gbps;
    if (out.slow_metrics[i] == std::vector<std::string>{"allreduce"} && v_ab >= lim.p2p && v_ba >= lim.p2p) {
      l.message = fmt::format(
          "{} <-> {}: allreduce busbw {} GB/s{} is below the limit while p2p is healthy both ways ({} / {} GB/s, "
          "reference {}): not named; a reduction slowed by CPU contention, or a half-duplex path (p2p runs one "
          "direction at a time, the allreduce both)",
          names[p.a], names[p.b], gbps(v_ar), alone ? fmt::format(" (alone, best of {})", p.alone_runs) : "",
          gbps(v_ab), gbps(v_ba), gbps(out.ref_p2p_gbps));
      out.allreduce_only_links.push_back(l);
      continue;
    }
    std::string s;
    for (size_t k = 0; k < out.slow_metrics[i].size(); ++k) s += (k ? ", " : "") + out.slow_metrics[i][k];
    l.message = fmt::format(
        "{} <-> {}: slow ({}{}) while both have fast pairs -> the path between them (switch, "
        "route, cabling)",
        names[p.a], names[p.b], s, alone ? fmt::format("; confirmed alone, best of {}", p.alone_runs) : "");
    out.slow_links.push_back(l);
  }
}

}  // namespace

PairsAnalysis analyze_pairs(const std::vector<std::string>& names, const std::vector<PairMeasurement>& m,
                            double slow_fraction) {
  const int n = static_cast<int>(names.size());
  check_pair_inputs(m, n, slow_fraction);
  PairsAnalysis out;
  out.slow_metrics.resize(m.size());
  out.first_slow.resize(m.size());
  if (m.empty()) return out;

  set_pair_references(m, n, out);
  if (n == 2) {
    out.notes.push_back(
        fmt::format("2 participants ({} and {}): one pair, nothing to compare it with; its numbers "
                    "stand alone and nothing is named",
                    names[0], names[1]));
    return out;
  }
  const PairLimits lim{slow_fraction * out.ref_p2p_gbps, slow_fraction * out.ref_allreduce_gbps};

  const PairLimits healthy_floor = healthy_pairs_floor(m, lim);
  out.healthy_floor_p2p_gbps = std::isfinite(healthy_floor.p2p) ? healthy_floor.p2p : 0;
  out.healthy_floor_allreduce_gbps = std::isfinite(healthy_floor.ar) ? healthy_floor.ar : 0;
  std::vector<PairNodeTally> acc(static_cast<size_t>(n));
  const std::vector<bool> pair_slow = classify_pairs(names, m, lim, healthy_floor, out, acc);
  const std::vector<bool> named = name_slow_nodes(names, acc, out);
  name_slow_links(names, m, pair_slow, named, lim, out);
  return out;
}

nlohmann::json pairs_summary_json(const std::string& unit, const std::vector<std::string>& names,
                                  const std::vector<std::string>& hosts, const std::vector<int>& ranks,
                                  long long message_bytes, double slow_fraction,
                                  const std::vector<std::vector<PairIdx>>& rounds,
                                  const std::vector<PairMeasurement>& m, const PairsAnalysis& a) {
  nlohmann::json j;
  j["unit"] = unit;
  j["participants"] = nlohmann::json::array();
  for (size_t i = 0; i < names.size(); ++i)
    j["participants"].push_back({{"index", i}, {"name", names[i]}, {"host", hosts.at(i)}, {"rank", ranks.at(i)}});
  j["message_bytes"] = message_bytes;
  j["slow_fraction"] = slow_fraction;
  j["rounds"] = nlohmann::json::array();
  for (const auto& r : rounds) {
    nlohmann::json jr = nlohmann::json::array();
    for (const auto& p : r) jr.push_back({p.first, p.second});
    j["rounds"].push_back(jr);
  }
  j["reference"] = {{"p2p_gbps", a.ref_p2p_gbps},
                    {"allreduce_busbw_gbps", a.ref_allreduce_gbps},
                    {"method", "median over the participants of each one's fastest pair"}};
  j["healthy_floor"] = {{"p2p_gbps", a.healthy_floor_p2p_gbps},
                        {"allreduce_busbw_gbps", a.healthy_floor_allreduce_gbps},
                        {"method", "the lowest value of the pairs not slow in the first pass or cleared alone"}};
  j["pairs"] = nlohmann::json::array();
  for (size_t i = 0; i < m.size(); ++i) {
    const auto& p = m[i];
    const auto& slow = i < a.slow_metrics.size() ? a.slow_metrics[i] : std::vector<std::string>{};
    const auto& first = i < a.first_slow.size() ? a.first_slow[i] : std::vector<std::string>{};
    nlohmann::json jp{{"round", p.round},
                      {"names", {names.at(p.a), names.at(p.b)}},
                      {"ranks", {ranks.at(p.a), ranks.at(p.b)}},
                      {"p2p_gbps", {p.p2p_ab_gbps, p.p2p_ba_gbps}},
                      {"allreduce_busbw_gbps", p.allreduce_busbw_gbps},
                      {"first_slow", first},
                      {"slow", slow},
                      {"flag", !slow.empty()   ? "slow"
                               : first.empty() ? "ok"
                                               : "cleared"}};
    if (p.alone_runs > 0)
      jp["alone"] = {{"runs", p.alone_runs},
                     {"p2p_gbps", {p.alone_p2p_ab_gbps, p.alone_p2p_ba_gbps}},
                     {"allreduce_busbw_gbps", p.alone_allreduce_busbw_gbps},
                     {"method", "the pair alone (every other participant waiting), best of the runs"}};
    j["pairs"].push_back(std::move(jp));
  }
  j["slow_nodes"] = nlohmann::json::array();
  for (const auto& n : a.slow_nodes)
    j["slow_nodes"].push_back({{"name", names.at(n.index)},
                               {"host", hosts.at(n.index)},
                               {"rank", ranks.at(n.index)},
                               {"pairs", n.pairs},
                               {"slow_pairs", n.slow_pairs},
                               {"send_slow", n.send_slow},
                               {"receive_slow", n.receive_slow},
                               {"allreduce_slow", n.allreduce_slow},
                               {"message", n.message}});
  j["slow_links"] = nlohmann::json::array();
  for (const auto& l : a.slow_links)
    j["slow_links"].push_back(
        {{"names", {names.at(l.a), names.at(l.b)}}, {"ranks", {ranks.at(l.a), ranks.at(l.b)}}, {"message", l.message}});
  j["allreduce_only_links"] = nlohmann::json::array();
  for (const auto& l : a.allreduce_only_links)
    j["allreduce_only_links"].push_back(
        {{"names", {names.at(l.a), names.at(l.b)}}, {"ranks", {ranks.at(l.a), ranks.at(l.b)}}, {"message", l.message}});
  j["notes"] = a.notes;
  j["outliers"] = a.outliers();
  return j;
}

Table pairs_table(const nlohmann::json& s) {
  Table t;
  t.kind = "pairs";
  t.title = fmt::format("pair bandwidth: {} {}s, {} B per message, {} round(s)", s.at("participants").size(),
                        s.at("unit").get<std::string>(), s.at("message_bytes").get<long long>(), s.at("rounds").size());
  t.columns = {{"round", "round", "", fmtcol::plain()},
               {"pair", "pair", "", fmtcol::plain()},
               {"p2p_ab_gbps", "p2p a->b (GB/s)", "GB/s", fmtcol::sig3()},
               {"p2p_ba_gbps", "p2p b->a (GB/s)", "GB/s", fmtcol::sig3()},
               {"allreduce_busbw_gbps", "allreduce busbw (GB/s)", "GB/s", fmtcol::sig3()},
               {"alone_p2p_ab_gbps", "alone a->b (GB/s)", "GB/s", fmtcol::sig3()},
               {"alone_p2p_ba_gbps", "alone b->a (GB/s)", "GB/s", fmtcol::sig3()},
               {"alone_allreduce_busbw_gbps", "alone allreduce (GB/s)", "GB/s", fmtcol::sig3()},
               {"flag", "flag", "", fmtcol::plain()}};
  auto joined = [](const nlohmann::json& list) {
    std::string out;
    for (size_t k = 0; k < list.size(); ++k) out += (k ? ", " : "") + list[k].get<std::string>();
    return out;
  };
  bool any_alone = false;
  int alone_runs = 0;
  for (const auto& p : s.at("pairs")) {
    const auto& nm = p.at("names");
    std::string flag = p.at("flag").get<std::string>();
    const nlohmann::json first = p.value("first_slow", p.at("slow"));
    if (!p.at("slow").empty()) flag += ": " + joined(p.at("slow"));
    else if (!first.empty()) flag += " (slow at first: " + joined(first) + ")";
    std::vector<Value> row{static_cast<long long>(p.at("round").get<int>()),
                           fmt::format("{} - {}", nm[0].get<std::string>(), nm[1].get<std::string>()),
                           p.at("p2p_gbps")[0].get<double>(),
                           p.at("p2p_gbps")[1].get<double>(),
                           p.at("allreduce_busbw_gbps").get<double>(),
                           Value(),
                           Value(),
                           Value(),
                           flag};
    if (p.contains("alone")) {
      const auto& al = p.at("alone");
      any_alone = true;
      alone_runs = al.at("runs").get<int>();
      row[5] = al.at("p2p_gbps")[0].get<double>();
      row[6] = al.at("p2p_gbps")[1].get<double>();
      row[7] = al.at("allreduce_busbw_gbps").get<double>();
    }
    t.rows.push_back(std::move(row));
  }
  const auto& ref = s.at("reference");
  t.notes.push_back(fmt::format("reference ({}): p2p {} GB/s, allreduce busbw {} GB/s; slow: below {:g} x reference",
                                ref.at("method").get<std::string>(), gbps(ref.at("p2p_gbps").get<double>()),
                                gbps(ref.at("allreduce_busbw_gbps").get<double>()),
                                s.at("slow_fraction").get<double>()));
  if (any_alone) {
    std::string floor;
    if (s.contains("healthy_floor")) {
      const double fp = s.at("healthy_floor").at("p2p_gbps").get<double>(),
                   fa = s.at("healthy_floor").at("allreduce_busbw_gbps").get<double>();
      floor = fp > 0 && fa > 0 ? fmt::format(
                                     " and more than {:g}% below the healthy pairs' lowest (p2p {} GB/s, allreduce "
                                     "{} GB/s; {:g}%: a healthy link's run-to-run variation)",
                                     100 * kHealthySpreadNoise, gbps(fp), gbps(fa), 100 * kHealthySpreadNoise)
                               : " (no pair was healthy in this run, so the limit alone decides)";
    }
    t.notes.push_back(fmt::format(
        "alone: each pair slow in the first pass measured again with no other pair running, {} run(s), the best "
        "kept; a pair stays slow only if that is still below the limit{} (\"cleared\" otherwise)",
        alone_runs, floor));
  }
  for (const auto& n : s.at("slow_nodes")) t.notes.push_back("SLOW NODE " + n.at("message").get<std::string>());
  for (const auto& l : s.at("slow_links")) t.notes.push_back("SLOW LINK " + l.at("message").get<std::string>());
  if (const auto it = s.find("allreduce_only_links"); it != s.end() && it->is_array())
    for (const auto& l : *it) t.notes.push_back("allreduce only: " + l.at("message").get<std::string>());
  for (const auto& n : s.at("notes")) t.notes.push_back(n.get<std::string>());
  return t;
}

}  // namespace ddpbench
