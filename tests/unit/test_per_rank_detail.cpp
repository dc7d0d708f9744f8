// Per-rank detail of a row (core/result/per_rank_detail): each rank's step summary and the row's
// per-iteration means against values worked out by hand, and which ranks keep their raw
// samples and telemetry series.
#include <gtest/gtest.h>

#include <vector>

#include "core/result/per_rank_detail.hpp"

namespace ddpbench {
namespace {

// One rank per element of `samples`; rank r's telemetry has a CPU utilization mean and a series.
BenchResult ranks_of(const std::vector<std::vector<double>>& samples, const std::vector<double>& util) {
  BenchResult row;
  row.world_size = static_cast<int>(samples.size());
  for (size_t r = 0; r < samples.size(); ++r) {
    RankSamples rs;
    rs.rank = static_cast<int>(r);
    rs.host = "h";
    rs.samples_s = samples[r];
    rs.telemetry.sampled = nlohmann::json{{"flags", nlohmann::json::array()},
                                          {"host", {{"cpu_util_pct", {{"mean", util[r]}}}}},
                                          {"series", {{"cpu_util_pct", {util[r], util[r]}}}}}
                               .get<TelemetrySummary>();
    row.ranks.push_back(rs);
  }
  return row;
}

TEST(PerRankDetail, StepSummaryAndIterationMeansByHand) {
  BenchResult row = ranks_of({{0.1, 0.3}, {0.2, 0.2}, {0.4, 0.2}, {0.3, 0.3}}, {50, 50, 50, 50});
  keep_per_rank_detail(row, /*keep_all=*/true);
  // Iteration means: (0.1+0.2+0.4+0.3)/4 = 0.25, (0.3+0.2+0.2+0.3)/4 = 0.25.
  ASSERT_EQ(row.iteration_means_s.size(), 2u);
  EXPECT_DOUBLE_EQ(row.iteration_means_s[0], 0.25);
  EXPECT_DOUBLE_EQ(row.iteration_means_s[1], 0.25);
  // Rank 2: {0.2, 0.4}: mean 0.3, max 0.4; p50 by linear interpolation 0.3, p95 0.2 + 0.95 * 0.2 = 0.39.
  ASSERT_TRUE(row.ranks[2].step.has_value());
  EXPECT_EQ(row.ranks[2].step->n, 2);
  EXPECT_DOUBLE_EQ(row.ranks[2].step->mean_s, 0.3);
  EXPECT_DOUBLE_EQ(row.ranks[2].step->p50_s, 0.3);
  EXPECT_DOUBLE_EQ(row.ranks[2].step->p95_s, 0.39);
  EXPECT_DOUBLE_EQ(row.ranks[2].step->max_s, 0.4);
  // keep_all: every rank keeps its samples and series, and no list is recorded.
  EXPECT_FALSE(row.ranks_kept_in_full.has_value());
  for (const auto& rs : row.ranks) {
    EXPECT_EQ(rs.samples_s.size(), 2u);
    EXPECT_TRUE(rs.telemetry.sampled->series.has_value());
  }
}

TEST(PerRankDetail, KeepsFlaggedRanksAndTheSlowest) {
  // Mean steps: 0.2, 0.25, 0.3, 0.35, 0.27, 0.28 (rank 3 slowest); utilization: rank 1 lowest,
  // rank 2 highest, which alone keeps nothing (the row's band shows the spread).
  BenchResult row = ranks_of({{0.2, 0.2}, {0.25, 0.25}, {0.3, 0.3}, {0.35, 0.35}, {0.27, 0.27}, {0.28, 0.28}},
                             {50, 10, 90, 50, 50, 50});
  EXPECT_EQ(ranks_kept_in_full(row), (std::vector<int>{3}));
  row.ranks[5].telemetry.sampled->flags = std::vector<std::string>{"low_gpu_util"};
  keep_per_rank_detail(row, /*keep_all=*/false);
  ASSERT_TRUE(row.ranks_kept_in_full.has_value());
  EXPECT_EQ(*row.ranks_kept_in_full, (std::vector<int>{3, 5}));
  for (const auto& rs : row.ranks) {
    const bool kept = rs.rank == 3 || rs.rank == 5;
    EXPECT_EQ(rs.samples_s.empty(), !kept) << rs.rank;
    EXPECT_EQ(rs.telemetry.sampled->series.has_value(), kept) << rs.rank;
    ASSERT_TRUE(rs.step.has_value()) << rs.rank;  // every rank keeps its summary
    EXPECT_EQ(rs.step->n, 2);
  }
  EXPECT_DOUBLE_EQ(row.ranks[4].step->mean_s, 0.27);
}

TEST(PerRankDetail, EqualRanksKeepTheLast) {
  BenchResult row = ranks_of({{0.2}, {0.2}, {0.2}}, {50, 50, 50});
  EXPECT_EQ(ranks_kept_in_full(row), (std::vector<int>{2}));
  BenchResult none = ranks_of({{}, {}}, {50, 50});  // no samples: nothing to keep
  EXPECT_EQ(ranks_kept_in_full(none), (std::vector<int>{}));
}

}  // namespace
}  // namespace ddpbench
