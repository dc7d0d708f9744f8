// Single-process multi-GPU DataParallel (`ddpbench dataparallel`; Banerjee and Shah, "Benchmarking Distributed Training
// and Inference on NVIDIA's A6000 GPUs"): libtorch's torch::nn::parallel::data_parallel ("dp", the native path) and the
// same step built by hand from replicate, torch::cuda::scatter, parallel_apply and gather ("dp-manual"), timed per step
// and, with every device synchronised at each phase boundary, per phase (docs/METHODOLOGY.md "DataParallel, native and
// hand-made").
//
// libtorch's data_parallel.h and torch/csrc/cuda/comm.h need CUDA's headers: a build without
// CUDA (Debian's CPU libtorch) compiles this file without them, libtorch_primitives() then
// throws UsageError, and only reference_primitives() (plain ATen stand-ins, for the tests)
// run. Nothing of the CUDA path has run on a GPU yet.
#pragma once

#include <c10/core/Device.h>
#include <torch/nn/module.h>
#include <torch/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/data_parallel_model.hpp"
#include "core/config/run_config.hpp"
#include "core/result/result.hpp"
#include "engine/compat.hpp"
#include "engine/models/model.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {

/// What DataParallel replicates: one Model, registered as the child "model", plus how to
/// build another of the same architecture. Our models are not torch::nn::Cloneable, so
/// clone() (what torch::nn::parallel::replicate calls per device) builds the copy from the
/// model registry once per (device, slot) and afterwards only overwrites its parameters and
/// buffers: every call copies each parameter and buffer of the master (`Tensor::to(device,
/// copy=true)`, set_data into the replica's tensors), so a replica always holds the
/// master's current values and shares no storage with it, as Cloneable::clone's deep copy.
class ReplicableModel : public torch::nn::Module {
 public:
  /// Builds a model of the master's architecture and configuration on `device` (its
  /// values are overwritten before use), e.g. build_model(cfg, name, device).
  using Factory = std::function<ModelPtr(const c10::Device&)>;

  ReplicableModel(ModelPtr model, Factory factory);

  /// model->forward(x): [N, 3, H, W] -> logits [N, classes]. Under no_grad when grad is off
  /// (set_grad) and under autocast on x's device for fp16/bf16 (set_precision). Set here, per
  /// call, because libtorch's parallel_apply runs replicas on at::parallel_for's threads,
  /// which do not inherit the caller's grad mode or autocast state (Python's parallel_apply
  /// passes both; ATen/ParallelOpenMP.h's invoke_parallel does not).
  torch::Tensor forward(torch::Tensor x);

  /// torch::nn::parallel::replicate's copy for `device` (nullopt: the master's device):
  /// replica(device, 0).
  std::shared_ptr<torch::nn::Module> clone(compat::ModuleCloneArg device) const override;

  /// A deep copy on `device` (see the class comment) with the master's training mode,
  /// grad and precision settings; `slot` tells replicas on one device apart (the reference
  /// primitives put several on the CPU). Throws std::logic_error when the factory's model
  /// has other parameter or buffer names or shapes than the master.
  std::shared_ptr<ReplicableModel> replica(const c10::Device& device, int slot) const;

  Model& model() { return *model_; }
  const ModelPtr& model_ptr() const { return model_; }
  /// "fp32", "fp32-strict", "tf32" (no autocast) or "fp16" / "bf16" (autocast in forward).
  void set_precision(std::string precision) { precision_ = std::move(precision); }
  const std::string& precision() const { return precision_; }
  /// Whether forward records autograd history (false: inference).
  void set_grad(bool on) { grad_ = on; }
  bool grad() const { return grad_; }

 private:
  ModelPtr model_;
  Factory factory_;
  std::string precision_ = "fp32";
  bool grad_ = true;
  mutable std::map<std::pair<std::string, int>, ModelPtr> copies_;  ///< (device, slot) -> replica model
};

using ReplicaList = std::vector<std::shared_ptr<ReplicableModel>>;

/// The primitives of a DataParallel step. libtorch_primitives(): torch::nn::parallel::
/// replicate (clone + ReduceAdd gradient edges to the master), torch::cuda::scatter (the
/// input split along dim 0 in chunks of B), torch::nn::parallel::parallel_apply, and
/// torch::autograd::Gather (torch::cuda::gather with the Scatter backward training needs),
/// plus torch::nn::parallel::data_parallel itself. reference_primitives(): what those
/// compute, from plain ATen ops on any device (replica(), chunk + to, a loop, cat + to), for
/// the CPU tests; no data_parallel.
struct DpPrimitives {
  std::string name;  ///< "libtorch" or "reference"
  std::function<ReplicaList(const std::shared_ptr<ReplicableModel>&, const std::vector<c10::Device>&)> replicate;
  std::function<std::vector<torch::Tensor>(const torch::Tensor&, const std::vector<c10::Device>&)> scatter;
  std::function<std::vector<torch::Tensor>(ReplicaList&, const std::vector<torch::Tensor>&,
                                           const std::vector<c10::Device>&)>
      parallel_apply;
  std::function<torch::Tensor(const std::vector<torch::Tensor>&, const c10::Device&)> gather;
  /// data_parallel(module, input, devices, output device devices[0]); empty: no native path.
  std::function<torch::Tensor(const std::shared_ptr<ReplicableModel>&, const torch::Tensor&,
                              const std::vector<c10::Device>&)>
      data_parallel;
};

/// libtorch's primitives (see DpPrimitives). Throws UsageError in a build without CUDA.
DpPrimitives libtorch_primitives();

