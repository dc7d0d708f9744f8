// Helpers `ddpbench report`'s analysis (core/analysis/report_analysis*.cpp; defined in
// report_analysis_cluster.cpp) and its tables (core/render/report_tables*.cpp) share: internal to
// `ddpbench report`, not part of its interface. Torch-free.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>

#include "core/result/row_sections.hpp"

namespace ddpbench::report_detail {

/// A finite number at a path of object keys; nullopt where a step is missing or the value
/// is not a finite number.
std::optional<double> num_at(const nlohmann::json& j, std::initializer_list<const char*> path);

/// An integer field for display: the value rounded, -1 when absent or not a number.
long long int_at(const nlohmann::json& j, const char* key);

/// True when a rank's telemetry summary says a GPU was sampled (gpu.available).
bool gpu_available(const TelemetrySummary& sampled);

/// "resnet18, batch 16 per rank, 2 ranks" of a straggler entry (result file "stragglers").
std::string straggler_what(const nlohmann::json& entry);

/// "find-max-bs (resnet18, fp32, cpu, 64x64): the largest batch per rank that trained is 48;
/// recommended 43 (10% margin)" of a result file's max_batch object.
std::string max_batch_sentence(const nlohmann::json& max_batch);

}  // namespace ddpbench::report_detail
