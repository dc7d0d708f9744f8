// One rank of the communication-hook tests (tests/engine/test_comm_hooks.cpp starts N of
// them over Gloo on 127.0.0.1). Every mode runs ddpbench's DistributedDataParallel with a
// hook from engine/dist/comm_hooks.hpp registered on its c10d::Reducer.
// Usage:
//   hook_worker grads OUT HOOKS HOSTS     per hook: DDP gradients vs the mean of the per-rank
//                                         gradients computed locally (an MLP, 4 buckets); with
//                                         4+ ranks, ranks 0 and 1 first build a hierarchical
//                                         hook on a 2-rank sub-group of their own
//   hook_worker converge OUT VARIANTS     per variant: least squares trained with SGD, loss
//                                         before and after (data split across the ranks)
//   hook_worker bytes OUT HOOKS [MODEL]   per hook: wire bytes per step of a model (resnet18)
// HOOKS: comma list of --comm-hook items; HOSTS: comma list of fake host names, one per
// rank (hierarchical), or "-" for one host. VARIANTS: HOOK or HOOK/noef (error feedback off).
// Rank 0 writes OUT (JSON).
#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/linear.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include <ATen/Parallel.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/config/comm_hook_spec.hpp"
#include "core/launch/launch_env.hpp"
#include "core/util/errors.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/comm_hooks.hpp"
#include "engine/dist/ddp.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/models/registry.hpp"
#include "engine/train/workload.hpp"

using namespace ddpbench;
using nlohmann::json;

namespace {

const auto kTimeout = std::chrono::milliseconds(60000);

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

/// Fully connected layers with ReLU between them; biases on.
class Mlp : public Model {
 public:
  explicit Mlp(const std::vector<int64_t>& widths) {
    for (size_t i = 0; i + 1 < widths.size(); ++i)
      layers_.push_back(register_module("fc" + std::to_string(i), torch::nn::Linear(widths[i], widths[i + 1])));
  }
  torch::Tensor forward_features(torch::Tensor x) override {
    for (size_t i = 0; i + 1 < layers_.size(); ++i) x = torch::relu(layers_[i]->forward(x));
    return x;
  }
  torch::Tensor classify(torch::Tensor f) override { return layers_.back()->forward(f); }

