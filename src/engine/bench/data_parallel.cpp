#include "engine/bench/data_parallel.hpp"

#ifdef DDPBENCH_WITH_CUDA
// CUDA builds only: these include CUDA's own headers (ATen/cuda/CUDAContext.h).
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/csrc/autograd/functions/comm.h>
#include <torch/csrc/cuda/comm.h>
#include <torch/nn/parallel/data_parallel.h>
#endif

#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/functional/loss.h>

#include <ATen/ops/cat.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "core/result/bench_table.hpp"
#include "core/result/row_finish.hpp"
#include "core/result/row_warnings.hpp"
#include "core/stats/stats.hpp"
#include "core/util/errors.hpp"
#include "engine/bench/sweep.hpp"
#include "engine/models/registry.hpp"
#include "engine/timing.hpp"
#include "engine/train/precision.hpp"

namespace ddpbench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// max |a - b| / max |b| in double (max |a - b| when b is all zero); NaN when either has one.
double relative_diff(const torch::Tensor& a, const torch::Tensor& b) {
  const auto x = a.detach().to(torch::kCPU, torch::kDouble);
  const auto y = b.detach().to(torch::kCPU, torch::kDouble);
  if (x.sizes() != y.sizes()) return NAN;
  if (x.numel() == 0) return 0;
  const double diff = (x - y).abs().max().item<double>();
  const double scale = y.abs().max().item<double>();
  return scale > 0 ? diff / scale : diff;
}

}  // namespace

// ---------------------------------------------------------------- ReplicableModel

ReplicableModel::ReplicableModel(ModelPtr model, Factory factory)
    : model_(register_module("model", std::move(model))), factory_(std::move(factory)) {}

torch::Tensor ReplicableModel::forward(torch::Tensor x) {
  std::optional<torch::NoGradGuard> no_grad;
  if (!grad_) no_grad.emplace();
  AutocastScope autocast(x.device(), precision_);
  return model_->forward(std::move(x));
}

std::shared_ptr<torch::nn::Module> ReplicableModel::clone(compat::ModuleCloneArg device) const {
  return replica(device ? *device : model_->parameters().front().device(), 0);
}

std::shared_ptr<ReplicableModel> ReplicableModel::replica(const c10::Device& device, int slot) const {
  torch::NoGradGuard no_grad;
  ModelPtr& copy = copies_[{device.str(), slot}];
  if (!copy) copy = factory_(device);
  const auto copy_values = [&](const auto& from, const auto& to, const char* what) {
    if (from.size() != to.size())
      throw std::logic_error(fmt::format("replica of the model has {} {}, the model {}", to.size(), what, from.size()));
    for (size_t i = 0; i < from.size(); ++i) {
      const auto& src = from[i];
      const auto& dst = to[i];
      if (src.key() != dst.key() || src.value().sizes() != dst.value().sizes())
        throw std::logic_error(
            fmt::format("replica's {} {} does not match the model's {}", what, dst.key(), src.key()));
      // A deep copy on `device` (also on the master's own device), strides preserved.
      torch::Tensor value = src.value().to(src.value().options().device(device), /*non_blocking=*/false,
                                           /*copy=*/true, c10::MemoryFormat::Preserve);
      torch::Tensor target = dst.value();
      target.set_data(value);
    }
  };
  copy_values(model_->named_parameters(true), copy->named_parameters(true), "parameters");
  copy_values(model_->named_buffers(true), copy->named_buffers(true), "buffers");
  copy->train(model_->is_training());
  auto out = std::make_shared<ReplicableModel>(copy, factory_);
  out->precision_ = precision_;
  out->grad_ = grad_;
  return out;
}

// ---------------------------------------------------------------- primitives

