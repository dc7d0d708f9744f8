// Single-process DataParallel (`ddpbench dataparallel`; Banerjee and Shah, "Benchmarking Distributed Training and
// Inference on NVIDIA's A6000 GPUs"): the bytes its primitives move, Banerjee and Shah's bytes-per-epoch formula, the
// computation/communication split of a step, and the --gpus selection. Torch-free (docs/METHODOLOGY.md "DataParallel,
// native and hand-made").
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ddpbench {

/// Banerjee and Shah, "Benchmarking Distributed Training and Inference on NVIDIA's A6000
/// GPUs", section 2: "Total data transfer size in each epoch = N / (B x k) x number of
/// trainable parameters", N examples per epoch, B examples per device per step, k devices.
/// Returns parameters (elements, not bytes; multiply by the bytes per element, 4 for fp32
/// gradients), real-valued as the paper writes it (the step count N / (B k) is not rounded).
/// The formula counts one copy of the trainable parameters per step, whatever k is; see
/// data_parallel_traffic for what DataParallel's primitives move. Throws UsageError for
/// N < 1, B < 1, k < 1 or a negative parameter count.
double banerjee_shah_parameters_per_epoch(long long dataset_size, long long batch_per_device, int devices,
                                          long long trainable_parameters);

/// What one DataParallel step works on, for data_parallel_traffic. Device 0 holds the master
/// model and the global batch of B x k examples (as `ddpbench dataparallel` places them).
struct DpTrafficInput {
  long long dataset_size = 0;          ///< N, examples per epoch
  long long batch_per_device = 0;      ///< B, examples per device per step
  int devices = 1;                     ///< k
  long long parameters = 0;            ///< all parameters: replicate copies frozen ones too
  long long trainable_parameters = 0;  ///< those requiring gradients: reduced to device 0 in training
  long long buffer_bytes = 0;          ///< bytes of all buffers (BatchNorm statistics), replicated with the parameters
  long long input_elements_per_example = 0;   ///< 3 x H x W
  long long output_elements_per_example = 0;  ///< classes (the logits)
  int parameter_bytes = 4;  ///< per parameter and gradient element: 4 (autocast keeps fp32 master weights)
  int input_bytes = 4;      ///< per input element: 4 (fp32 batch)
  int output_bytes = 4;     ///< per logit: 4 in fp32, 2 under fp16/bf16 autocast
  bool training = true;
};

/// Bytes that cross from one device to another per step, by primitive, and per epoch.
/// Device 0's own share never leaves it, so every term carries (k - 1):
///   replicate_bytes = (k-1) (P x parameter_bytes + buffer_bytes)  (all parameters, frozen too)
///   scatter_bytes   = (k-1) B input_elements input_bytes          (the input chunks)
///   gather_bytes    = (k-1) B output_elements output_bytes, twice in training (the
///                     gradient of the output is scattered back in backward)
///   reduce_bytes    = training: (k-1) P_trainable parameter_bytes (gradients to device 0); else 0
/// steps_per_epoch = ceil(N / (B k)); bytes_per_epoch = bytes_per_step x steps_per_epoch.
struct DpTraffic {
  long long steps_per_epoch = 0;
  double banerjee_shah_parameters_per_epoch = 0;  ///< banerjee_shah_parameters_per_epoch(), elements
  double banerjee_shah_bytes_per_epoch = 0;       ///< that x parameter_bytes
  double replicate_bytes = 0, scatter_bytes = 0, gather_bytes = 0, reduce_bytes = 0;
  double bytes_per_step = 0;  ///< the four above
  double bytes_per_epoch = 0;
};

/// The traffic of one DataParallel configuration (see DpTraffic). Throws UsageError as
/// banerjee_shah_parameters_per_epoch, or for negative counts.
DpTraffic data_parallel_traffic(const DpTrafficInput& in);

/// The JSON of a row's "communication" object: every DpTraffic field plus the inputs.
nlohmann::json to_json(const DpTrafficInput& in, const DpTraffic& t);

/// One DataParallel step's phases, seconds, each measured from the end of the previous one
/// after synchronising every device of the step (docs/METHODOLOGY.md). Phases a path cannot
/// separate stay 0: the native path's forward_s is the whole data_parallel() call (scatter,
/// replicate, parallel_apply, gather), its backward_s includes the ReduceAdd to device 0.
struct DpPhaseTimes {
  double zero_grad_s = 0;
  double replicate_s = 0;  ///< torch::nn::parallel::replicate: clone to every device + gradient edges
  double scatter_s = 0;    ///< torch::cuda::scatter of the input
  double forward_s = 0;    ///< parallel_apply (native: the whole data_parallel call)
  double gather_s = 0;     ///< gather of the outputs to device 0
  double loss_s = 0;       ///< cross-entropy on device 0
  double backward_s = 0;   ///< autograd to the replicas' parameters (native: with the ReduceAdd)
  double reduce_s = 0;     ///< sum of the replicas' gradients into device 0's (manual only)
  double optimizer_s = 0;  ///< the SGD step (fp16: unscale, skip check, scale update)

  /// replicate + scatter + gather + reduce: moving parameters, inputs, outputs, gradients.
  double communication_s() const { return replicate_s + scatter_s + gather_s + reduce_s; }
  /// forward + loss + backward: the model's arithmetic (parallel_apply forward, its backward).
  double computation_s() const { return forward_s + loss_s + backward_s; }
  /// zero_grad + optimizer (Banerjee and Shah count both as computation).
  double other_s() const { return zero_grad_s + optimizer_s; }
  /// The sum of every phase: the instrumented step.
  double step_s() const { return communication_s() + computation_s() + other_s(); }
};

/// Mean of each phase over `steps` (all zero when empty).
DpPhaseTimes mean_phases(const std::vector<DpPhaseTimes>& steps);

/// {"zero_grad_s", ..., "optimizer_s", "communication_s", "computation_s", "other_s", "step_s"}.
nlohmann::json to_json(const DpPhaseTimes& p);

/// --gpus: "" -> every visible GPU (0..visible-1); "N" (one number) -> the first N; a comma
/// list "0,2" -> those indices, in order (a single index as "3,", or choose it with
/// CUDA_VISIBLE_DEVICES). Throws UsageError naming --gpus for no GPU visible, N outside
/// 1..visible, an index outside 0..visible-1, a repeated index or anything not a number.
std::vector<int> parse_gpu_selection(const std::string& text, int visible);

}  // namespace ddpbench
