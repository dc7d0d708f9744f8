// Activation checkpointing of a model's units (--activation-checkpointing): each unit's
// forward runs without building a graph and keeps only its input; its backward recomputes
// the forward with grad and back-propagates through it. Chen et al. 2016, "Training Deep
// Nets with Sublinear Memory Cost", arXiv:1604.06174; the reentrant variant of
// torch.utils.checkpoint (torch/utils/checkpoint.py, CheckpointFunction).
#pragma once

#include <torch/nn/module.h>

#include "engine/models/model.hpp"

namespace ddpbench {

/// Runs unit `fn` on `x` checkpointed, as CheckpointFunction does (a custom
/// torch::autograd::Function): forward under no_grad saving only `x`; backward re-runs
/// fn(x) with grad on a detached copy of `x` and back-propagates the incoming gradient,
/// which accumulates the unit's parameter gradients (in the nested backward, as the
/// reentrant torch.utils.checkpoint does) and returns the gradient of `x`.
/// Outside grad mode it is fn(x).
/// BatchNorm: the recompute would update the running statistics a second time, which
/// torch.utils.checkpoint does (its documented caveat). Here every buffer of `unit`
/// (running_mean, running_var, num_batches_tracked) is saved before the recompute and
/// restored after it, so the statistics are updated exactly once per step, as without
/// checkpointing. RNG: the units of the shipped models draw no random numbers (ViT's
/// dropouts are p = 0), so no RNG state is stashed (torch.utils.checkpoint stashes it).
torch::Tensor checkpointed(torch::nn::Module& unit, const torch::Tensor& x, const Model::UnitFn& fn);

/// Turns activation checkpointing on for every unit of `model` (installs a unit runner
/// that calls checkpointed(); it wraps a runner already installed, which then runs inside
/// the checkpointed region, in forward and in the recompute).
void enable_activation_checkpointing(Model& model);

}  // namespace ddpbench