#ifdef DDPBENCH_WITH_CUDA
DpPrimitives libtorch_primitives() {
  DpPrimitives p;
  p.name = "libtorch";
  p.replicate = [](const std::shared_ptr<ReplicableModel>& m, const std::vector<c10::Device>& devices) {
    return torch::nn::parallel::replicate(m, devices);
  };
  p.scatter = [](const torch::Tensor& x, const std::vector<c10::Device>& devices) {
    std::vector<int64_t> indices;
    for (const auto& d : devices) indices.push_back(d.index());
    return torch::cuda::scatter(x, indices);  // equal chunks along dim 0
  };
  p.parallel_apply = [](ReplicaList& replicas, const std::vector<torch::Tensor>& inputs,
                        const std::vector<c10::Device>& devices) {
    return torch::nn::parallel::parallel_apply(replicas, inputs, devices);
  };
  p.gather = [](const std::vector<torch::Tensor>& outputs, const c10::Device& destination) {
    torch::autograd::variable_list v(outputs.begin(), outputs.end());
    return torch::autograd::Gather(destination, /*dim=*/0).apply(std::move(v)).front();
  };
  p.data_parallel = [](const std::shared_ptr<ReplicableModel>& m, const torch::Tensor& x,
                       const std::vector<c10::Device>& devices) {
    return torch::nn::parallel::data_parallel(m, x, devices, devices.front(), /*dim=*/0);
  };
  return p;
}
#else
DpPrimitives libtorch_primitives() {
  throw UsageError(
      "this ddpbench was built against a libtorch without CUDA, which lacks DataParallel's scatter and "
      "gather; build it against a CUDA libtorch (a PyTorch wheel) on a GPU machine");
}
#endif

DpPrimitives reference_primitives() {
  DpPrimitives p;
  p.name = "reference";
  p.replicate = [](const std::shared_ptr<ReplicableModel>& m, const std::vector<c10::Device>& devices) {
    ReplicaList out;
    for (size_t i = 0; i < devices.size(); ++i) out.push_back(m->replica(devices[i], static_cast<int>(i)));
    return out;
  };
  p.scatter = [](const torch::Tensor& x, const std::vector<c10::Device>& devices) {
    const auto chunks = x.chunk(static_cast<int64_t>(devices.size()), 0);
    std::vector<torch::Tensor> out;
    for (size_t i = 0; i < chunks.size(); ++i) out.push_back(chunks[i].to(devices[i]));
    return out;
  };
  p.parallel_apply = [](ReplicaList& replicas, const std::vector<torch::Tensor>& inputs,
                        const std::vector<c10::Device>& devices) {
    std::vector<torch::Tensor> out;
    for (size_t i = 0; i < replicas.size(); ++i) out.push_back(replicas[i]->forward(inputs[i]).to(devices[i]));
    return out;
  };
  p.gather = [](const std::vector<torch::Tensor>& outputs, const c10::Device& destination) {
    std::vector<torch::Tensor> moved;
    for (const auto& o : outputs) moved.push_back(o.to(destination));
    return at::cat(moved, 0);
  };
  return p;
}

const char* strategy_of(DpPath path) { return path == DpPath::kNative ? "dp" : "dp-manual"; }

void synchronize_all(const std::vector<c10::Device>& devices) {
#ifdef DDPBENCH_WITH_CUDA
  for (const auto& d : devices) {
    if (!d.is_cuda()) continue;
    c10::cuda::CUDAGuard guard(d.index());
    c10::cuda::device_synchronize();
  }
#else
  (void)devices;
#endif
}

// ---------------------------------------------------------------- DpStepper

// Phase boundaries of one instrumented step: each lap synchronises every device and adds
// the time since the previous boundary to a phase. Without a target it does nothing.
class DpStepper::PhaseClock {
 public:
  PhaseClock(DpPhaseTimes* out, const std::vector<c10::Device>& devices) : out_(out), devices_(devices) {
    if (!out_) return;
    synchronize_all(devices_);
    last_ = Clock::now();
  }
  void lap(double DpPhaseTimes::*phase) {
    if (!out_) return;
    synchronize_all(devices_);
    const auto now = Clock::now();
    out_->*phase += seconds(last_, now);
    last_ = now;
  }

