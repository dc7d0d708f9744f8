#include "engine/dist/process_group.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <fmt/format.h>

#include <cstdlib>

#include "core/config/run_config.hpp"
#include "core/util/errors.hpp"
#include "engine/compat.hpp"

namespace ddpbench {

const char* backend_name(BackendKind b) { return b == BackendKind::kNccl ? "nccl" : "gloo"; }

bool backend_available(BackendKind b) {
  return b == BackendKind::kNccl ? DDPBENCH_HAVE_NCCL != 0 : DDPBENCH_HAVE_GLOO != 0;
}

c10::intrusive_ptr<c10d::Store> connect_store(const LaunchInfo& li, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<uint16_t>(li.master_port);
  opts.isServer = !li.use_agent_store && li.rank == 0;
  opts.numWorkers = static_cast<size_t>(li.world_size);
  opts.waitWorkers = false;  // the rendezvous (or the first collective) waits, with a bounded message
  opts.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store = compat::make_tcp_store(li.master_addr, opts);
  if (li.use_agent_store) store = c10::make_intrusive<c10d::PrefixStore>(li.store_prefix, store);
  return store;
}

c10::intrusive_ptr<c10d::ProcessGroup> make_process_group(BackendKind backend,
                                                          const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                          int size, const at::Device& device,
                                                          std::chrono::milliseconds timeout) {
  if (backend == BackendKind::kGloo) {
#if DDPBENCH_HAVE_GLOO
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    const char* ifnames = std::getenv("GLOO_SOCKET_IFNAME");
    if (ifnames && *ifnames) {
      for (const auto& name : split_list(ifnames))
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
    } else {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
    return compat::as_process_group(pg, store, rank, size, device, /*is_nccl=*/false);
#else
    throw UsageError("this ddpbench was built without Gloo (no gloo headers at build time); use --backend nccl");
#endif
  }
#if DDPBENCH_HAVE_NCCL
  if (!device.is_cuda()) throw UsageError("--backend nccl needs a GPU per rank; use --backend gloo on CPUs");
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = timeout;
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts);
  return compat::as_process_group(pg, store, rank, size, device, /*is_nccl=*/true);
#else
  (void)device;
  throw UsageError("this ddpbench was built without NCCL (CPU libtorch); use --backend gloo");
#endif
}

void destroy_process_group(c10::intrusive_ptr<c10d::ProcessGroup>& pg) {
  compat::shutdown(pg);
  pg.reset();
}

}  // namespace ddpbench
