// The instruments catalogue (core/config/instruments.hpp): --instruments-off's names, "all" and
// "none", an unknown name refused with the known ones, and the run header's line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "common/testutil.hpp"
#include "core/config/instruments.hpp"
#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

using ::testing::ElementsAre;

TEST(Instruments, OffListIsCanonicalEachOnceInCatalogueOrder) {
  EXPECT_TRUE(parse_instruments_off("").empty());
  EXPECT_TRUE(parse_instruments_off("none").empty());
  EXPECT_THAT(parse_instruments_off("timers, telemetry,timers"), ElementsAre("telemetry", "timers"));
  EXPECT_THAT(parse_instruments_off("all"), ElementsAre("telemetry", "counters", "timers", "progress", "stragglers"));
  EXPECT_EQ(testutil::usage_error([] { parse_instruments_off("counters,sampler"); }),
            "--instruments-off has 'sampler', which is no instrument; use a comma list of telemetry, counters, "
            "timers, progress, stragglers (or all, none)");
}

TEST(Instruments, OnMeansNotSwitchedOffAndAnUnknownNameIsAProgrammingError) {
  const auto off = parse_instruments_off("counters");
  EXPECT_FALSE(instrument_on(off, "counters"));
  EXPECT_TRUE(instrument_on(off, "telemetry"));
  EXPECT_TRUE(instrument_on({}, "stragglers"));
  EXPECT_THROW(instrument_on(off, "sampler"), std::logic_error);
}

TEST(Instruments, HeaderLineNamesWhatRanAndWhatWasOff) {
  EXPECT_EQ(instruments_line({}, 100),
            "telemetry sampler every 100 ms, per-step counters, breakdown timers, progress, straggler series");
  EXPECT_EQ(instruments_line(parse_instruments_off("telemetry,timers"), 250),
            "per-step counters, progress, straggler series; off (--instruments-off): telemetry sampler every 250 "
            "ms, breakdown timers");
  EXPECT_EQ(instruments_line(parse_instruments_off("all"), 100).rfind("none; off (--instruments-off): ", 0), 0u);
}

}  // namespace
}  // namespace ddpbench
