// libFuzzer target: the result-file reader and everything `report`, `diff` and
// `check` then compute from what it accepts. Any input must end in a parsed file or a
// UsageError (bad input), never in a crash, a hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/check.hpp"
#include "core/diff.hpp"
#include "core/errors.hpp"
#include "core/report.hpp"
#include "core/result.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ddpbench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  ResultFile f;
  try {
    f = parse_result(text, "fuzz");
  } catch (const UsageError&) {
    return 0;
  }
  try {
    ReportOptions opts;
    opts.gpu_hour_usd = 1.0;
    const Report r = build_report({{"a", f}, {"b", f}}, opts);
    (void)render_text(r);
    (void)render_markdown(r);
    (void)render_csv(r);
    (void)report_json(r).dump();
  } catch (const UsageError&) {
  }
  (void)render_diff_text(diff_results(f, f));
  int skipped = 0;
  ReferenceEntry ref;
  ref.gpu = "*";
  ref.model = f.results.empty() ? "m" : f.results.front().model;
  ref.metric = "weak_scaling_efficiency";
  ref.value = 1;
  (void)check_against(f, {ref}, skipped);
  return 0;
}
