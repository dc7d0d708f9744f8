#include "core/analysis/data_parallel_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/config/run_config.hpp"
#include "core/util/errors.hpp"
#include "core/util/parse.hpp"

namespace ddpbench {
namespace {

void check_counts(long long n, long long b, int k) {
  if (n < 1) throw UsageError(fmt::format("dataset size {} must be at least 1 example per epoch", n));
  if (b < 1) throw UsageError(fmt::format("batch per device {} must be at least 1", b));
  if (k < 1) throw UsageError(fmt::format("device count {} must be at least 1", k));
}

}  // namespace

double banerjee_shah_parameters_per_epoch(long long dataset_size, long long batch_per_device, int devices,
                                          long long trainable_parameters) {
  check_counts(dataset_size, batch_per_device, devices);
  if (trainable_parameters < 0)
    throw UsageError(fmt::format("trainable parameter count {} must not be negative", trainable_parameters));
  return static_cast<double>(dataset_size) / (static_cast<double>(batch_per_device) * devices) *
         static_cast<double>(trainable_parameters);
}

DpTraffic data_parallel_traffic(const DpTrafficInput& in) {
  check_counts(in.dataset_size, in.batch_per_device, in.devices);
  for (long long v : {in.parameters, in.trainable_parameters, in.buffer_bytes, in.input_elements_per_example,
                      in.output_elements_per_example, static_cast<long long>(in.parameter_bytes),
                      static_cast<long long>(in.input_bytes), static_cast<long long>(in.output_bytes)})
    if (v < 0) throw UsageError(fmt::format("a DataParallel traffic count is negative ({})", v));
  if (in.trainable_parameters > in.parameters)
    throw UsageError(fmt::format("{} trainable parameters of {} in all", in.trainable_parameters, in.parameters));
  DpTraffic t;
  const double others = in.devices - 1;  // device 0's share stays on device 0
  const double b = static_cast<double>(in.batch_per_device);
  const long long global = in.batch_per_device * in.devices;
  t.steps_per_epoch = (in.dataset_size + global - 1) / global;
  t.banerjee_shah_parameters_per_epoch =
      banerjee_shah_parameters_per_epoch(in.dataset_size, in.batch_per_device, in.devices, in.trainable_parameters);
  t.banerjee_shah_bytes_per_epoch = t.banerjee_shah_parameters_per_epoch * in.parameter_bytes;
  t.replicate_bytes =
      others * (static_cast<double>(in.parameters) * in.parameter_bytes + static_cast<double>(in.buffer_bytes));
  t.scatter_bytes = others * b * static_cast<double>(in.input_elements_per_example) * in.input_bytes;
  t.gather_bytes =
      others * b * static_cast<double>(in.output_elements_per_example) * in.output_bytes * (in.training ? 2.0 : 1.0);
  t.reduce_bytes = in.training ? others * static_cast<double>(in.trainable_parameters) * in.parameter_bytes : 0.0;
  t.bytes_per_step = t.replicate_bytes + t.scatter_bytes + t.gather_bytes + t.reduce_bytes;
  t.bytes_per_epoch = t.bytes_per_step * static_cast<double>(t.steps_per_epoch);
  return t;
}

nlohmann::json to_json(const DpTrafficInput& in, const DpTraffic& t) {
  return {
      {"dataset_size", in.dataset_size},
      {"batch_per_device", in.batch_per_device},
      {"devices", in.devices},
      {"parameters", in.parameters},
      {"trainable_parameters", in.trainable_parameters},
      {"buffer_bytes", in.buffer_bytes},
      {"parameter_bytes", in.parameter_bytes},
      {"input_bytes", in.input_bytes},
      {"output_bytes", in.output_bytes},
      {"steps_per_epoch", t.steps_per_epoch},
      {"banerjee_shah_parameters_per_epoch", t.banerjee_shah_parameters_per_epoch},
      {"banerjee_shah_bytes_per_epoch", t.banerjee_shah_bytes_per_epoch},
      {"replicate_bytes_per_step", t.replicate_bytes},
      {"scatter_bytes_per_step", t.scatter_bytes},
      {"gather_bytes_per_step", t.gather_bytes},
      {"reduce_bytes_per_step", t.reduce_bytes},
      {"bytes_per_step", t.bytes_per_step},
      {"bytes_per_epoch", t.bytes_per_epoch},
      {"note",
       "banerjee_shah_*: Banerjee and Shah's N / (B k) x trainable parameters (one copy of the trainable parameters "
       "per step); the *_bytes_per_step terms count what crosses between devices, device 0 holding the "
       "master model and the global batch (docs/METHODOLOGY.md)"}};
}

DpPhaseTimes mean_phases(const std::vector<DpPhaseTimes>& steps) {
  DpPhaseTimes m;
  if (steps.empty()) return m;
  for (const auto& s : steps) {
    m.zero_grad_s += s.zero_grad_s;
    m.replicate_s += s.replicate_s;
    m.scatter_s += s.scatter_s;
    m.forward_s += s.forward_s;
    m.gather_s += s.gather_s;
    m.loss_s += s.loss_s;
    m.backward_s += s.backward_s;
    m.reduce_s += s.reduce_s;
    m.optimizer_s += s.optimizer_s;
  }
  const double n = static_cast<double>(steps.size());
  for (double* v : {&m.zero_grad_s, &m.replicate_s, &m.scatter_s, &m.forward_s, &m.gather_s, &m.loss_s, &m.backward_s,
                    &m.reduce_s, &m.optimizer_s})
    *v /= n;
  return m;
}

nlohmann::json to_json(const DpPhaseTimes& p) {
  return {{"zero_grad_s", p.zero_grad_s},
          {"replicate_s", p.replicate_s},
          {"scatter_s", p.scatter_s},
          {"forward_s", p.forward_s},
          {"gather_s", p.gather_s},
          {"loss_s", p.loss_s},
          {"backward_s", p.backward_s},
          {"reduce_s", p.reduce_s},
          {"optimizer_s", p.optimizer_s},
          {"communication_s", p.communication_s()},
          {"computation_s", p.computation_s()},
          {"other_s", p.other_s()},
          {"step_s", p.step_s()}};
}

std::vector<int> parse_gpu_selection(const std::string& text, int visible) {
  if (visible < 1) throw UsageError("--gpus: no GPU is visible; DataParallel needs at least one");
  std::vector<int> out;
  if (text.empty()) {
    for (int i = 0; i < visible; ++i) out.push_back(i);
    return out;
  }
  const auto number = [&](const std::string& s) {
    if (!is_decimal(s) || s[0] == '-' || s[0] == '+')
      throw UsageError(
          fmt::format("--gpus '{}' is not a GPU count or a comma list of GPU indices; e.g. --gpus 2 "
                      "or --gpus 0,2",
                      text));
    return parse_bounded(s, "--gpus", 0, 1 << 20);
  };
  if (text.find(',') == std::string::npos) {
    const long long n = number(text);
    if (n < 1 || n > visible)
      throw UsageError(
          fmt::format("--gpus {} is out of range: this machine shows {} GPU(s); use 1..{}", n, visible, visible));
    for (int i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (const auto& item : split_list(text)) {
    const long long i = number(item);
    if (i >= visible)
      throw UsageError(
          fmt::format("--gpus: GPU index {} is out of range: this machine shows {} GPU(s), indices "
                      "0..{}",
                      i, visible, visible - 1));
    if (std::find(out.begin(), out.end(), static_cast<int>(i)) != out.end())
      throw UsageError(fmt::format("--gpus: GPU {} is listed twice; name each GPU once", i));
    out.push_back(static_cast<int>(i));
  }
  if (out.empty()) throw UsageError(fmt::format("--gpus '{}' names no GPU; e.g. --gpus 2 or --gpus 0,2", text));
  return out;
}

}  // namespace ddpbench