 private:
  std::vector<torch::nn::Linear> layers_;
};

/// The grads mode's network: 32 -> 64 -> 64 -> 64 -> 10 (12,362 parameters). With the caps
/// below the Reducer's rebuilt buckets are {fc3}, {fc2}, {fc1}, {fc0}.
const std::vector<int64_t> kMlpWidths = {32, 64, 64, 64, 10};
constexpr int64_t kMlpBatch = 16;

struct Ranks {
  LaunchInfo li;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
};

double global_max(const Ranks& r, double v) {
  return allreduce_values(r.pg, {v}, c10d::ReduceOp::MAX, at::kCPU, kTimeout)[0];
}
double global_mean(const Ranks& r, double v) {
  return allreduce_values(r.pg, {v}, c10d::ReduceOp::SUM, at::kCPU, kTimeout)[0] / r.li.world_size;
}

void copy_params(Model& from, Model& to) {
  torch::NoGradGuard ng;
  auto src = from.parameters(), dst = to.parameters();
  for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

std::shared_ptr<CommHookStats> attach_hook(DistributedDataParallel& ddp, const CommHookSpec& spec, const Ranks& r,
                                           const std::vector<std::string>& hosts, const std::string& name) {
  auto stats = std::make_shared<CommHookStats>();
  CommHookContext ctx;
  ctx.pg = r.pg;
  ctx.store = r.store;
  ctx.hosts = hosts;
  ctx.timeout = kTimeout;
  ctx.group_name = name;
  auto hook = make_comm_hook(spec, ctx, stats);
  if (hook) ddp.register_comm_hook(std::move(hook), spec.name());
  return stats;
}

void sgd_step(Model& m, double lr) {
  torch::NoGradGuard ng;
  for (auto& p : m.parameters())
    if (p.grad().defined()) p.sub_(p.grad(), lr);
}

void zero_grad(Model& m) {
  for (auto& p : m.parameters())
    if (p.grad().defined()) p.grad().zero_();
}

// ---------------------------------------------------------------- grads
json run_grads(const Ranks& r, const std::string& hook, const std::vector<std::string>& hosts) {
  const int world = r.li.world_size;
  const CommHookSpec spec = parse_comm_hook(hook);
  torch::manual_seed(11);
  auto model = std::make_shared<Mlp>(kMlpWidths);
  DdpOptions opts;
  opts.bucket_cap_bytes = 8 * 1024;
  opts.first_bucket_cap_bytes = 1024;
  DistributedDataParallel ddp(model, r.pg, opts, at::kCPU);
  auto stats = attach_hook(ddp, spec, r, hosts, "grads-" + hook);

  auto batch = [](int rank) {
    auto gen = at::detail::createCPUGenerator(5000 + rank);
    return std::make_pair(at::randn({kMlpBatch, kMlpWidths.front()}, gen),
                          at::randn({kMlpBatch, kMlpWidths.back()}, gen));
  };
  json out = {{"hook", spec.name()}, {"note", stats->note}};
  auto ref_model = std::make_shared<Mlp>(kMlpWidths);
  for (int it = 0; it < 4; ++it) {
    // Oracle: each rank's gradient computed locally on a copy, no communication.
    copy_params(*model, *ref_model);
    std::vector<at::Tensor> mean, mean_abs;
    for (int k = 0; k < world; ++k) {
      zero_grad(*ref_model);
      auto [x, y] = batch(k);
      torch::nn::functional::mse_loss(ref_model->forward(x), y).backward();
      auto ps = ref_model->parameters();
      for (size_t i = 0; i < ps.size(); ++i) {
        if (k == 0) {
          mean.push_back(ps[i].grad().clone() / world);
          mean_abs.push_back(ps[i].grad().abs() / world);
        } else {
          mean[i] += ps[i].grad() / world;
          mean_abs[i] += ps[i].grad().abs() / world;
        }
      }
    }
    zero_grad(*model);
    stats->wire_bytes = 0;
    stats->buckets = 0;
    auto [x, y] = batch(r.li.rank);
    torch::nn::functional::mse_loss(ddp.forward(x), y).backward();
    const long long wire = stats->wire_bytes, buckets = stats->buckets;

    double max_diff = 0, max_ref = 0, fp16_ratio = 0, bf16_ratio = 0;
    auto ps = model->parameters();
    for (size_t i = 0; i < ps.size(); ++i) {
      auto diff = (ps[i].grad() - mean[i]).abs();
      max_diff = std::max(max_diff, diff.max().item<double>());
      max_ref = std::max(max_ref, mean[i].abs().max().item<double>());
      // Per element, the standard model of floating point with underflow,
      // fl(x) = x(1 + d) + e, |d| <= u, |e| <= eta: each rank's term g_r is cast (error
      // u|g_r|/n after the division) and divided by n (u|g_r|/n), the n terms are summed
      // with n-1 roundings of partial sums no larger than A = mean_r |g_r|:
      //   |g_hook - g_mean| <= (n+1) u A + (3n-1) eta.
      // fp16: u = 2^-11, eta = 2^-25 (half the spacing of its subnormals); bf16: u = 2^-8,
      // eta negligible (float32's exponent range).
      const double n = world;
      const auto fp16_bound = (n + 1) * std::ldexp(1.0, -11) * mean_abs[i] + (3 * n - 1) * std::ldexp(1.0, -25);
      const auto bf16_bound = (n + 1) * std::ldexp(1.0, -8) * mean_abs[i] + 1e-30;
      fp16_ratio = std::max(fp16_ratio, (diff / fp16_bound).max().item<double>());
      bf16_ratio = std::max(bf16_ratio, (diff / bf16_bound).max().item<double>());
    }
    const auto spread = grad_spread_across_ranks(model->parameters(), r.pg, kTimeout);
    json row = {{"max_abs_diff", global_max(r, max_diff)},
                {"rel_diff", global_max(r, max_diff) / std::max(max_ref, 1e-30)},
                {"fp16_bound_ratio", global_max(r, fp16_ratio)},
                {"bf16_bound_ratio", global_max(r, bf16_ratio)},
                {"spread_across_ranks", spread.max_abs_diff},
                {"wire_bytes", wire},
                {"buckets", buckets}};
    out["iterations"].push_back(row);
    sgd_step(*model, 0.05);
  }
  out["bucket_sizes_bytes"] = ddp.bucket_sizes_bytes();
  for (const auto& p : model->parameters()) out["param_shapes"].push_back(p.sizes().vec());
  return out;
}

// ---------------------------------------------------------------- converge
/// Least squares: y = W* x + b* (W* 32 x 64, no noise), each rank holding its own 128
/// samples; a linear model from a seeded start, full-batch SGD for kSteps steps.
constexpr int64_t kIn = 64, kOut = 32, kSamples = 128, kSteps = 120;
constexpr double kLr = 0.5;

json run_converge(const Ranks& r, const std::string& variant) {
  const auto slash = variant.find('/');
  CommHookSpec spec = parse_comm_hook(variant.substr(0, slash));
  if (slash != std::string::npos) {
    if (variant.substr(slash + 1) != "noef") throw UsageError("variant suffix must be /noef: " + variant);
    spec.error_feedback = false;
  }
  auto truth = at::detail::createCPUGenerator(77);
  const auto w_star = at::randn({kOut, kIn}, truth) / std::sqrt(static_cast<double>(kIn));
  const auto b_star = at::randn({kOut}, truth);
  auto data = at::detail::createCPUGenerator(900 + r.li.rank);
  const auto x = at::randn({kSamples, kIn}, data);
  const auto y = at::matmul(x, w_star.t()) + b_star;

  torch::manual_seed(3);
  auto model = std::make_shared<Mlp>(std::vector<int64_t>{kIn, kOut});
  DistributedDataParallel ddp(model, r.pg, DdpOptions{}, at::kCPU);
  auto stats = attach_hook(ddp, spec, r, {}, "converge-" + variant);

  auto global_loss = [&] {
    torch::NoGradGuard ng;
    return global_mean(r, torch::nn::functional::mse_loss(model->forward(x), y).item<double>());
  };
  json out = {{"variant", variant}, {"hook", spec.name()}, {"error_feedback", spec.error_feedback}};
  out["loss_initial"] = global_loss();
  long long wire = 0;
  for (int step = 0; step < kSteps; ++step) {
    zero_grad(*model);
    torch::nn::functional::mse_loss(ddp.forward(x), y).backward();
    sgd_step(*model, kLr);
    if (step == kSteps - 1) wire = stats->wire_bytes;
    if ((step + 1) % 20 == 0) out["loss_curve"].push_back(global_loss());
  }
  out["loss_final"] = global_loss();
  out["wire_bytes_total"] = wire;
  const auto spread = grad_spread_across_ranks(model->parameters(), r.pg, kTimeout);
  out["spread_across_ranks"] = spread.max_abs_diff;
  return out;
}

// ---------------------------------------------------------------- bytes
json run_bytes(const Ranks& r, const std::string& hook, const std::string& model_name) {
  const CommHookSpec spec = parse_comm_hook(hook);
  torch::manual_seed(1);
  ModelPtr model = make_model(model_name, 10);
  DistributedDataParallel ddp(model, r.pg, DdpOptions{}, at::kCPU);
  auto stats = attach_hook(ddp, spec, r, std::vector<std::string>(r.li.world_size, "localhost"), "bytes-" + hook);
  auto batch = make_synthetic_batch(2, 32, 10, at::kCPU, 40 + r.li.rank);
  json out = {{"hook", spec.name()}, {"note", stats->note}};
  long long grad_bytes = 0;
  for (const auto& p : ddp.parameters()) grad_bytes += p.numel() * p.element_size();
  out["gradient_bytes"] = grad_bytes;
  for (int it = 0; it < 4; ++it) {
    zero_grad(*model);
    stats->wire_bytes = 0;
    stats->buckets = 0;
    const auto t0 = std::chrono::steady_clock::now();
    torch::nn::functional::cross_entropy(ddp.forward(batch.input), batch.target).backward();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out["wire_bytes"].push_back(stats->wire_bytes.load());
    out["buckets"].push_back(stats->buckets.load());
    out["step_s"].push_back(global_max(r, s));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: hook_worker grads|converge|bytes OUT LIST [HOSTS|MODEL]\n";
    return 2;
  }
  const std::string mode = argv[1], out_path = argv[2];
  const auto items = split(argv[3]);
  try {
    at::set_num_threads(1);
    Ranks r;
    r.li = detect_launch(current_env());
    r.store = connect_store(r.li, kTimeout);
    r.pg = make_process_group(BackendKind::kGloo, c10::make_intrusive<c10d::PrefixStore>("w/", r.store), r.li.rank,
                              r.li.world_size, at::kCPU, kTimeout);
    r.store = c10::make_intrusive<c10d::PrefixStore>("hooks/", r.store);
    std::vector<std::string> hosts(r.li.world_size, "localhost");
    if (mode == "grads" && argc > 4 && std::string(argv[4]) != "-") hosts = split(argv[4]);

    if (mode == "grads" && r.li.world_size >= 4) {
      // Ranks 0 and 1 alone first build (and drop) a hierarchical hook on a sub-group of
      // their own, as a sweep does for a smaller world size: the hooks built below must
      // still agree on their sub-groups' store keys.
      if (r.li.rank < 2) {
        auto sub = make_process_group(BackendKind::kGloo, c10::make_intrusive<c10d::PrefixStore>("sub/", r.store),
                                      r.li.rank, 2, at::kCPU, kTimeout);
        CommHookContext ctx;
        ctx.pg = sub;
        ctx.store = r.store;
        ctx.hosts = {"x", "y"};
        ctx.timeout = kTimeout;
        make_comm_hook(parse_comm_hook("hierarchical"), ctx, nullptr).reset();
      }
      barrier(r.pg, at::kCPU, kTimeout);
    }
    json result = json::object();
    result["world_size"] = r.li.world_size;
    for (const auto& item : items) {
      if (mode == "grads") result["runs"][item] = run_grads(r, item, hosts);
      else if (mode == "converge") result["runs"][item] = run_converge(r, item);
      else if (mode == "bytes") result["runs"][item] = run_bytes(r, item, argc > 4 ? argv[4] : "resnet18");
      else throw UsageError("unknown mode " + mode);
    }
    if (r.li.rank == 0) std::ofstream(out_path) << result.dump(2) << "\n";
    barrier(r.pg, at::kCPU, kTimeout);
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "hook_worker: error: " << first_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hook_worker: " << first_line(e.what()) << "\n";
    return 1;
  }
}
