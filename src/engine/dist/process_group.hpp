// Rendezvous store and process groups (c10d::TCPStore, ProcessGroupGloo / NCCL).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

#include "core/launch/launch_env.hpp"

namespace ddpbench {

/// Communication backend of the process groups.
enum class BackendKind { kGloo, kNccl };

/// "gloo" or "nccl".
const char* backend_name(BackendKind b);

/// True when this build can create the backend (Gloo needs gloo's headers at build
/// time; NCCL needs a CUDA build of libtorch with USE_C10D_NCCL).
bool backend_available(BackendKind b);

/// The job's TCPStore, as Python's env:// rendezvous builds it: rank 0 serves it at
/// MASTER_ADDR:MASTER_PORT (without waiting for the others: engine/dist/rendezvous.hpp
/// does, naming who is missing); the others connect. Under torchrun
/// with TORCHELASTIC_USE_AGENT_STORE=True every rank is a client of the agent's store,
/// under the prefix "/worker/attempt_<n>". Store operations that wait for a key time out after
/// `timeout`; a peer that accepts the connection and never answers is not caught here
/// (run them under a Deadline, core/launch/watchdog.hpp).
/// Throws c10::Error (DistStoreError) when the store cannot be reached in time.
c10::intrusive_ptr<c10d::Store> connect_store(const LaunchInfo& li, std::chrono::milliseconds timeout);

/// A process group of `size` ranks on `store` (prefix it per group). `device` is the
/// rank's device: Gloo reduces CPU tensors, or CUDA tensors staged through the host;
/// NCCL must be given cuda:<local rank>. Gloo binds
/// to each interface named in GLOO_SOCKET_IFNAME (comma list) when set, else to the
/// address of this host's name, as Python's ProcessGroupGloo does. Collectives time out
/// after `timeout` (NCCL: its watchdog aborts them).
/// Throws UsageError when the backend is not in this build.
c10::intrusive_ptr<c10d::ProcessGroup> make_process_group(BackendKind backend,
                                                          const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                          int size, const at::Device& device,
                                                          std::chrono::milliseconds timeout);

/// Destroys a group's communicators where the linked torch supports it, then drops it.
void destroy_process_group(c10::intrusive_ptr<c10d::ProcessGroup>& pg);

}  // namespace ddpbench
