// Pair bandwidth (`ddpbench comm --pairs`), the torch-free part: the schedule of rounds of
// disjoint pairs, and the analysis that names the slow pairs and the node or link behind them.
// The measurement itself is engine/bench/comm_bench.hpp (run_comm_pairs).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "core/util/table.hpp"

namespace ddpbench {

/// Two participants (indices 0..n-1), first < second.
using PairIdx = std::pair<int, int>;

/// Every pair of n participants exactly once, in rounds of disjoint pairs, by the circle
/// method of round-robin tournaments (Kirkman 1847; e.g. Wikipedia "Round-robin tournament",
/// "Circle method"): participant n-1 stays fixed, the others rotate one place per round.
/// Even n: n-1 rounds of n/2 pairs. Odd n: a phantom participant n is added and its partner
/// sits out (a bye), so n rounds of (n-1)/2 pairs. Within a round pairs are sorted by their
/// first index. n < 2: no rounds. Throws UsageError for n < 0.
std::vector<std::vector<PairIdx>> round_robin_rounds(int n);

/// One measured pair: the participants' indices (a < b), its round and its bandwidths in
/// GB/s (1e9 bytes/s): point-to-point a->b and b->a (bytes / receiver's time per message,
/// one direction at a time) and the 2-rank allreduce busbw (nccl-tests: algbw * 2(n-1)/n,
/// = algbw for n = 2).
struct PairMeasurement {
  int a = 0, b = 0, round = 0;
  double p2p_ab_gbps = 0, p2p_ba_gbps = 0, allreduce_busbw_gbps = 0;
  /// The same pair re-measured alone (no other pair running), `alone_runs` times: the best
  /// of each metric over those runs. 0 runs: not re-measured.
  int alone_runs = 0;
  double alone_p2p_ab_gbps = 0, alone_p2p_ba_gbps = 0, alone_allreduce_busbw_gbps = 0;
};

/// Most pairs re-measured alone in one `comm --pairs` run (each takes a turn of its own
/// while every other participant waits): the first suspects in schedule order; the others
/// are judged on their first measurement, with a note.
inline constexpr int kMaxPairConfirmations = 64;

/// Fewest participants whose pairs can tell a slow node from its peer: with two, a slow pair
/// names neither. `comm --pairs` and validate's pairs step say "not evaluated" below it.
inline constexpr size_t kMinPairParticipants = 3;

/// The outlier analysis of all pairs of `names.size()` participants.
///
/// Reference of a metric (p2p, over both directions; allreduce busbw): every participant's
/// best pair in it (the fastest of its pairs), then the median of those bests over the
/// participants. A healthy participant has at least one healthy partner, so the reference
/// stays the healthy speed while fewer than half the participants are slow (the plain median
/// over pairs does not: one slow node of 3 or 4 is in 2 of 3 or 3 of 6 pairs).
/// A pair is a suspect when any of its three numbers is below `slow_fraction` x its
/// reference. A suspect re-measured alone (PairMeasurement::alone_runs > 0) is slow only in
/// the metrics whose best alone value is still below that limit and below the healthy
/// pairs' spread: 0.95 x the lowest value of the metric over the pairs that were not suspects
/// and the suspects whose alone runs are all above the limit (their first-pass and alone
/// values; 5% is a healthy link's run-to-run variation, nccl-tests' plateau). A pair slowed
/// by contention (the other pairs of its round, other jobs) recovers
/// in at least one run to where healthy pairs have been seen; a slow link in none. A
/// suspect not re-measured stays slow.
/// A node is named (the slow node or its link) when n >= 3 and every pair with it is slow;
/// a slow pair neither of whose participants is named is named as a slow link (the path
/// between the two). With n == 2 nothing is compared (one pair) and nothing is named.
struct PairsAnalysis {
  double ref_p2p_gbps = 0, ref_allreduce_gbps = 0;
  /// Per pair, in the order given: what is slow, e.g. "p2p node0->node3",
  /// "allreduce"; empty when the pair is fine.
  std::vector<std::vector<std::string>> slow_metrics;
  /// Per pair: what was slow in the first (concurrent) measurement; a pair whose
  /// first_slow is non-empty is a suspect.
  std::vector<std::vector<std::string>> first_slow;
  /// The healthy pairs' lowest p2p and allreduce values, GB/s (0: no healthy pair).
  double healthy_floor_p2p_gbps = 0, healthy_floor_allreduce_gbps = 0;
  struct Node {
    int index = 0;
    int pairs = 0, slow_pairs = 0;
    bool send_slow = false, receive_slow = false, allreduce_slow = false;  ///< in every pair with it
    std::string message;  ///< "node3: every pair with it is slow (3 of 3) -> ..."
  };
  std::vector<Node> slow_nodes;
  struct Link {
    int a = 0, b = 0;
    std::string message;
  };
  std::vector<Link> slow_links;
  /// Pairs slow in allreduce only while p2p is at or above the limit in both directions (alone
  /// where re-measured): not named, since the link carries p2p at full rate both ways; a
  /// reduction slowed by CPU contention or a half-duplex path (p2p runs one direction at a
  /// time, the allreduce both at once). Reported as a note.
  std::vector<Link> allreduce_only_links;
  std::vector<std::string> notes;  ///< e.g. the two-node case
  bool outliers() const { return !slow_nodes.empty() || !slow_links.empty(); }
};

/// Analyses `m` (every pair of the participants named `names`, each once). Throws UsageError
/// when slow_fraction is not in (0, 1), and std::invalid_argument when an index is out of
/// range. Called once on the first pass (its first_slow lists the suspects to re-measure),
/// then again with the alone measurements filled in.
PairsAnalysis analyze_pairs(const std::vector<std::string>& names, const std::vector<PairMeasurement>& m,
                            double slow_fraction);

/// The summary stored in ResultFile.comm_pairs (schema in docs/METHODOLOGY.md, "Pair
/// bandwidth"): unit, participants [{index, name, host, rank}], message_bytes, slow_fraction,
/// rounds (index pairs), reference {p2p_gbps, allreduce_busbw_gbps, method}, pairs [{round,
/// names, ranks, p2p_gbps [a->b, b->a], allreduce_busbw_gbps, first_slow [..], alone {runs,
/// p2p_gbps, allreduce_busbw_gbps} (re-measured pairs only), slow [..], flag "ok"|"slow"|
/// "cleared" (slow at first, not alone)}],
/// slow_nodes [{name, host, rank, pairs, slow_pairs, send_slow, receive_slow, allreduce_slow,
/// message}], slow_links [{names, ranks, message}], allreduce_only_links [{names, ranks,
/// message}], notes, outliers (bool).
/// `hosts`/`ranks`: each participant's host and global rank.
nlohmann::json pairs_summary_json(const std::string& unit, const std::vector<std::string>& names,
                                  const std::vector<std::string>& hosts, const std::vector<int>& ranks,
                                  long long message_bytes, double slow_fraction,
                                  const std::vector<std::vector<PairIdx>>& rounds,
                                  const std::vector<PairMeasurement>& m, const PairsAnalysis& a);

/// The table of a comm_pairs summary: round, pair, p2p GB/s each direction, allreduce busbw,
/// the same re-measured alone (suspects only), flag; the named outliers and notes under it.
/// Throws nlohmann::json errors on a malformed summary (files before the re-measurement
/// read as never re-measured).
Table pairs_table(const nlohmann::json& comm_pairs);

}  // namespace ddpbench
