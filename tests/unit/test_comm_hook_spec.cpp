// `--comm-hook` items: what parse_comm_hook accepts, what it refuses, canonical names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/testutil.hpp"
#include "core/config/comm_hook_spec.hpp"

namespace ddpbench {
namespace {

using ::testing::HasSubstr;
using testutil::usage_error;

TEST(CommHookSpec, DefaultIsNone) {
  const CommHookSpec s;
  EXPECT_EQ(s.kind, "none");
  EXPECT_EQ(s.name(), "none");
  // PowerSGDState's minimum with error feedback / warm start (powerSGD_hook.py).
  EXPECT_EQ(s.start_iter, 2);
  EXPECT_TRUE(s.error_feedback);
  EXPECT_TRUE(s.warm_start);
}

TEST(CommHookSpec, PlainKindsRoundTrip) {
  for (const char* k : {"none", "allreduce", "fp16", "bf16", "hierarchical"}) {
    const auto s = parse_comm_hook(k);
    EXPECT_EQ(s.kind, k);
    EXPECT_EQ(s.name(), k);
  }
}

TEST(CommHookSpec, PowerSgdRank) {
  EXPECT_EQ(parse_comm_hook("powersgd").powersgd_rank, 1);
  EXPECT_EQ(parse_comm_hook("powersgd").name(), "powersgd:1");
  EXPECT_EQ(parse_comm_hook("powersgd:2").powersgd_rank, 2);
  EXPECT_EQ(parse_comm_hook("powersgd:2").name(), "powersgd:2");
  EXPECT_EQ(parse_comm_hook("powersgd:1024").powersgd_rank, 1024);
  EXPECT_EQ(parse_comm_hook("powersgd:007").name(), "powersgd:7");
  for (const char* bad : {"powersgd:0", "powersgd:1025", "powersgd:-1", "powersgd:+2", "powersgd:", "powersgd:1.5",
                          "powersgd:x", "powersgd:99999999999999999999", "powersgd: 2"}) {
    const auto msg = usage_error([&] { parse_comm_hook(bad); });
    EXPECT_THAT(msg, HasSubstr(std::string("'") + bad + "'")) << bad;
    EXPECT_THAT(msg, HasSubstr("1..1024")) << bad;
  }
}

TEST(CommHookSpec, TopKRatio) {
  EXPECT_DOUBLE_EQ(parse_comm_hook("topk:0.01").topk_ratio, 0.01);
  EXPECT_EQ(parse_comm_hook("topk:0.01").name(), "topk:0.01");
  EXPECT_EQ(parse_comm_hook("topk:1").name(), "topk:1");
  EXPECT_EQ(parse_comm_hook("topk:0.5").name(), "topk:0.5");
  EXPECT_EQ(parse_comm_hook("topk:1e-3").name(), "topk:0.001");
  EXPECT_EQ(parse_comm_hook("topk:.25").name(), "topk:0.25");
  for (const char* bad : {"topk", "topk:", "topk:0", "topk:-0.1", "topk:1.5", "topk:nan", "topk:inf", "topk:0.1x",
                          "topk:x", "topk: 0.1"}) {
    const auto msg = usage_error([&] { parse_comm_hook(bad); });
    EXPECT_THAT(msg, HasSubstr(std::string("'") + bad + "'")) << bad;
    EXPECT_THAT(msg, HasSubstr("(0, 1]")) << bad;
  }
}

TEST(CommHookSpec, UnknownNamesTheAcceptedForms) {
  for (const char* bad : {"", "fp32", "FP16", "fp16:2", "none:1", "hierarchical:2", "allreduce ", "power", "top-k"}) {
    EXPECT_EQ(usage_error([&] { parse_comm_hook(bad); }),
              std::string("--comm-hook '") + bad +
                  "' is unknown; use none, allreduce, fp16, bf16, powersgd[:RANK], hierarchical or topk:RATIO")
        << bad;
  }
}

}  // namespace
}  // namespace ddpbench
