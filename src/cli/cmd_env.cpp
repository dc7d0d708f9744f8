// `ddpbench env`: this host's environment as `run` and `comm` record it for every host
// (environment.nodes[], core/launch/node_env.hpp): driver, GPUs, topology, CUDA/NCCL/cuDNN/torch
// versions, CPU, kernel, NCCL variables. Needs no GPU; runs on a login node. Run it on
// every node (e.g. `srun -N4 --ntasks-per-node=1 ddpbench env --json`) to compare them by
// hand, or let `run` compare them (environment.node_differences).
#include <fmt/format.h>

#include <fstream>
#include <memory>

#include "cli/commands.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/node_env.hpp"
#include "core/util/errors.hpp"
#ifdef DDPBENCH_HAVE_ENGINE
#include "engine/env_info.hpp"
#endif

namespace ddpbench::cli {

Command add_env_command(CLI::App& parent) {
  struct Flags {
    bool json = false;
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  auto* app = parent.add_subcommand(
      "env",
      "Print this node's environment as run/comm record it per host: driver, GPUs, nvidia-smi topo -m, "
      "CUDA/NCCL/cuDNN/torch versions, CPU, kernel, NCCL_* variables");
  app->add_flag("--json", f->json, "Print the node object (the shape of environment.nodes[] in a result file)");
  app->add_option("-o,--output", f->out, "Write the JSON node object to this file instead of stdout (implies --json)");
  return {app, [f]() -> int {
            const EnvMap env = current_env();
#ifdef DDPBENCH_HAVE_ENGINE
            const nlohmann::json node = host_environment(env);
#else
            nlohmann::json node = probe_node_environment(env);
            node["torch"] = "none (ddpbench built without libtorch)";
#endif
            if (!f->out.empty()) {
              std::ofstream o(f->out);
              if (!o) throw UsageError(fmt::format("--output '{}' cannot be written; pass a writable path", f->out));
              o << node.dump(2) << "\n";
              if (!o) throw UsageError(fmt::format("--output '{}' could not be written completely", f->out));
              return kExitOk;
            }
            const std::string text = f->json ? node.dump(2) + "\n" : render_node_environment(node);
            std::fwrite(text.data(), 1, text.size(), stdout);
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
