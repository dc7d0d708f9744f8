// What a result was measured on: versions, hosts, GPUs, topology.
#pragma once

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "core/launch/node_env.hpp"  // driver_version, cpu_model, gpu_topology

namespace ddpbench {

/// One rank's placement, small and bounded (gathered to rank 0 through the store).
struct RankPlacement {
  int rank = 0;
  int local_rank = 0;
  std::string host;
  std::string device;    ///< "cpu" or "cuda:<i>"
  std::string gpu_name;  ///< e.g. "NVIDIA H100 80GB HBM3"; empty on the CPU
  std::string gpu_uuid;  ///< "GPU-xxxxxxxx-..." as nvidia-smi prints it
  std::string bus_id;    ///< PCI "0000:06:00.0"
  std::string cpus;      ///< CPUs this rank may run on (its affinity mask) as a kernel cpulist ("0-3,8"); "" unknown
};
void to_json(nlohmann::json& j, const RankPlacement& p);
void from_json(const nlohmann::json& j, RankPlacement& p);

/// Distinct hosts among the first `n` ranks of `placements` (a group of ranks 0..n-1); at
/// least 1 (also with no placements).
int distinct_hosts(const std::vector<RankPlacement>& placements, int n);

/// Placement of this process (hostname, device, GPU identity).
RankPlacement local_placement(const LaunchInfo& li, const c10::Device& device);

/// Version of the linked libtorch ("1.13.0", "2.11.0").
std::string torch_version();
/// CUDA version libtorch was built with ("13.0"), or "none" in a CPU build.
std::string cuda_version();
/// NCCL version libtorch uses ("2.28.9"), or "none".
std::string nccl_version();
/// cuDNN version libtorch uses ("9.1.0"), or "none" in a build without cuDNN.
std::string cudnn_version();

/// This host's node object (core/launch/node_env.hpp, environment.nodes[]): the
/// torch-free probes (probe_node_environment) plus this libtorch's torch, CUDA, NCCL and
/// cuDNN versions; where nvidia-smi is absent but CUDA sees GPUs, the GPUs from the CUDA
/// runtime (visible ones only). Bounded to kMaxNodeEnvBytes. Never throws for a missing
/// tool; takes up to ~20 s when nvidia-smi hangs (10 s per call).
nlohmann::json host_environment(const EnvMap& env);

/// What a command knows about where it ran, for environment_json; the rest (versions,
/// driver, CPU model) environment_json probes itself.
struct EnvironmentFacts {
  std::string backend = "none";                 ///< "gloo", "nccl"; "none" for one process without a process group
  bool cuda = false;                            ///< device_type "cuda", else "cpu"
  std::string launcher = "none (one process)";  ///< launcher_name(...) for ranks
  /// {"master_addr", "master_port", "agent_store", "job_id"}; null for one process.
  nlohmann::json rendezvous = nullptr;
  int world_size = 1;
  int threads_per_rank = 0;               ///< intra-op threads of each rank; 0: not set by the command
  std::vector<RankPlacement> placements;  ///< one per rank, rank order: hosts, ranks and gpus come from them
  /// The GPUs one process drives (dataparallel: {"index", "name", "uuid", "bus_id"} each);
  /// null: one per GPU rank of `placements`.
  nlohmann::json gpus = nullptr;
  nlohmann::json math = nullptr;  ///< {"cudnn_allow_tf32", ...} (engine/train/precision math_json); null: not set
  nlohmann::json malloc_tuning = nullptr;  ///< null: not tuned by the command
  std::string slurm_job_id;
  nlohmann::json env = nlohmann::json::object();  ///< the launch variables: env_subset(current environment)
  /// environment.nodes and node_differences (engine/run/launch gather_node_environments); empty:
  /// the driver and topology are probed on this host.
  nlohmann::json nodes = nlohmann::json::array();
  nlohmann::json node_differences = nlohmann::json::array();
};

/// The result file's `environment` object, the same keys for every command (docs/
/// result-schema.md "environment"): torch, cuda, nccl, driver, backend, device_type,
/// cpu_model, launcher, rendezvous, world_size, threads_per_rank, hosts, ranks, gpus,
/// topology, slurm_job_id, malloc_tuning, math, env, nodes, node_differences. Never throws
/// for a missing tool ("unknown" / "").
nlohmann::json environment_json(const EnvironmentFacts& facts);

/// Launch-relevant environment variables (NCCL_*, TORCH_NCCL_*, CUDA_VISIBLE_DEVICES,
/// OMP_NUM_THREADS, GLOO_SOCKET_IFNAME, MASTER_*, SLURM_JOB_*/SLURM_NTASKS*, MALLOC_*, DDPBENCH_*):
/// a bounded subset, recorded so A/B runs show what differed. Names and values are made valid
/// UTF-8 (sanitize_utf8), values cut to 512 bytes on a character boundary.
nlohmann::json env_subset(const EnvMap& env);

}  // namespace ddpbench
