#include "core/analysis/convergence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/result/result.hpp"
#include "core/util/errors.hpp"
#include "core/util/install_dirs.hpp"
#include "core/util/json_reader.hpp"

namespace ddpbench {

ConvergenceTarget make_target(const std::optional<double>& target_loss, const std::optional<double>& target_accuracy) {
  if (target_accuracy) return {"test_accuracy", *target_accuracy};
  if (target_loss) return {"test_loss", *target_loss};
  return {};
}

bool target_reached(const ConvergenceTarget& t, double test_loss, double test_accuracy) {
  if (t.metric == "test_accuracy") return std::isfinite(test_accuracy) && test_accuracy >= t.value;
  if (t.metric == "test_loss") return std::isfinite(test_loss) && test_loss <= t.value;
  return false;
}

std::vector<size_t> subsample_positions(size_t n, size_t max_points) {
  std::vector<size_t> out;
  if (n == 0) return out;
  const size_t stride = std::max<size_t>(1, (n + max_points - 1) / std::max<size_t>(1, max_points));
  for (size_t i = 0; i < n; i += stride) out.push_back(i);
  if (out.back() != n - 1) out.push_back(n - 1);
  return out;
}

std::string find_baselines_file(const std::string& exe_path) {
  namespace fs = std::filesystem;
  if (const char* e = std::getenv("DDPBENCH_BASELINES"); e && *e) return e;
  const std::string dir = data_dir(exe_path);
  std::error_code ec;
  if (dir.empty() || !fs::is_regular_file(fs::path(dir) / "baselines.json", ec)) return "";
  return (fs::path(dir) / "baselines.json").string();
}

nlohmann::json load_baselines(const std::string& path) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("baselines file: {} (unset DDPBENCH_BASELINES or fix the path)", e.what()));
  }
  const nlohmann::json j = parse_json_bounded(text, "baselines file " + path,
                                              "restore benchmark/baselines.json or unset DDPBENCH_BASELINES");
  if (!j.is_object() || !j.contains("baselines") || !j["baselines"].is_array())
    throw UsageError(
        fmt::format("baselines file {} has no \"baselines\" array; restore benchmark/baselines.json", path));
  return j;
}

namespace {
std::string squash(const std::string& s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

nlohmann::json nearby_baselines(const nlohmann::json& file, double accuracy, const std::string& model) {
  std::vector<const nlohmann::json*> all;
  if (file.is_object() && file.contains("baselines") && file["baselines"].is_array())
    for (const auto& b : file["baselines"])
      if (b.is_object() && b.contains("test_accuracy") && b["test_accuracy"].is_number()) all.push_back(&b);
  std::stable_sort(all.begin(), all.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
    return (*a)["test_accuracy"].get<double>() > (*b)["test_accuracy"].get<double>();
  });
  std::vector<bool> keep(all.size(), false);
  const std::string m = squash(model);
  for (size_t i = 0; i < all.size(); ++i) {
    const double a = (*all[i])["test_accuracy"].get<double>();
    if (!m.empty() && squash((*all[i]).value("classifier", std::string())).find(m) != std::string::npos) keep[i] = true;
    if (i == 0) keep[i] = true;  // the best
    const bool above = a > accuracy,
               next_below = i + 1 < all.size() && (*all[i + 1])["test_accuracy"].get<double>() <= accuracy;
    if (above && (next_below || i + 1 == all.size())) keep[i] = true;                                   // nearest above
    if (!above && (i == 0 || (*all[i - 1])["test_accuracy"].get<double>() > accuracy)) keep[i] = true;  // nearest below
  }
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < all.size(); ++i)
    if (keep[i]) out.push_back(*all[i]);
  return out;
}

std::vector<std::string> baseline_lines(const nlohmann::json& entries) {
  std::vector<std::string> out;
  if (!entries.is_array()) return out;
  for (const auto& b : entries)
    out.push_back(fmt::format("  published: {} {:.4g} ({}; {})", b.value("classifier", std::string("?")),
                              b.value("test_accuracy", 0.0), b.value("preprocessing", std::string("-")),
                              b.value("submitter", std::string("-"))));
  return out;
}

}  // namespace ddpbench