/// ATen stand-ins for the primitives (see DpPrimitives), device-generic.
DpPrimitives reference_primitives();

/// The two DataParallel paths.
enum class DpPath { kNative, kManual };

/// BenchResult::strategy of a path: "dp" (native) or "dp-manual".
const char* strategy_of(DpPath path);

/// Waits for all work queued on every device of `devices` (cudaDeviceSynchronize on each
/// GPU; nothing on the CPU).
void synchronize_all(const std::vector<c10::Device>& devices);

/// One DataParallel series' step. devices[0] holds the master model, the global batch and
/// the output; the optimizer is run's (SGD lr 0.001, momentum 0.9, weight decay 1e-4, the
/// fp16 loss scaler: engine/train/workload.hpp's Trainer over the master's parameters).
class DpStepper {
 public:
  /// `batch`: the global batch [B k, 3, H, W] and its targets on devices[0]. Throws
  /// UsageError for no device, or the native path without prims.data_parallel.
  DpStepper(std::shared_ptr<ReplicableModel> module, SyntheticBatch batch, std::vector<c10::Device> devices,
            DpPath path, bool training, DpPrimitives prims);

  /// One step. Training: zero_grad; forward (native: data_parallel(); manual: replicate,
  /// scatter, parallel_apply, gather); cross-entropy on devices[0]; backward (native:
  /// loss.backward(), the replicas' gradients reach the master through ReduceAdd; manual:
  /// torch::autograd::grad to the replicas' trainable parameters, then each master
  /// gradient += the sum of its replicas' gradients moved to devices[0]); the optimizer step.
  /// Inference: the forward only, under no_grad. Asynchronous on GPUs (call
  /// synchronize_all to time it). With `phases`, every phase ends with synchronize_all and
  /// its seconds are written there (phases a path cannot separate stay 0). Returns the loss
  /// (training) or the logits [B k, classes] (inference).
  torch::Tensor step(DpPhaseTimes* phases = nullptr);

  /// For the self-check: the master's trainable gradients (flat, fp32; undefined when not
  /// training) and the output [N, classes] after one forward (and, training, the
  /// cross-entropy's backward, unscaled) of `input` / `target` on devices[0], through this
  /// path (`through_dp`) or through the master model alone. No optimizer step; leaves the
  /// master's gradients zeroed.
  std::pair<torch::Tensor, torch::Tensor> gradients_of(const torch::Tensor& input, const torch::Tensor& target,
                                                       bool through_dp);

  const std::vector<c10::Device>& devices() const { return devices_; }

 private:
  class PhaseClock;
  struct Forward {
    torch::Tensor output;
    ReplicaList replicas;  ///< manual path: kept for the backward to their parameters
  };
  Forward forward(const torch::Tensor& input, PhaseClock& clock);
  void backward(const torch::Tensor& loss, const Forward& fwd, PhaseClock& clock, bool scale);

  std::shared_ptr<ReplicableModel> module_;
  std::vector<c10::Device> devices_;
  DpPath path_;
  bool training_;
  DpPrimitives prims_;
  SyntheticBatch batch_;         ///< the global batch on devices[0]
  Trainer trainer_;              ///< optimizer and loss scaler over the master's parameters
  std::vector<bool> trainable_;  ///< per master parameter (module order): requires_grad
};

/// The self-check of a path: the DP output and gradients of the master vs the master
/// model alone on the same input, in eval mode (BatchNorm on its running statistics,
/// dropout off, so splitting the batch changes nothing), fp32 with TF32 off and no
/// autocast. Relative differences: max |a - b| / max |b|.
struct DpCheck {
  double output_rel_diff = 0;
  double grad_rel_diff = 0;  ///< 0 when not training
  bool training = false;
  /// 1e-4: summation order differs between a split and a whole batch (~1e-6 in fp32).
  static constexpr double kLimit = 1e-4;
  bool passed() const { return output_rel_diff <= kLimit && grad_rel_diff <= kLimit; }
};

/// Runs the self-check of `stepper`'s path on `examples_per_device` examples per device
/// drawn from `seed` (restores the module's mode, precision, grad setting and math modes;
/// leaves the gradients zeroed). NaN anywhere fails it.
DpCheck check_data_parallel(DpStepper& stepper, ReplicableModel& module, bool training, long long examples_per_device,
                            int image_size, int num_classes, uint64_t seed, bool cudnn_benchmark);

/// Everything `ddpbench dataparallel` measures.
struct DpJob {
  RunConfig cfg;                     ///< validated; world_sizes: device counts, the first n of `devices`
  std::vector<c10::Device> devices;  ///< the --gpus devices, in order
  std::vector<std::string> modes;    ///< "train", "inference"
  std::vector<DpPath> paths;
  DpPrimitives prims;
  std::string host;
};

/// Measures every (model, device count, mode, path) of `job`, in that nesting: the self-check
/// (throws SelfCheckError when it fails), cfg.warmup untimed steps, cfg.iters timed steps
/// (synchronize_all before and after each: the row's samples; Banerjee and Shah's split: host time
/// until the step's last call returned, then the wait), then cfg.iters steps timed per phase
/// (the row's breakdown). Rows as BenchResult (strategy "dp" / "dp-manual", mode, world_size =
/// devices, batch_per_rank = B per device, ddp true), each handed to `on_row` when measured.
std::vector<BenchResult> run_data_parallel(const DpJob& job, const std::function<void(const BenchResult&)>& on_row);

}  // namespace ddpbench
