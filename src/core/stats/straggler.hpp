// The slow rank, named: relative performance scores of the ranks of one model. Torch-free.
//
// Every rank measures its own compute-only step (no communication) while all the others
// measure theirs, so a rank is compared with its peers under the same load. A rank's score
// is the fastest rank's step over its own (1 = the fastest, 0.5 = twice as slow): the
// "relative performance score" of NVIDIA's Resiliency Extension (nvidia-resiliency-ext,
// straggler_det/usage_guide: "the best-performing rank in the workload is used as a
// reference"). docs/METHODOLOGY.md "Stragglers".
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace ddpbench {

/// What one rank contributes to the straggler table (rank 0 gathers a few numbers per rank).
struct RankScoreInput {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::string device;         ///< "cpu" or "cuda:<i>"
  int gpu_index = -1;         ///< the CUDA device index; -1 on CPUs
  std::string gpu_uuid;       ///< "" on CPUs
  std::string bus_id;         ///< "" on CPUs
  double compute_step_s = 0;  ///< p50 of its compute-only steps, s (> 0)
  /// p50 of the first and of the second half of those steps, s (both > 0); nullopt when a
  /// half was too short. Two measurements of the same rank, each judged like the whole.
  std::optional<std::pair<double, double>> compute_halves_s;
  std::optional<double> ddp_step_s;   ///< p50 of its steps in the largest DDP group, s
  std::optional<double> comm_wait_s;  ///< its mean exposed communication per step there, s
};

/// The stragglers entry of one model (ResultFile.stragglers, core/result/result.hpp): each rank's
/// score = min over ranks of compute_step_s / its compute_step_s, "straggler" when score <
/// `threshold` and, where every rank has compute_halves_s, also in each half on its own
/// ("half_scores": the same score over the ranks' first halves, then their second halves):
/// a rank slowed once by a passing hiccup is slow in one half only and is not named.
/// "named" the ranks so marked (ascending score). Throws std::invalid_argument on no ranks
/// or a compute step that is not > 0.
nlohmann::json straggler_entry(const std::string& model, long long batch_per_rank, int ddp_world_size,
                               const std::vector<RankScoreInput>& ranks, double threshold);

/// How people are told which rank: "rank 1 (host h, local rank 1, GPU 1, UUID GPU-..., bus
/// 0000:19:00.0)", or "rank 1 (host h, local rank 1, CPU)" for a CPU rank; from one entry of
/// straggler_entry's "ranks" (missing fields read as unknown). Used by run and report.
std::string straggler_rank_words(const nlohmann::json& rank_entry);

/// One line for people: "straggler: rank 1 (host h, local rank 1, GPU 1, UUID ..., bus ...)
/// scores 0.52 < 0.95: its compute-only step is 81.2 ms, the fastest rank's 42.3 ms" per named
/// rank, or "no straggler among N ranks: " + no_straggler_words(entry).
std::vector<std::string> straggler_lines(const nlohmann::json& entry);

/// Why `entry` names no straggler, in words that never contradict its scores: "every score >=
/// 0.95 (lowest: rank 2, 0.97)", or, where a rank scored below the threshold over its series but
/// not over both halves of it, "rank 1 scored 0.92 < 0.95 over its series but 0.97 over its first
/// half: not slow throughout its series, so not named (...)".
std::string no_straggler_words(const nlohmann::json& entry);

}  // namespace ddpbench
