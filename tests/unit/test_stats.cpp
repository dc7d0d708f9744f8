// Percentiles (numpy "linear"), mean, standard deviation, CI, summaries.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "core/stats/stats.hpp"

namespace ddpbench {
namespace {

TEST(Percentile, MatchesNumpyLinearInterpolation) {
  // numpy.percentile([1, 2, 3, 4], q) for q = 0, 50, 75, 90, 95, 100
  const std::vector<double> x = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(x, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(x, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(x, 75), 3.25);
  EXPECT_NEAR(percentile(x, 90), 3.7, 1e-12);
  EXPECT_NEAR(percentile(x, 95), 3.85, 1e-12);
  EXPECT_DOUBLE_EQ(percentile(x, 100), 4.0);
}

TEST(Percentile, OddCountMedianIsMiddleElement) {
  EXPECT_DOUBLE_EQ(percentile({0.3, 0.1, 0.2}, 50), 0.2);
  EXPECT_DOUBLE_EQ(percentile({7.0}, 95), 7.0);
}

TEST(Percentile, RejectsEmptyAndBadQ) {
  EXPECT_THROW(percentile({}, 50), std::invalid_argument);
  EXPECT_THROW(percentile({1.0}, 101), std::invalid_argument);
  EXPECT_THROW(percentile({1.0}, -1), std::invalid_argument);
}

TEST(Moments, SampleStddevAndCi95) {
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(x), 5.0);
  EXPECT_NEAR(stddev(x), std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_NEAR(ci95_halfwidth(x), 2.365 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0), 1e-12);  // t(0.975, 7)
  EXPECT_EQ(stddev({1.0}), 0.0);
  EXPECT_EQ(ci95_halfwidth({1.0}), 0.0);
}

TEST(Summary, ThroughputFromMedian) {
  const auto s = summarize({{0.1, 0.2, 0.3, 0.4, 0.5}}, 32, 4);
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.p50_s, 0.3);
  EXPECT_DOUBLE_EQ(s.min_s, 0.1);
  EXPECT_DOUBLE_EQ(s.max_s, 0.5);
  EXPECT_NEAR(s.ex_per_s_per_gpu, 32 / 0.3, 1e-9);
  EXPECT_NEAR(s.ex_per_s_total, 4 * 32 / 0.3, 1e-9);
  EXPECT_NEAR(s.p95_s, 0.48, 1e-12);
}

TEST(Summary, PercentilesPoolRanksButTheCiCountsIterations) {
  // Two ranks in lock-step: pooling would claim 6 independent samples.
  const std::vector<std::vector<double>> ranks = {{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}};
  const auto s = summarize(ranks, 8, 2);
  EXPECT_EQ(s.n, 6);
  EXPECT_DOUBLE_EQ(s.p50_s, 2.0);
  EXPECT_NEAR(s.ci95_s, 4.303 * 1.0 / std::sqrt(3.0), 1e-12);  // sd of {1,2,3} is 1, over 3 iterations, t(0.975, 2)
  EXPECT_EQ(s.iterations, 3);
  EXPECT_NEAR(s.cv, 1.0 / 2.0, 1e-12);  // sd 1 over mean 2
  EXPECT_THROW(summarize({}, 8, 1), std::invalid_argument);
}

TEST(IterationMeans, MeanAcrossRanksPerIteration) {
  EXPECT_EQ(iteration_means({{1.0, 4.0}, {3.0, 2.0}}), (std::vector<double>{2.0, 3.0}));
  EXPECT_EQ(iteration_means({{1.0, 4.0}, {3.0}}), (std::vector<double>{1.0, 4.0, 3.0}));  // unequal: pooled
  EXPECT_TRUE(iteration_means({}).empty());
}

}  // namespace
}  // namespace ddpbench

namespace ddpbench {
namespace {
// Student's t quantiles against printed tables (NIST/SEMATECH 1.3.6.7.2; beyond 30 degrees
// of freedom the same table's rows for 40, 60, 100 and the normal limit).
TEST(Stats, StudentTQuantilesMatchTheTable) {
  EXPECT_DOUBLE_EQ(t95(1), 12.706);
  EXPECT_DOUBLE_EQ(t95(4), 2.776);
  EXPECT_DOUBLE_EQ(t95(30), 2.042);
  EXPECT_NEAR(t95(40), 2.021, 5e-4);
  EXPECT_NEAR(t95(60), 2.000, 5e-4);
  EXPECT_NEAR(t95(100), 1.984, 5e-4);
  EXPECT_NEAR(t95(1000000), 1.960, 5e-4);
  EXPECT_THROW(t95(0), std::invalid_argument);
}
}  // namespace
}  // namespace ddpbench
