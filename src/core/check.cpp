#include "core/check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/errors.hpp"
#include "core/json_util.hpp"
#include "core/report.hpp"
#include "core/text_table.hpp"

namespace ddpbench {

const std::vector<std::string>& check_metrics() {
  static const std::vector<std::string> m = {"ex_per_s_per_gpu", "ex_per_s_total", "p50_s", "p95_s",
                                             "weak_scaling_efficiency"};
  return m;
}

std::vector<ReferenceEntry> parse_reference(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: not valid JSON (byte {}); see docs/reference/example.json", source, e.byte));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    throw UsageError(fmt::format("{}: not valid JSON ({}); see docs/reference/example.json", source,
                                 first_line(e.what())));
  }
  if (!j.is_object() || !j.contains("references") || !j["references"].is_array())
    throw UsageError(fmt::format("{}: no \"references\" list; see docs/reference/example.json", source));
  std::vector<ReferenceEntry> out;
  size_t i = 0;
  for (const auto& e : j["references"]) {
    const std::string where = fmt::format("{}: references[{}]", source, i++);
    ReferenceEntry r;
    try {
      r.gpu = e.at("gpu").get<std::string>();
      r.model = e.at("model").get<std::string>();
      r.precision = e.value("precision", std::string("fp32"));
      r.world_size = json_int<int>(e.at("world_size"), "world_size", 1);
      r.metric = e.at("metric").get<std::string>();
      r.value = e.at("value").get<double>();
      if (e.contains("lower") && !e["lower"].is_null()) r.lower = e["lower"].get<double>();
      if (e.contains("upper") && !e["upper"].is_null()) r.upper = e["upper"].get<double>();
      r.unit = e.value("unit", std::string());
      // Optional fields: absent or null means "any".
      if (e.contains("batch_per_rank") && !e["batch_per_rank"].is_null())
        r.batch_per_rank = json_int(e["batch_per_rank"], "batch_per_rank", 1);
      if (e.contains("image_size") && !e["image_size"].is_null())
        r.image_size = json_int<int>(e["image_size"], "image_size", 1);
    } catch (const nlohmann::json::exception& ex) {
      throw UsageError(fmt::format("{}: {}; each entry needs gpu, model, world_size, metric, value", where,
                                   first_line(ex.what())));
    } catch (const std::invalid_argument& ex) {
      throw UsageError(fmt::format("{}: {}; each entry needs gpu, model, world_size, metric, value", where, ex.what()));
    }
    if (std::find(check_metrics().begin(), check_metrics().end(), r.metric) == check_metrics().end())
      throw UsageError(fmt::format("{}: unknown metric '{}'; use one of {}", where, r.metric,
                                   fmt::join(check_metrics(), ", ")));
    if (!(r.value > 0) || !std::isfinite(r.value))
      throw UsageError(fmt::format("{}: value {} must be a positive number", where, r.value));
    if (r.lower && !(*r.lower <= 0 && *r.lower >= -1))
      throw UsageError(fmt::format("{}: lower {} must be a fraction in [-1, 0] (e.g. -0.05 for 5% below)", where, *r.lower));
    if (r.upper && !(*r.upper >= 0))
      throw UsageError(fmt::format("{}: upper {} must be a fraction >= 0 (e.g. 0.1 for 10% above)", where, *r.upper));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<CheckRow> check_against(const ResultFile& result, const std::vector<ReferenceEntry>& refs, int& skipped) {
  const std::string device = device_type(result);
  skipped = 0;
  std::optional<Report> report;  // for the efficiency metric, built on first use
  std::vector<CheckRow> out;
  for (const auto& ref : refs) {
    if (ref.gpu != "*" && ref.gpu != device) {
      ++skipped;
      continue;
    }
    CheckRow row;
    row.ref = ref;
    if (ref.lower) row.lo = ref.value * (1 + *ref.lower);
    if (ref.upper) row.hi = ref.value * (1 + *ref.upper);
    if (ref.metric == "weak_scaling_efficiency") {
      if (!report) {
        try {
          report = build_report({{"result", result}}, ReportOptions{});
        } catch (const UsageError&) {
          report = Report{};
        }
      }
      for (const auto& t : report->weak)
        if (t.model == ref.model && t.base_precision == ref.precision &&
            (!ref.batch_per_rank || *ref.batch_per_rank == t.batch_per_rank) &&
            (!ref.image_size || *ref.image_size == t.image_size))
          for (const auto& w : t.rows)
            if (w.world_size == ref.world_size) row.measured = w.efficiency;
    } else {
      for (const auto& r : result.results) {
        if (!r.ddp || r.model != ref.model || r.precision != ref.precision || r.world_size != ref.world_size ||
            r.scaling != "weak" || (ref.batch_per_rank && *ref.batch_per_rank != r.batch_per_rank) ||
            (ref.image_size && *ref.image_size != r.image_size))
          continue;
        if (ref.metric == "ex_per_s_per_gpu") row.measured = r.summary.ex_per_s_per_gpu;
        else if (ref.metric == "ex_per_s_total") row.measured = r.summary.ex_per_s_total;
        else if (ref.metric == "p50_s") row.measured = r.summary.p50_s;
        else if (ref.metric == "p95_s") row.measured = r.summary.p95_s;
      }
    }
    const double m = row.measured.value_or(0.0);
    const bool in_range = (!row.lo || *row.lo <= m) && (!row.hi || m <= *row.hi) && std::isfinite(m);
    if (!row.measured) row.status = "MISSING";
    else row.status = in_range ? "PASS" : "FAIL";  // NaN or inf fails
    out.push_back(std::move(row));
  }
  return out;
}

std::string render_check_text(const std::vector<CheckRow>& rows, const std::string& device, int skipped) {
  TextTable t;
  t.title = fmt::format("Reference check on {}", device);
  t.header = {"model", "precision", "GPUs", "metric", "measured", "reference", "allowed range", "status"};
  int pass = 0, fail = 0, missing = 0;
  for (const auto& r : rows) {
    const std::string unit = r.ref.unit.empty() ? "" : " " + r.ref.unit;
    t.rows.push_back({r.ref.model, r.ref.precision, std::to_string(r.ref.world_size), r.ref.metric,
                      r.measured ? fmt::format("{:.4g}", *r.measured) : "-", fmt::format("{:.4g}{}", r.ref.value, unit),
                      fmt::format("[{}, {}]", r.lo ? fmt::format("{:.4g}", *r.lo) : "-inf",
                                  r.hi ? fmt::format("{:.4g}", *r.hi) : "+inf"),
                      r.status});
    if (r.status == "PASS") ++pass;
    else if (r.status == "FAIL") ++fail;
    else ++missing;
  }
  t.notes.push_back(fmt::format("{} passed, {} failed, {} missing; {} reference entr{} for other devices skipped", pass,
                                fail, missing, skipped, skipped == 1 ? "y" : "ies"));
  if (rows.empty())
    t.notes.push_back(fmt::format("FAIL: no reference entry is for {}; nothing was checked (device names must match "
                                  "exactly, as `ddpbench report` prints them)",
                                  device));
  return render_text(t);
}

}  // namespace ddpbench
