// One host's environment (environment.nodes[], schema 1.6): what it is, how it
// is probed without torch (nvidia-smi, /proc, uname), bounded, compared across hosts and
// printed. The libtorch fields (torch, CUDA, NCCL, cuDNN versions) are filled in by
// engine/env_info. Torch-free.
//
// A node object:
//   {"host": "node1", "ranks": [0, 1],                       (ranks: added by rank 0)
//    "driver": "550.54.15" | "none",                         (nvidia-smi; "none" without it)
//    "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "memory_bytes": 85520809984,
//              "uuid": "GPU-...", "bus_id": "00000000:06:00.0"}],   ([] without GPUs)
//    "topology": "<nvidia-smi topo -m>" | "",
//    "cuda": "12.4" | "none", "nccl": "2.21.5" | "none", "cudnn": "9.1.0" | "none", "torch": "2.4.0",
//    "cpu_model": "AMD EPYC 7763 64-Core Processor", "cpus": 128 (online CPUs),
//    "kernel": "6.1.0-18-amd64" (uname -r),
//    "env": {"NCCL_DEBUG": "INFO", ...}                      (NCCL_*, TORCH_NCCL_*, GLOO_SOCKET_IFNAME)
//    "truncated": ["topology"]                               (only when something was cut to fit)}
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"

namespace ddpbench {

/// Largest node object (its JSON text, bytes) published through the store and kept in a
/// result file.
inline constexpr std::size_t kMaxNodeEnvBytes = 16 * 1024;

/// NVIDIA driver version from nvidia-smi, "none" where nvidia-smi is absent, "unknown"
/// where it fails (no driver loaded, or it ran longer than 10 s).
std::string driver_version();
/// The CPU's model name from /proc/cpuinfo ("AMD EPYC 7763 64-Core Processor"), or "".
std::string cpu_model();
/// Output of `nvidia-smi topo -m` with terminal escapes removed, or "" where absent.
std::string gpu_topology();
/// The running kernel's release (uname(2), as `uname -r` prints it), or "".
std::string kernel_release();
/// CPUs online on this host (sysconf _SC_NPROCESSORS_ONLN, as `getconf _NPROCESSORS_ONLN`).
int online_cpu_count();

/// Parses `nvidia-smi --query-gpu=index,name,memory.total,uuid,pci.bus_id
/// --format=csv,noheader,nounits` (memory.total in MiB) into node GPU objects {index, name,
/// memory_bytes, uuid, bus_id}. Lines that do not have 5 fields are skipped; a memory field
/// that is not a number ("[N/A]") gives memory_bytes 0.
nlohmann::json parse_gpu_query(const std::string& csv);

/// This host's GPUs from nvidia-smi (all of the node's, whatever CUDA_VISIBLE_DEVICES
/// says), [] where nvidia-smi is absent or fails.
nlohmann::json query_gpus();

/// The variables of `env` that shape communication and differ meaningfully between hosts:
/// NCCL_*, TORCH_NCCL_*, GLOO_SOCKET_IFNAME (at most 64 variables; names and values made
/// valid UTF-8 by sanitize_utf8, values cut to 512 bytes on a character boundary).
nlohmann::json node_env_vars(const EnvMap& env);

/// This host's node object from the torch-free probes: host, driver, gpus, topology,
/// cpu_model, cpus, kernel, env; torch, cuda, nccl and cudnn are "none" (a libtorch build
/// overwrites them: engine/env_info's host_environment). Bounded with bound_node_environment.
nlohmann::json probe_node_environment(const EnvMap& env);

/// Makes `node`'s JSON text at most `max_bytes` long (max_bytes >= 1024): strings other
/// than the topology are cut to 256 bytes (on a character boundary), then the topology text is cut (and ends with
/// "[truncated by ddpbench: kept K of N bytes]"), then env variables, then GPUs are dropped
/// from the end; every field cut is named in node["truncated"]. A node already within the
/// bound is left as it is.
void bound_node_environment(nlohmann::json& node, std::size_t max_bytes = kMaxNodeEnvBytes);

/// Fields in which the node objects `nodes` (an array) differ, for hosts that do differ:
///   [{"field": "driver", "values": {"550.54": ["node1", "node2"], "535.1": ["node3"]}}]
/// Fields compared, in this order: driver, gpu_model (the distinct GPU names of a node,
/// sorted, joined with " + "; "none" without GPUs), gpu_count, topology, cuda, nccl,
/// cudnn, torch, kernel, cpu_model, cpus, then every variable in any node's env as
/// "env.<NAME>" ("(unset)" where a node lacks it). A node object without a field
/// reads "(unrecorded)". Nodes holding an "error" (their environment never arrived) are
/// left out. Fewer than 2 nodes: []. Never throws on a malformed node (fields of the
/// wrong type read as their JSON text).
nlohmann::json node_differences(const nlohmann::json& nodes);

/// One line per entry of node_differences(), without a "warning: " prefix, most common
/// value first: "nodes differ in driver: 550.54 on node1,node2; 535.1 on node3". Long or
/// multi-line values (topology) are named "variant 1", "variant 2"; at most 8 hosts are
/// named per value ("... and 3 more").
std::vector<std::string> node_difference_lines(const nlohmann::json& differences);

/// A node object for people (`ddpbench env`): one "name: value" line per field, the GPUs
/// as a table, then the topology and the variables.
std::string render_node_environment(const nlohmann::json& node);

}  // namespace ddpbench
