// The straggler scores (core/stats/straggler.hpp) against hand-computed values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/stats/straggler.hpp"

namespace ddpbench {
namespace {

RankScoreInput rank_in(int r, double step_s) {
  RankScoreInput x;
  x.rank = r;
  x.host = r < 2 ? "node1" : "node2";
  x.local_rank = r % 2;
  x.device = "cuda:" + std::to_string(r % 2);
  x.gpu_index = r % 2;
  x.gpu_uuid = "GPU-" + std::to_string(r);
  x.bus_id = "0000:0" + std::to_string(r) + ":00.0";
  x.compute_step_s = step_s;
  return x;
}

TEST(Straggler, ScoreIsFastestOverOwnAndNamesRanksBelowThreshold) {
  // Steps 0.100, 0.102, 0.200, 0.104 s: fastest 0.100; scores 1, 0.98039, 0.5, 0.96154.
  std::vector<RankScoreInput> in{rank_in(0, 0.100), rank_in(1, 0.102), rank_in(2, 0.200), rank_in(3, 0.104)};
  in[2].ddp_step_s = 0.25;
  in[2].comm_wait_s = 0.01;
  const auto e = straggler_entry("resnet50", 32, 4, in, 0.97);
  ASSERT_EQ(e["ranks"].size(), 4u);
  EXPECT_DOUBLE_EQ(e["ranks"][0]["score"].get<double>(), 1.0);
  EXPECT_NEAR(e["ranks"][1]["score"].get<double>(), 0.100 / 0.102, 1e-12);
  EXPECT_DOUBLE_EQ(e["ranks"][2]["score"].get<double>(), 0.5);
  EXPECT_NEAR(e["ranks"][3]["score"].get<double>(), 0.100 / 0.104, 1e-12);
  // 0.9615 < 0.97 and 0.5 < 0.97: named in ascending score, rank 2 first.
  EXPECT_EQ(e["named"], nlohmann::json::array({2, 3}));
  EXPECT_TRUE(e["ranks"][2]["straggler"].get<bool>());
  EXPECT_FALSE(e["ranks"][1]["straggler"].get<bool>());
  EXPECT_DOUBLE_EQ(e["ranks"][2]["ddp_step_s"].get<double>(), 0.25);
  EXPECT_TRUE(e["ranks"][0]["ddp_step_s"].is_null());
  EXPECT_EQ(e["ranks"][2]["gpu_uuid"], "GPU-2");
  EXPECT_EQ(e["world_size"], 4);
  EXPECT_EQ(e["ddp_world_size"], 4);

  const auto lines = straggler_lines(e);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "straggler: rank 2 (host node2, local rank 0, GPU 0, UUID GPU-2, bus 0000:02:00.0) scores 0.50 < 0.97: its "
            "compute-only step is 200.0 ms, the fastest rank's 100.0 ms");
}

// Confirmed in both halves: ranks 2 and 3 both score below 0.97 over their whole series, but
// rank 3 only because of its first half (a passing hiccup: 0.100 / 0.110 = 0.909, then
// 0.100 / 0.100 = 1 in the second): only rank 2, slow in both halves (0.5, 0.5), is named.
TEST(Straggler, ASlowHalfAloneIsNotAStraggler) {
  std::vector<RankScoreInput> in{rank_in(0, 0.100), rank_in(1, 0.100), rank_in(2, 0.200), rank_in(3, 0.104)};
  in[0].compute_halves_s = {0.100, 0.100};
  in[1].compute_halves_s = {0.100, 0.100};
  in[2].compute_halves_s = {0.200, 0.200};
  in[3].compute_halves_s = {0.110, 0.100};
  const auto e = straggler_entry("resnet50", 32, 4, in, 0.97);
  EXPECT_EQ(e["named"], nlohmann::json::array({2}));
  EXPECT_NEAR(e["ranks"][3]["score"].get<double>(), 0.100 / 0.104, 1e-12);  // below 0.97 overall
  EXPECT_NEAR(e["ranks"][3]["half_scores"][0].get<double>(), 0.100 / 0.110, 1e-12);
  EXPECT_DOUBLE_EQ(e["ranks"][3]["half_scores"][1].get<double>(), 1.0);
  EXPECT_FALSE(e["ranks"][3]["straggler"].get<bool>());
  const auto lines = straggler_lines(e);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], ::testing::HasSubstr("scores 0.50 < 0.97 (and 0.50 / 0.50 over the two halves of its series)"));
  // A rank without halves (a series too short): judged on the whole, as before.
  in[3].compute_halves_s.reset();
  EXPECT_EQ(straggler_entry("resnet50", 32, 4, in, 0.97)["named"], nlohmann::json::array({2, 3}));
}

// A score just below the threshold prints with the digits that show it is below:
// 0.100 / 0.10564 = 0.94662 is "0.947 < 0.95", never "0.95 < 0.95".
TEST(Straggler, ScoreJustBelowTheThresholdPrintsBelowIt) {
  const auto e = straggler_entry("resnet18", 16, 2, {rank_in(0, 0.100), rank_in(1, 0.10564)}, 0.95);
  ASSERT_EQ(e["named"], nlohmann::json::array({1}));
  const auto lines = straggler_lines(e);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], ::testing::HasSubstr(" scores 0.947 < 0.95: "));
}

TEST(Straggler, NoneBelowThresholdSaysTheLowest) {
  std::vector<RankScoreInput> in{rank_in(0, 0.101), rank_in(1, 0.100)};
  in[0].device = "cpu";
  in[0].gpu_index = -1;
  in[0].gpu_uuid = in[0].bus_id = "";
  const auto e = straggler_entry("resnet18", 16, 2, in, 0.95);
  EXPECT_TRUE(e["named"].empty());
  EXPECT_EQ(straggler_rank_words(e["ranks"][0]), "rank 0 (host node1, local rank 0, CPU)");
  const auto lines = straggler_lines(e);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "no straggler among 2 ranks: every score >= 0.95 (lowest: rank 0, 0.99)");
}

// A rank below the threshold over its series but not over both halves is not named, and the
// line says so instead of "every score >= 0.95 (lowest: rank 1, 0.92)".
TEST(Straggler, ALowScoreThatIsNotNamedSaysWhy) {
  std::vector<RankScoreInput> in{rank_in(0, 0.100), rank_in(1, 0.1087)};  // 0.100 / 0.1087 = 0.92
  in[0].compute_halves_s = {0.100, 0.100};
  in[1].compute_halves_s = {0.100, 0.1174};  // 1.00, then 0.85
  const auto e = straggler_entry("resnet18", 16, 2, in, 0.95);
  EXPECT_TRUE(e["named"].empty());
  const auto lines = straggler_lines(e);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "no straggler among 2 ranks: rank 1 scored 0.92 < 0.95 over its series but 1.00 over its first half: not "
            "slow throughout its series, so not named (a straggler scores below the threshold over the whole series "
            "and each half)");
  EXPECT_EQ(lines[0].find(">= 0.95"), std::string::npos);
}

TEST(Straggler, RejectsEmptyAndNonPositiveSteps) {
  EXPECT_THROW(straggler_entry("m", 1, 1, {}, 0.95), std::invalid_argument);
  EXPECT_THROW(straggler_entry("m", 1, 1, {rank_in(0, 0.0)}, 0.95), std::invalid_argument);
}

}  // namespace
}  // namespace ddpbench