 private:
  DpPhaseTimes* out_;
  const std::vector<c10::Device>& devices_;
  Clock::time_point last_;
};

DpStepper::DpStepper(std::shared_ptr<ReplicableModel> module, SyntheticBatch batch, std::vector<c10::Device> devices,
                     DpPath path, bool training, DpPrimitives prims)
    : module_(std::move(module)),
      devices_(std::move(devices)),
      path_(path),
      training_(training),
      prims_(std::move(prims)),
      batch_(batch),
      trainer_(module_->model_ptr(), nullptr, std::move(batch),
               devices_.empty() ? c10::Device(c10::kCPU) : devices_.front(), module_->precision(), 1) {
  if (devices_.empty()) throw UsageError("DataParallel needs at least one device");
  if (path_ == DpPath::kNative && !prims_.data_parallel)
    throw UsageError("the native DataParallel path needs libtorch's data_parallel (a CUDA build)");
  for (const auto& p : module_->model().parameters()) trainable_.push_back(p.requires_grad());
}

DpStepper::Forward DpStepper::forward(const torch::Tensor& input, PhaseClock& clock) {
  Forward f;
  if (path_ == DpPath::kNative) {
    f.output = prims_.data_parallel(module_, input, devices_);
    clock.lap(&DpPhaseTimes::forward_s);
    return f;
  }
  f.replicas = prims_.replicate(module_, devices_);
  clock.lap(&DpPhaseTimes::replicate_s);
  const auto inputs = prims_.scatter(input, devices_);
  clock.lap(&DpPhaseTimes::scatter_s);
  const auto outputs = prims_.parallel_apply(f.replicas, inputs, devices_);
  clock.lap(&DpPhaseTimes::forward_s);
  f.output = prims_.gather(outputs, devices_.front());
  clock.lap(&DpPhaseTimes::gather_s);
  return f;
}

void DpStepper::backward(const torch::Tensor& loss, const Forward& f, PhaseClock& clock, bool scale) {
  const torch::Tensor scaled = scale && trainer_.scaler() ? trainer_.scaler()->scale(loss) : loss;
  if (path_ == DpPath::kNative) {
    scaled.backward();  // the replicas' gradients reach the master through replicate's ReduceAdd
    clock.lap(&DpPhaseTimes::backward_s);
    return;
  }
  // The replicas' trainable parameters, replica-major. torch::autograd::grad stops at them
  // (libtorch's replicate gave them ReduceAdd as grad_fn; it is not run), so the reduce to
  // device 0 is ours and timed on its own.
  size_t per_replica = 0;
  for (bool t : trainable_) per_replica += t ? 1 : 0;
  if (per_replica == 0) return;
  std::vector<torch::Tensor> inputs;
  for (const auto& r : f.replicas) {
    const auto params = r->model().parameters();
    for (size_t j = 0; j < params.size() && j < trainable_.size(); ++j)
      if (trainable_[j]) inputs.push_back(params[j]);
  }
  const auto grads = torch::autograd::grad({scaled}, inputs, /*grad_outputs=*/{}, /*retain_graph=*/false,
                                           /*create_graph=*/false, /*allow_unused=*/true);
  clock.lap(&DpPhaseTimes::backward_s);
  auto master = module_->model().parameters();
  size_t t = 0;
  for (size_t j = 0; j < master.size(); ++j) {
    if (!trainable_[j]) continue;
    torch::Tensor sum;
    for (size_t i = 0; i < f.replicas.size(); ++i) {
      const torch::Tensor& g = grads[i * per_replica + t];
      if (!g.defined()) continue;  // unused by the forward: a zero gradient
      torch::Tensor moved = g.to(devices_.front());
      if (!sum.defined()) sum = moved;
      else sum.add_(moved);
    }
    ++t;
    if (!sum.defined()) continue;
    torch::Tensor& mg = master[j].mutable_grad();
    if (mg.defined()) mg.add_(sum);  // as AccumulateGrad: add into an existing gradient
    else mg = sum;
  }
  clock.lap(&DpPhaseTimes::reduce_s);
}

