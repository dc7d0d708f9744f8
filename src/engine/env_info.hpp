// What a result was measured on: versions, hosts, GPUs, topology.
#pragma once

#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <string>

#include "core/launch_env.hpp"

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

/// Placement of this process (hostname, device, GPU identity).
RankPlacement local_placement(const LaunchInfo& li, const c10::Device& device);

/// Version of the linked libtorch ("1.13.0", "2.11.0").
std::string torch_version();
/// CUDA version libtorch was built with ("13.0"), or "none" in a CPU build.
std::string cuda_version();
/// NCCL version libtorch uses ("2.28.9"), or "none".
std::string nccl_version();
/// NVIDIA driver version from nvidia-smi, or "none" where nvidia-smi is absent.
std::string driver_version();
/// The CPU's model name from /proc/cpuinfo ("AMD EPYC 7763 64-Core Processor"), or "".
std::string cpu_model();
/// Output of `nvidia-smi topo -m` with terminal escapes removed, or "" where absent.
std::string gpu_topology();

/// Launch-relevant environment variables (NCCL_*, TORCH_NCCL_*, CUDA_VISIBLE_DEVICES,
/// OMP_NUM_THREADS, GLOO_SOCKET_IFNAME, MASTER_*, SLURM_JOB_*/SLURM_NTASKS*, MALLOC_*, DDPBENCH_*):
/// a bounded subset, recorded so A/B runs show what differed.
nlohmann::json env_subset(const EnvMap& env);

}  // namespace ddpbench
