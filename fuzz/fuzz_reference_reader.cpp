// libFuzzer target: the reference-file reader of `ddpbench check` and of `report --targets`,
// and the check, its table and the report's summary on what it accepts. Any input must end in parsed entries (each
// within the bounds parse_reference documents) or a UsageError, never in a crash, a hang or another exception.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/analysis/check.hpp"
#include "core/analysis/report_analysis.hpp"
#include "core/render/report_tables.hpp"
#include "core/result/result.hpp"
#include "core/util/errors.hpp"

namespace {

using namespace ddpbench;

void require(bool ok) {
  if (!ok) std::abort();
}

// A small CPU result with one no-DDP and two DDP rows, for check_against to match entries to.
const char* const kResult = R"({"schema_version": "1.1.0",
  "environment": {"device_type": "CPU", "backend": "gloo", "world_size": 2},
  "config": {"image_size": 64, "precision": "fp32", "scaling": "weak"},
  "results": [
    {"model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 1, "ddp": false, "ranks": [],
     "summary": {"n": 20, "p50_s": 0.15, "p75_s": 0.16, "p90_s": 0.18, "p95_s": 0.18, "mean_s": 0.15,
                 "ci95_s": 0.006, "ex_per_s_per_gpu": 107, "ex_per_s_total": 107}},
    {"model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 1, "ddp": true, "ranks": [],
     "summary": {"n": 20, "p50_s": 0.19, "p75_s": 0.2, "p90_s": 0.2, "p95_s": 0.2, "mean_s": 0.19,
                 "ci95_s": 0.003, "ex_per_s_per_gpu": 83, "ex_per_s_total": 83}},
    {"model": "resnet18", "batch_per_rank": 16, "image_size": 64, "world_size": 2, "ddp": true, "ranks": [],
     "summary": {"n": 20, "p50_s": 0.24, "p75_s": 0.25, "p90_s": 0.26, "p95_s": 0.27, "mean_s": 0.24,
                 "ci95_s": 0.007, "ex_per_s_per_gpu": 67, "ex_per_s_total": 134}}]})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ResultFile result = parse_result(kResult, "fuzz result");
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<ReferenceEntry> refs;
  try {
    refs = parse_reference(text, "fuzz");
  } catch (const UsageError&) {
    return 0;
  }
  for (const auto& r : refs) {
    require(r.world_size >= 1 && r.batch_per_rank >= 1 && r.image_size >= 32);
    require(std::isfinite(r.value) && r.value > 0);
    require(!r.lower || (*r.lower >= -1 && *r.lower <= 0));
    require(!r.upper || (std::isfinite(*r.upper) && *r.upper >= 0));
    require(r.lower || r.upper);
  }
  int skipped = 0;
  const auto rows = check_against(result, refs, skipped);
  require(rows.size() + static_cast<size_t>(skipped) == refs.size());
  (void)render_check_text(rows, device_type(result), skipped);
  // The same entries as `report --targets`: pinned targets of the summary.
  try {
    ReportOptions opts;
    opts.targets.pinned = refs;
    opts.targets.pinned_source = "fuzz";
    const Report r = build_report({{"a", result}}, opts);
    for (auto format : {TableFormat::text, TableFormat::markdown, TableFormat::json}) (void)render_report(r, format);
  } catch (const UsageError&) {
  }
  return 0;
}
