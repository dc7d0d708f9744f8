// libFuzzer target: the result-file reader and everything `report`, `diff` and
// `check` then compute from what it accepts. Any input must end in a parsed file or a
// UsageError (bad input), never in a crash, a hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/analysis/check.hpp"
#include "core/analysis/diff.hpp"
#include "core/render/report_tables.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"

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
    for (auto format : {TableFormat::text, TableFormat::markdown, TableFormat::csv, TableFormat::json})
      (void)render_report(r, format);
  } catch (const UsageError&) {
  }
  try {
    const DiffReport d = diff_results(f, f);
    (void)render_diff_text(d);
    (void)diff_json(d).dump();
  } catch (const UsageError&) {  // e.g. a file without rows: nothing to compare
  }
  int skipped = 0;
  ReferenceEntry ref;
  ref.device = "*";
  ref.model = f.results.empty() ? "m" : f.results.front().model;
  if (!f.results.empty()) {
    ref.batch_per_rank = f.results.front().batch_per_rank;
    ref.image_size = f.results.front().image_size;
  }
  ref.setup.precision = "fp32";
  ref.metric = "weak_scaling_efficiency";
  ref.value = 1;
  ref.lower = -0.5;
  (void)check_against(f, {ref}, skipped);
  return 0;
}