torch::Tensor DpStepper::step(DpPhaseTimes* phases) {
  PhaseClock clock(phases, devices_);
  if (!training_) {
    torch::NoGradGuard no_grad;
    return forward(batch_.input, clock).output;
  }
  trainer_.zero_grad();
  clock.lap(&DpPhaseTimes::zero_grad_s);
  Forward f = forward(batch_.input, clock);
  torch::Tensor loss;
  {
    AutocastScope autocast(devices_.front(), module_->precision());
    loss = torch::nn::functional::cross_entropy(f.output, batch_.target);
  }
  clock.lap(&DpPhaseTimes::loss_s);
  backward(loss, f, clock, /*scale=*/true);
  f.replicas.clear();
  trainer_.optimizer_step();
  clock.lap(&DpPhaseTimes::optimizer_s);
  return loss;
}

std::pair<torch::Tensor, torch::Tensor> DpStepper::gradients_of(const torch::Tensor& input, const torch::Tensor& target,
                                                                bool through_dp) {
  PhaseClock none(nullptr, devices_);
  std::optional<torch::NoGradGuard> no_grad;
  if (!training_) no_grad.emplace();
  trainer_.zero_grad();
  torch::Tensor output;
  if (through_dp) {
    Forward f = forward(input, none);
    output = f.output;
    if (training_) backward(torch::nn::functional::cross_entropy(output, target), f, none, /*scale=*/false);
  } else {
    output = module_->forward(input);
    if (training_) torch::nn::functional::cross_entropy(output, target).backward();
  }
  std::vector<torch::Tensor> flat;
  if (training_)
    for (const auto& p : module_->model().parameters())
      if (p.requires_grad())
        flat.push_back(p.grad().defined() ? p.grad().detach().reshape({-1}).to(torch::kFloat)
                                          : torch::zeros({p.numel()}, p.options().dtype(torch::kFloat)));
  torch::Tensor grads = flat.empty() ? torch::Tensor() : at::cat(flat);
  trainer_.zero_grad();
  return {grads, output.detach()};
}

