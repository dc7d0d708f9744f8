// Burn-in windows, drift and subsampling (core/stats/burn_in), against hand-computed values.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/stats/burn_in.hpp"

namespace ddpbench {
namespace {

TEST(BurnIn, WindowCountKeepsWindowsAtLeastFiveSecondsAndAtMostSixty) {
  EXPECT_EQ(burn_in_windows(4), 1);  // shorter than one 5 s window
  EXPECT_EQ(burn_in_windows(6), 1);  // floor(6 / 5)
  EXPECT_EQ(burn_in_windows(10), 2);
  EXPECT_EQ(burn_in_windows(120), 24);   // 2 min: 24 windows of 5 s
  EXPECT_EQ(burn_in_windows(1800), 60);  // 30 min: 60 windows of 30 s
  EXPECT_EQ(burn_in_windows(7200), 60);
  EXPECT_THROW(burn_in_windows(0), std::invalid_argument);
  EXPECT_THROW(burn_in_windows(-1), std::invalid_argument);
}

TEST(BurnIn, StepsCountInTheWindowTheyEndInAndTheLastWindowRunsToTheLastStep) {
  // D = 10 s, 2 windows of 5 s. Steps of 2 examples end at 1..9 s and 10.5 s (the one
  // that crossed D). Window 0 = [0, 5): ends 1, 2, 3, 4 -> 8 examples / 5 s = 1.6 ex/s.
  // Window 1 = [5, 10.5]: ends 5 (half-open: the later window), 6, 7, 8, 9, 10.5 ->
  // 12 examples / 5.5 s.
  std::vector<StepEnd> steps;
  for (double t : {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.5}) steps.push_back({t, 2.0});
  const auto w = window_throughput(steps, 10.0, 2);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_DOUBLE_EQ(w[0], 1.6);
  EXPECT_DOUBLE_EQ(w[1], 12.0 / 5.5);
}

TEST(BurnIn, EmptyWindowsReadZeroAndEveryStepCountsOnce) {
  // D = 6 s, 3 windows of 2 s; nothing ends in [2, 4).
  const std::vector<StepEnd> steps = {{0.5, 4}, {1.5, 4}, {4.5, 8}, {6.0, 8}};
  const auto w = window_throughput(steps, 6.0, 3);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_DOUBLE_EQ(w[0], 8.0 / 2.0);
  EXPECT_DOUBLE_EQ(w[1], 0.0);
  EXPECT_DOUBLE_EQ(w[2], 16.0 / 2.0);  // 6.0 = D: clamped into the last window, which ends at D
  EXPECT_THROW(window_throughput(steps, 6.0, 0), std::invalid_argument);
  EXPECT_THROW(window_throughput(steps, 0.0, 1), std::invalid_argument);
}

TEST(BurnIn, DriftComparesTheLastWindowWithTheFirst) {
  const Drift d = throughput_drift({100, 90, 94});
  EXPECT_DOUBLE_EQ(d.first_ex_per_s, 100);
  EXPECT_DOUBLE_EQ(d.last_ex_per_s, 94);
  EXPECT_DOUBLE_EQ(d.change_pct, -6.0);
  EXPECT_TRUE(d.flagged);                             // -6% < -5%
  EXPECT_FALSE(throughput_drift({100, 96}).flagged);  // -4%
  EXPECT_DOUBLE_EQ(throughput_drift({100, 96}).change_pct, -4.0);
  EXPECT_FALSE(throughput_drift({100, 130}).flagged);  // faster is not drift we flag
  EXPECT_TRUE(throughput_drift({100, 96}, 3.0).flagged);
  EXPECT_DOUBLE_EQ(throughput_drift({42}).change_pct, 0.0);  // one window: nothing to compare
  EXPECT_FALSE(throughput_drift({42}).flagged);
  EXPECT_DOUBLE_EQ(throughput_drift({0, 5}).change_pct, 0.0);
  EXPECT_THROW(throughput_drift({}), std::invalid_argument);
  // The helper's 30 s run: 5 s windows, 16 examples per step -> 3.2 ex/s per step; first
  // window 44.8 ex/s: resolution 100 * 2 * 3.2 / 44.8 = 14.29%; -5.8% is within it.
  const Drift q = throughput_drift({44.8, 42.2}, 5.0, 16.0 / 5.0);
  EXPECT_NEAR(q.resolution_pct, 14.2857, 1e-3);
  EXPECT_FALSE(q.flagged);
  // A real fall beyond threshold + resolution: 44.8 -> 35.0 (-21.9%).
  EXPECT_TRUE(throughput_drift({44.8, 35.0}, 5.0, 16.0 / 5.0).flagged);
}

TEST(BurnIn, SubsampleKeepsEveryKthFromTheFirst) {
  EXPECT_EQ(subsample_stride(4096, 4096), 1u);
  EXPECT_EQ(subsample_stride(4097, 4096), 2u);
  EXPECT_EQ(subsample_stride(10000, 4096), 3u);
  EXPECT_EQ(subsample_stride(0, 4096), 1u);
  EXPECT_THROW(subsample_stride(5, 0), std::invalid_argument);
  EXPECT_EQ(subsample({1, 2, 3, 4, 5, 6, 7}, 3), (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(subsample({1, 2, 3}, 1), (std::vector<double>{1, 2, 3}));
  // 10000 samples -> stride 3 -> 3334 kept (<= 4096).
  EXPECT_EQ(subsample(std::vector<double>(10000, 1.0), subsample_stride(10000, kMaxBurnInSamples)).size(), 3334u);
}

}  // namespace
}  // namespace ddpbench
