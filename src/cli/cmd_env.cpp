// `ddpbench env`: this host's environment as `run` and `comm` record it for every host
// (environment.nodes[], core/launch/node_env.hpp): driver, GPUs, topology, CUDA/NCCL/cuDNN/torch
// versions, CPU, kernel, NCCL variables. Needs no GPU; runs on a login node. Run it on
// every node (e.g. `srun -N4 --ntasks-per-node=1 ddpbench env --json`) to compare them by
// hand, or let `run` compare them (environment.node_differences).
#include <fmt/format.h>

#include <memory>

#include "cli/commands.hpp"
#include "core/launch/launch_env.hpp"
#include "core/launch/node_env.hpp"
#include "core/result/result.hpp"
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
  auto* out_opt = app->add_option("-o,--output", f->out,
                                  "Write the JSON node object to this file instead of stdout (implies --json)");
  return {app, [f, out_opt]() -> int {
            // Before the probe: a path that cannot be written is refused at once (a symbolic
            // link, a fifo or device, a read-only file, a missing directory, "").
            if (out_opt->count()) check_writable(f->out, "--output");
            const EnvMap env = current_env();
#ifdef DDPBENCH_HAVE_ENGINE
            const nlohmann::json node = host_environment(env);
#else
            nlohmann::json node = probe_node_environment(env);
            node["torch"] = "none (ddpbench built without libtorch)";
#endif
            if (out_opt->count()) {
              write_file_atomic(f->out, node.dump(2) + "\n");  // core/result: the one writer
              return kExitOk;
            }
            write_stdout(f->json ? node.dump(2) + "\n" : render_node_environment(node));
            return kExitOk;
          }};
}

}  // namespace ddpbench::cli
