// libFuzzer target: validate's plan reader (core/validate/plan, yaml-cpp underneath). Any input
// must end in a plan whose steps and targets are within the bounds parse_plan documents, or
// in a UsageError; never in a crash, a hang or another exception.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/util/errors.hpp"
#include "core/validate/plan.hpp"

namespace {

// A property that failed names its line before the abort libFuzzer reports.
#define require(ok)                                                         \
  do {                                                                      \
    if (!(ok)) {                                                            \
      std::fprintf(stderr, "fuzz_plan: property at line %d failed\n", __LINE__); \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

bool in(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ddpbench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Plan p;
  try {
    p = parse_plan(text, "fuzz.yaml");
  } catch (const UsageError&) {
    return 0;
  }
  require(!p.steps.empty() && p.steps.size() <= 99);
  const auto& kinds = plan_step_kinds();
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const PlanStep& s = p.steps[i];
    require(s.index == static_cast<int>(i) + 1);
    require(std::find(kinds.begin(), kinds.end(), s.kind) != kinds.end());
    for (const auto* opts : {&s.options, &s.cpu_options})
      for (const auto& o : *opts) {
        require(!o.values.empty());
        require(plan_reserved_options().count(o.key) == 0);
      }
    (void)s.fingerprint();
    (void)s.implied_args();
  }
  const PlanTargets& t = p.targets;
  require(!t.efficiency || in(*t.efficiency, 1e-300, 1));
  require(!t.exposed_comm || in(*t.exposed_comm, 0, 1));
  require(!t.busbw_gbs || in(*t.busbw_gbs, 1e-300, 1e6));
  require(!p.nproc_per_node || (*p.nproc_per_node >= 1 && *p.nproc_per_node <= 4096));
  return 0;
}