DpCheck check_data_parallel(DpStepper& stepper, ReplicableModel& module, bool training, long long examples_per_device,
                            int image_size, int num_classes, uint64_t seed, bool cudnn_benchmark) {
  const auto& devices = stepper.devices();
  const auto batch = make_synthetic_batch(examples_per_device * static_cast<long long>(devices.size()), image_size,
                                          num_classes, devices.front(), seed);
  const bool was_training = module.model().is_training();
  const std::string precision = module.precision();
  const auto restore = [&] {
    module.model().train(was_training);
    module.set_precision(precision);
    (void)apply_math_modes({precision, cudnn_benchmark});
  };
  (void)apply_math_modes({"fp32-strict", cudnn_benchmark});
  module.model().eval();
  module.set_precision("fp32");
  DpCheck c;
  c.training = training;
  try {
    const auto [dp_grads, dp_out] = stepper.gradients_of(batch.input, batch.target, /*through_dp=*/true);
    const auto [ref_grads, ref_out] = stepper.gradients_of(batch.input, batch.target, /*through_dp=*/false);
    c.output_rel_diff = relative_diff(dp_out, ref_out);
    if (training) c.grad_rel_diff = relative_diff(dp_grads, ref_grads);
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return c;
}

// ---------------------------------------------------------------- the benchmark

namespace {

BenchResult measure(const DpJob& job, const std::string& name, const std::vector<c10::Device>& devices, bool training,
                    DpPath path) {
  const RunConfig& cfg = job.cfg;
  const int k = static_cast<int>(devices.size());
  const long long b = cfg.batch_size;
  for (const auto& d : devices) reset_peak_memory(d);
  ModelPtr master = build_model(cfg, name, devices.front());
  auto module = std::make_shared<ReplicableModel>(
      master, [cfg, name](const c10::Device& d) { return build_model(cfg, name, d); });
  module->set_precision(cfg.precision);
  if (!training) {
    master->eval();
    module->set_grad(false);
  }
  SyntheticBatch batch = make_synthetic_batch(b * k, cfg.image_size, cfg.num_classes, devices.front(),
                                              static_cast<uint64_t>(cfg.seed) + 1000);
  if (cfg.channels_last) batch.input = batch.input.contiguous(at::MemoryFormat::ChannelsLast);
  DpStepper stepper(module, batch, devices, path, training, job.prims);
  const std::string what =
      fmt::format("{} {} ({}) on {} device(s)", name, training ? "training" : "inference", strategy_of(path), k);

  const DpCheck check = check_data_parallel(stepper, *module, training, 2, cfg.image_size, cfg.num_classes,
                                            static_cast<uint64_t>(cfg.seed) + 2000, cfg.cudnn_benchmark);
  if (!check.passed())
    throw SelfCheckError(
        fmt::format("{}: the DataParallel {} differs from the model alone on the same batch by {:.3g} "
                    "(relative; limit {:.0e}): replicate, scatter, gather or the reduce is wrong, so "
                    "no timing of it is valid",
                    what, check.grad_rel_diff > check.output_rel_diff ? "gradient" : "output",
                    std::max(check.grad_rel_diff, check.output_rel_diff), DpCheck::kLimit));

  for (int i = 0; i < cfg.warmup; ++i) stepper.step();
  synchronize_all(devices);
  std::vector<double> samples, returned;
  for (int i = 0; i < cfg.iters; ++i) {
    synchronize_all(devices);
    const auto t0 = Clock::now();
    stepper.step();
    const auto t1 = Clock::now();  // the step's last call returned: what the host queued is queued
    synchronize_all(devices);
    const auto t2 = Clock::now();
    samples.push_back(seconds(t0, t2));
    returned.push_back(seconds(t0, t1));
  }
  std::vector<DpPhaseTimes> phases(static_cast<size_t>(cfg.iters));
  for (auto& p : phases) stepper.step(&p);

  BenchResult row;
  row.model = name;
  row.label = group_label(1, k, devices.front().is_cuda() ? 'G' : 'C');
  row.batch_per_rank = b;
  row.image_size = cfg.image_size;
  row.precision = cfg.precision;
  row.scaling = "weak";
  row.global_batch = b * k;
  row.world_size = k;
  row.nodes = 1;
  row.ddp = true;
  row.strategy = strategy_of(path);
  row.mode = training ? "train" : "inference";
  RankSamples rs;
  rs.rank = 0;
  rs.host = job.host;
  rs.local_rank = 0;
  rs.device = devices.front().str();
  rs.samples_s = samples;
  std::vector<std::string> devs;
  nlohmann::json peaks = nlohmann::json::array();
  for (const auto& d : devices) {
    devs.push_back(d.str());
    const long long peak = peak_memory_bytes(d);
    peaks.push_back(peak >= 0 ? nlohmann::json(peak) : nlohmann::json(nullptr));
  }
  rs.telemetry.devices = devs;
  row.ranks.push_back(rs);
  row.summary = summarize({samples}, b, k);
  row.stopping = Stopping{};
  row.telemetry.devices = devs;
  row.telemetry.peak_memory_bytes_per_device = peaks;
  row.telemetry.primitives = job.prims.name;

  const DpPhaseTimes mean = mean_phases(phases);
  nlohmann::json split = to_json(mean);
  if (path == DpPath::kNative) {  // one call: its communication cannot be told from its computation
    split["communication_s"] = nullptr;
    split["computation_s"] = nullptr;
  }
  double ret = 0, wait = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    ret += returned[i];
    wait += samples[i] - returned[i];
  }
  const double n = samples.empty() ? 1.0 : static_cast<double>(samples.size());
  row.breakdown =
      nlohmann::json{
          {"data_parallel", split},
          {"banerjee_shah_split",
           {{"call_return_s", ret / n},
            {"sync_wait_s", wait / n},
            {"note",
             "Banerjee and Shah's split, from the row's own (uninstrumented) steps: computation = host time until the "
             "step's last call returned, communication = the synchronize() that followed; means"}}},
          {"iterations", static_cast<int>(phases.size())},
          {"note",
           path == DpPath::kNative
               ? "data_parallel: means over a second series whose phases end with every device synchronised; "
                 "forward_s is the whole data_parallel() call (scatter, replicate, parallel_apply, gather), "
                 "backward_s includes ReduceAdd's gradient reduce to device 0, so communication_s and "
                 "computation_s are null"
               : "data_parallel: means over a second series whose phases end with every device synchronised; "
                 "communication_s = replicate + scatter + gather + reduce, computation_s = parallel_apply forward "
                 "+ loss + backward, other_s = zero_grad + optimizer; step_s (their sum) exceeds the row's "
                 "uninstrumented p50 by the synchronisations"}}
          .get<RowBreakdown>();

  DpTrafficInput in;
  in.dataset_size = cfg.dataset_size;
  in.batch_per_device = b;
  in.devices = k;
  in.parameters = count_parameters(*master);
  in.trainable_parameters = count_trainable_parameters(*master);
  for (const auto& buf : master->buffers()) in.buffer_bytes += static_cast<long long>(buf.numel() * buf.element_size());
  in.input_elements_per_example = 3LL * cfg.image_size * cfg.image_size;
  in.output_elements_per_example = cfg.num_classes;
  in.output_bytes = cfg.precision == "fp16" || cfg.precision == "bf16" ? 2 : 4;
  in.training = training;
  row.communication = to_json(in, data_parallel_traffic(in)).get<RowCommunication>();
  row.compute.parameters = in.parameters;
  row.compute.trainable_parameters = in.trainable_parameters;
  row.checks.dp_output_rel_diff = check.output_rel_diff;
  if (training) row.checks.dp_grad_rel_diff = check.grad_rel_diff;
  row.checks.dp_check_limit = DpCheck::kLimit;
  row.checks.dp_check_passed = check.passed();
  row.checks.note =
      "the path's output (and the master's gradients) vs the model alone on one batch of 2 examples per device, "
      "eval mode, fp32 with TF32 off: max |a - b| / max |b|";
  for (auto& w : timing_warnings(row, "use --iters 20 or more"))
    if (w.code == "few_samples") row.warnings.push_back(std::move(w));
  return row;
}

}  // namespace

std::vector<BenchResult> run_data_parallel(const DpJob& job, const std::function<void(const BenchResult&)>& on_row) {
  std::vector<BenchResult> rows;
  for (const auto& name : job.cfg.models)
    for (int n : job.cfg.world_sizes) {
      if (n < 1 || n > static_cast<int>(job.devices.size()))
        throw UsageError(fmt::format("device count {} is out of range; use 1..{}", n, job.devices.size()));
      const std::vector<c10::Device> devices(job.devices.begin(), job.devices.begin() + n);
      for (const auto& mode : job.modes)
        for (DpPath path : job.paths) {
          rows.push_back(measure(job, name, devices, mode == "train", path));
          finish_row(rows.back(), rows, RowFinish{/*keep_all_ranks=*/true, nullptr});  // one process: its samples stay
          if (on_row) on_row(rows.back());
        }
    }
  return rows;
}

}  // namespace ddpbench
