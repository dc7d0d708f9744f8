#include "engine/train/checkpoint.hpp"

#include <torch/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

namespace ddpbench {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The unit and its computation, kept in the autograd context until the backward (freed
// with the graph when no backward runs).
struct UnitHolder : torch::CustomClassHolder {
  torch::nn::Module* unit = nullptr;
  Model::UnitFn fn;
};

struct CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
  // `anchor`: an empty tensor that requires grad, so the output requires grad (and the
  // backward runs) even when `x` does not (a unit fed the image directly).
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& anchor,
                               torch::nn::Module* unit, const Model::UnitFn* fn) {
    (void)anchor;
    auto holder = c10::make_intrusive<UnitHolder>();
    holder->unit = unit;
    holder->fn = *fn;
    ctx->saved_data["unit"] = at::IValue::make_capsule(std::move(holder));
    ctx->saved_data["x_requires_grad"] = x.requires_grad();
    ctx->save_for_backward({x});
    torch::NoGradGuard ng;
    return (*fn)(x);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    auto capsule = ctx->saved_data["unit"].toCapsule();
    auto* holder = static_cast<UnitHolder*>(capsule.get());
    torch::nn::Module* unit = holder->unit;
    const Model::UnitFn* fn = &holder->fn;
    const bool x_grad = ctx->saved_data["x_requires_grad"].toBool();
    auto x = ctx->get_saved_variables().front().detach().requires_grad_(x_grad);
    // Buffers (BatchNorm running statistics) as the forward left them: the recompute must
    // not update them again.
    std::vector<torch::Tensor> buffers, saved;
    {
      torch::NoGradGuard ng;
      for (auto& b : unit->buffers()) {
        buffers.push_back(b);
        saved.push_back(b.clone());
      }
    }
    torch::Tensor out;
    {
      torch::AutoGradMode grad(true);
      out = (*fn)(x);
    }
    if (out.requires_grad()) torch::autograd::backward({out}, {grad_out.front()});
    // Restored after the nested backward: batch_norm saves the running statistics for its
    // backward, so writing them before would trip autograd's version check.
    {
      torch::NoGradGuard ng;
      for (size_t k = 0; k < buffers.size(); ++k) buffers[k].copy_(saved[k]);
    }
    return {x_grad ? x.grad() : torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor checkpointed(torch::nn::Module& unit, const torch::Tensor& x, const Model::UnitFn& fn) {
  if (!torch::GradMode::is_enabled()) return fn(x);
  // One per call, freed with the graph: a static tensor would outlive main (engine/run/teardown.hpp).
  const torch::Tensor anchor = torch::empty({0}, torch::requires_grad());
  return CheckpointFunction::apply(x, anchor, &unit, &fn);
}

void enable_activation_checkpointing(Model& model) {
  auto units = model.units();
  auto inner = model.unit_runner();
  model.set_unit_runner([units, inner](size_t i, const torch::Tensor& x, const Model::UnitFn& fn) {
    if (!inner) return checkpointed(*units.at(i), x, fn);
    Model::UnitFn wrapped = [inner, i, fn](const torch::Tensor& t) { return inner(i, t, fn); };
    return checkpointed(*units.at(i), x, wrapped);
  });
}

}  // namespace ddpbench
