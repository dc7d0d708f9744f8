// The on/off settings of PyTorch's DistributedDataParallel constructor that `ddpbench run`
// exposes: one list, expanded by every struct and reader that carries them (RunConfig, a row's
// ddp_options, ConfigKey, a check reference's setup, the engine's DdpOptions). A new DDP flag
// is one line here plus the engine code that applies it. Torch-free.
#pragma once

#include <vector>

namespace ddpbench {

/// DDPBENCH_DDP_FLAG_SETTINGS(M, X): for each setting, in the order rows compare them,
///   M(X, name, ddp_default, flag, label, help)
/// - name: DDP's keyword argument (torch/nn/parallel/distributed.py), the C++ member and the
///   JSON key of the result file's config, of a row's ddp_options and of a reference's setup;
/// - ddp_default: Python DDP's default (and `run`'s);
/// - flag: `run`'s CLI flag, which sets the other value ("--no-broadcast-buffers");
/// - label: the words a row's title uses when the setting is not the default;
/// - help: the flag's --help line.
/// M receives X so that an adapter can call X with the shape its own list needs
/// (e.g. ConfigKey's X(type, name, initial value, text when not set)).
// clang-format off
#define DDPBENCH_DDP_FLAG_SETTINGS(M, X)                                                                           \
  M(X, broadcast_buffers, true, "--no-broadcast-buffers", "no buffer broadcast",                                 \
    "Do not broadcast BatchNorm buffers each step (DDP broadcast_buffers=False, as benchmark.py)")                \
  M(X, gradient_as_bucket_view, false, "--gradient-as-bucket-view", "gradient as bucket view",                    \
    "DDP gradient_as_bucket_view=True: gradients are views into the buckets (no copy, less memory)")              \
  M(X, static_graph, false, "--static-graph", "static graph",                                                      \
    "DDP static_graph=True: the graph is the same every step (the first step's allreduce waits for the whole "    \
    "backward)")                                                                                                   \
  M(X, find_unused_parameters, false, "--find-unused-parameters", "find unused parameters",                        \
    "DDP find_unused_parameters=True: walk the autograd graph each step for parameters without gradients")        \
  M(X, skip_all_reduce_unused_params, false, "--skip-all-reduce-unused-params", "skip allreduce of unused params", \
    "DDP skip_all_reduce_unused_params=True (torch 2.7+, with --find-unused-parameters): the gradients of "        \
    "parameters unused in a step are not allreduced")
// clang-format on

/// One DDP flag setting as data (DDPBENCH_DDP_FLAG_SETTINGS): for loops over the settings.
struct DdpFlagSetting {
  const char* name;   ///< DDP's keyword argument and the JSON key
  bool ddp_default;   ///< Python DDP's default
  const char* flag;   ///< `run`'s flag, which sets !ddp_default
  const char* label;  ///< a row title's words when not the default
  const char* help;   ///< the flag's --help line
};

/// The DDP flag settings, in DDPBENCH_DDP_FLAG_SETTINGS order.
inline const std::vector<DdpFlagSetting>& ddp_flag_settings() {
#define DDPBENCH_DDP_FLAG_ENTRY(X, name, def, flag, label, help) {#name, def, flag, label, help},
  static const std::vector<DdpFlagSetting> kSettings = {DDPBENCH_DDP_FLAG_SETTINGS(DDPBENCH_DDP_FLAG_ENTRY, _)};
#undef DDPBENCH_DDP_FLAG_ENTRY
  return kSettings;
}

/// Adapter for member lists: `bool name = ddp_default;` (RunConfig, ReferenceSetup, DdpOptions).
#define DDPBENCH_DDP_FLAG_MEMBER(X, name, def, flag, label, help) bool name = def;

}  // namespace ddpbench
