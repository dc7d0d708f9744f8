// `ddpbench models`: the model zoo with parameters, trainable parameters and FLOPs.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "core/result/bench_table.hpp"
#include "core/util/errors.hpp"
#include "engine/models/flops.hpp"
#include "engine/models/registry.hpp"

namespace ddpbench::cli {
namespace {
// The largest --image-size `models` counts at: the count is a forward pass of every model at
// that size (convolutions and linear layers are not computed, the layers between them are),
// so its time and memory grow with the pixel count: at 4096 VGG-16's first activation alone
// is 4 GiB, at 1024 a quarter of one.
constexpr int kMaxCountedImageSize = 1024;

/// One line of `models`: the counts, or why the model cannot take the size.
struct ModelCount {
  std::string unavailable;  ///< non-empty: check_model_input's reason
  int64_t params = 0, trainable = 0;
  double gmacs = 0;  ///< forward multiply-adds per example, 1e9
};

/// Counts every model of `names` on up to `workers` threads, one model per thread at a time,
/// and hands each count to `emit` in the order of `names` as soon as it and all before it
/// are done. Building a model is most of the time (libtorch's layers fill their weights as
/// they are made; one fill runs on one core), so the models are built side by side. The first
/// exception a count throws is rethrown here, after the threads have ended.
template <class Count, class Emit>
void count_in_order(const std::vector<std::string>& names, unsigned workers, Count count, Emit emit) {
  std::vector<std::optional<ModelCount>> done(names.size());
  std::exception_ptr failure;
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (size_t i; !stop && (i = next++) < names.size();) {
      std::optional<ModelCount> c;
      std::exception_ptr e;
      try {
        c = count(names[i]);
      } catch (...) {
        e = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      if (e) {
        if (!failure) failure = e;
        stop = true;
      } else {
        done[i] = std::move(c);
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, workers); ++t) threads.emplace_back(work);
  for (size_t i = 0; i < names.size(); ++i) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done[i].has_value() || stop; });
    if (!done[i]) break;
    const ModelCount c = *done[i];
    lock.unlock();
    emit(names[i], c);
  }
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}
}  // namespace

Command add_models_command(CLI::App& parent) {
  struct Flags {
    std::string format = "table", head = "mlp4096";
    int classes = 1000, image = 224;
    bool freeze = false;
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand(
      "models", "List the models: parameters, trainable parameters, forward GMACs (multiply-adds) per example");
  app->footer("Exit codes: 0 listed; 2 bad input (one line names it; --image-size above 1024 included).");
  app->add_option("--format", f->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  app->add_option("--num-classes", f->classes, "Classifier width")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  app->add_option("--image-size", f->image, "Input side in pixels, for FLOPs (at most 1024)")
      ->check(CLI::Range(32, 4096))
      ->capture_default_str();
  app->add_flag("--freeze-backbone", f->freeze, "Count a frozen backbone behind the --head (trainable = head)");
  auto* head_opt = app->add_option("--head", f->head, "Head for --freeze-backbone")->capture_default_str();
  return {app, [f, head_opt] {
            if (head_opt->count() && !f->freeze)
              throw UsageError("--head is the head trained with --freeze-backbone; add --freeze-backbone");
            if (f->image > kMaxCountedImageSize)
              throw UsageError(fmt::format(
                  "--image-size {} is above {}, the largest size models counts at (a forward pass of every model "
                  "at that size); pass --image-size {} or less",
                  f->image, kMaxCountedImageSize, kMaxCountedImageSize));
            nlohmann::json out = nlohmann::json::array();
            if (f->format == "table")
              fmt::print(
                  "{:<18} {:>13} {:>13} {:>11}   (GMACs: multiply-adds per example, forward, at {}x{}; "
                  "torchvision's \"GFLOPS\")\n",
                  "model", "parameters", "trainable", "GMACs", f->image, f->image);
            const auto count = [&](const std::string& name) {
              ModelCount c;
              try {
                check_model_input(name, f->image);
              } catch (const UsageError& e) {  // e.g. a ViT at a size that is not a multiple of its patch
                c.unavailable = e.what();
                return c;
              }
              const flops::CountOnlyBuild count_only;  // counted, never trained: no torchvision init
              auto model = make_model(name, f->classes, f->image);
              if (f->freeze) freeze_backbone(*model, f->head, f->classes, f->image);
              c.params = count_parameters(*model);
              c.trainable = count_trainable_parameters(*model);
              c.gmacs = forward_macs(*model, f->image) / 1e9;
              return c;
            };
            const auto emit = [&](const std::string& name, const ModelCount& c) {
              if (!c.unavailable.empty()) {
                if (f->format == "table") fmt::print("{:<18} n/a: {}\n", name, c.unavailable);
                else out.push_back({{"name", name}, {"image_size", f->image}, {"unavailable", c.unavailable}});
              } else if (f->format == "table") {
                fmt::print("{:<18} {:>13} {:>13} {:>11.3f}\n", name, with_thousands(c.params),
                           with_thousands(c.trainable), c.gmacs);
              } else {
                out.push_back({{"name", name},
                               {"parameters", c.params},
                               {"trainable_parameters", c.trainable},
                               {"forward_gmacs", c.gmacs},
                               {"image_size", f->image}});
              }
              std::fflush(stdout);
            };
            // Two models side by side at most: each holds its weights while it is counted.
            count_in_order(model_names(), std::min(2u, std::thread::hardware_concurrency()), count, emit);
            if (f->format == "json") fmt::print("{}\n", out.dump(2));
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
