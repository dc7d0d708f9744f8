// What each rank sends rank 0 after a series (engine/bench/measure RankStats): every field,
// the per-rank metrics of the catalogue among them, comes back from pack and unpack as sent.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "engine/bench/measure.hpp"

namespace ddpbench {
namespace {

TEST(RankStats, EveryFieldAndEveryPerRankMetricTravels) {
  RankStats st;
  st.samples_s = {0.1, 0.2, 0.3};
  for (size_t k = 0; k < st.breakdown_s.size(); ++k) st.breakdown_s[k] = 0.01 * static_cast<double>(k + 1);
  st.peak_memory_bytes = 1024;
  st.memory_reset_ok = 1;
  st.window_steps_per_s = {5, 6};
  for (size_t i = 0; i < per_rank_metrics().size(); ++i) st.metrics.push_back(10.0 + static_cast<double>(i));
  const std::vector<double> v = st.pack();
  // 3 samples, the breakdown, 8 scalars, one slot per per-rank metric, 2 windows.
  EXPECT_EQ(v.size(), 3 + st.breakdown_s.size() + 8 + per_rank_metrics().size() + 2);
  const RankStats back = RankStats::unpack(v, 3);
  EXPECT_EQ(back.samples_s, st.samples_s);
  EXPECT_EQ(back.breakdown_s, st.breakdown_s);
  EXPECT_EQ(back.peak_memory_bytes, 1024);
  EXPECT_FALSE(back.wire_bytes_per_step.has_value());  // NaN on the wire: absent
  EXPECT_EQ(back.window_steps_per_s, st.window_steps_per_s);
  EXPECT_EQ(back.metrics, st.metrics);
  EXPECT_THROW(RankStats::unpack(std::vector<double>(v.begin(), v.begin() + 4), 3), std::runtime_error);
}

TEST(RankStats, AMetricNotMeasuredArrivesAbsent) {
  RankStats st;
  st.samples_s = {0.1};
  const RankStats back = RankStats::unpack(st.pack(), 1);  // no metrics set: NaN slots
  ASSERT_EQ(back.metrics.size(), per_rank_metrics().size());
  for (const auto& m : back.metrics) EXPECT_FALSE(m.has_value());
}

}  // namespace
}  // namespace ddpbench
