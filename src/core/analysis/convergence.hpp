// Time-to-loss bookkeeping without torch: the training target, the bounded loss curve, and
// the dataset's published baselines (benchmark/baselines.json) the reached accuracy is
// printed next to. docs/METHODOLOGY.md "Real data and time-to-loss".
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/result/result.hpp"

namespace ddpbench {

/// Time-to-loss rows of one result file, model and dataset, by world size (`report`;
/// core/render/report_convergence.hpp builds them).
struct ConvergenceGroup {
  std::string source;  ///< the file
  std::string device;  ///< its device_type
  std::string model, dataset;
  std::vector<BenchResult> rows;  ///< with a non-empty convergence object, ascending world size
};

/// Most points of the per-iteration loss curve kept in a row (convergence.loss).
inline constexpr size_t kMaxLossPoints = 2000;

/// What a time-to-loss run trains towards, evaluated on the test split after every epoch.
struct ConvergenceTarget {
  std::string metric = "none";  ///< "test_accuracy" (>= value), "test_loss" (<= value, nats) or "none"
  double value = 0;
};

/// The target of --target-accuracy / --target-loss (at most one is set); metric "none" without either.
ConvergenceTarget make_target(const std::optional<double>& target_loss, const std::optional<double>& target_accuracy);

/// True when `t` is met by an epoch's test loss (mean cross-entropy, nats) and test accuracy
/// (fraction): accuracy >= value, or loss <= value; never for metric "none" or a NaN.
bool target_reached(const ConvergenceTarget& t, double test_loss, double test_accuracy);

/// Positions of the points kept from a series of `n`: every stride-th from 0 with
/// stride = ceil(n / max_points), plus the last (n - 1) when the stride skips it; so at most
/// max_points + 1 and all of them when n <= max_points. Empty for n == 0.
std::vector<size_t> subsample_positions(size_t n, size_t max_points = kMaxLossPoints);

/// The baselines file shipped with ddpbench: $DDPBENCH_BASELINES when set, else baselines.json
/// in ddpbench's data folder (core/util/install_dirs data_dir: PREFIX/share/ddpbench installed,
/// build/share/ddpbench in the build tree); "" when none exists. `exe_path` is the running
/// binary (/proc/self/exe).
std::string find_baselines_file(const std::string& exe_path);

/// Reads a baselines file ({"dataset", "source", "note", "baselines": [{"classifier",
/// "preprocessing", "test_accuracy", ...}]}). Throws UsageError naming the file when it cannot
/// be read or lacks a "baselines" array.
nlohmann::json load_baselines(const std::string& path);

/// The published baselines to quote next to `accuracy` reached by `model`: entries whose
/// classifier names the model (case and punctuation ignored: "resnet18" matches "ResNet18"),
/// the nearest below and the nearest above `accuracy`, and the best; each once, in
/// descending accuracy. Entries without a numeric test_accuracy are skipped.
nlohmann::json nearby_baselines(const nlohmann::json& file, double accuracy, const std::string& model);

/// One line per entry of nearby_baselines: "  published: ResNet18 0.949 (Normalization, ...; Kyriakos Efthymiadis)".
std::vector<std::string> baseline_lines(const nlohmann::json& entries);

}  // namespace ddpbench
