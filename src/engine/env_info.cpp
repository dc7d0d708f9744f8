#include "engine/env_info.hpp"

#include <ATen/Context.h>
#include <torch/version.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/launch/process.hpp"
#include "core/util/utf8.hpp"
#include "engine/compat.hpp"
#include "engine/timing.hpp"

#ifdef DDPBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace ddpbench {

void to_json(nlohmann::json& j, const RankPlacement& p) {
  j = nlohmann::json{{"rank", p.rank},         {"local_rank", p.local_rank}, {"host", p.host},     {"device", p.device},
                     {"gpu_name", p.gpu_name}, {"gpu_uuid", p.gpu_uuid},     {"bus_id", p.bus_id}, {"cpus", p.cpus}};
}

void from_json(const nlohmann::json& j, RankPlacement& p) {
  j.at("rank").get_to(p.rank);
  j.at("local_rank").get_to(p.local_rank);
  j.at("host").get_to(p.host);
  j.at("device").get_to(p.device);
  p.gpu_name = j.value("gpu_name", std::string());
  p.gpu_uuid = j.value("gpu_uuid", std::string());
  p.bus_id = j.value("bus_id", std::string());
  p.cpus = j.value("cpus", std::string());
}

int distinct_hosts(const std::vector<RankPlacement>& placements, int n) {
  std::set<std::string> hosts;
  for (int r = 0; r < n && r < static_cast<int>(placements.size()); ++r)
    hosts.insert(placements[static_cast<size_t>(r)].host);
  return std::max<int>(1, static_cast<int>(hosts.size()));
}

RankPlacement local_placement(const LaunchInfo& li, const c10::Device& device) {
  RankPlacement p;
  p.rank = li.rank;
  p.local_rank = li.local_rank;
  p.host = host_name();
  p.device = device.str();
  p.cpus = format_cpu_list(affinity_cpus());
#ifdef DDPBENCH_WITH_CUDA
  if (device.is_cuda()) {
    const cudaDeviceProp* prop = at::cuda::getDeviceProperties(device.index());
    p.gpu_name = prop->name;
    p.bus_id = fmt::format("{:08x}:{:02x}:{:02x}.0", prop->pciDomainID, prop->pciBusID, prop->pciDeviceID);
    const auto* u = reinterpret_cast<const unsigned char*>(prop->uuid.bytes);
    p.gpu_uuid = fmt::format(
        "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  }
#endif
  return p;
}

std::string torch_version() { return TORCH_VERSION; }

std::string cuda_version() {
#if defined(DDPBENCH_WITH_CUDA) && defined(CUDA_VERSION)
  return fmt::format("{}.{}", CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
#else
  return "none";
#endif
}

std::string nccl_version() {
#if DDPBENCH_HAVE_NCCL
  return c10d::getNcclVersion();
#else
  return "none";
#endif
}

std::string cudnn_version() {
  if (!at::globalContext().hasCuDNN()) return "none";
  // cuDNN 8 encodes major*1000 + minor*100 + patch, cuDNN 9 major*10000 + minor*100 + patch
  // (cudnn_version.h, CUDNN_VERSION).
  const long v = at::globalContext().versionCuDNN();
  if (v >= 90000) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

nlohmann::json host_environment(const EnvMap& env) {
  nlohmann::json node = probe_node_environment(env);
  node["torch"] = torch_version();
  node["cuda"] = cuda_version();
  node["nccl"] = nccl_version();
  node["cudnn"] = cudnn_version();
#ifdef DDPBENCH_WITH_CUDA
  if (node["gpus"].empty() && find_program("nvidia-smi").empty()) {
    const int n = cuda_device_count();
    for (int i = 0; i < n; ++i) {
      const RankPlacement p = local_placement(LaunchInfo{}, c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(i)));
      const cudaDeviceProp* prop = at::cuda::getDeviceProperties(i);
      node["gpus"].push_back({{"index", i},
                              {"name", p.gpu_name},
                              {"memory_bytes", static_cast<long long>(prop->totalGlobalMem)},
                              {"uuid", p.gpu_uuid},
                              {"bus_id", p.bus_id}});
    }
  }
#endif
  bound_node_environment(node);
  return node;
}

nlohmann::json environment_json(const EnvironmentFacts& f) {
  std::vector<std::string> hosts;
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& p : f.placements) {
    if (std::find(hosts.begin(), hosts.end(), p.host) == hosts.end()) hosts.push_back(p.host);
    if (!p.gpu_name.empty())
      gpus.push_back({{"rank", p.rank},
                      {"host", p.host},
                      {"index", p.local_rank},
                      {"name", p.gpu_name},
                      {"uuid", p.gpu_uuid},
                      {"bus_id", p.bus_id}});
  }
  // The first host's probe (gather_node_environments) where the command has one, else this host's.
  const nlohmann::json* node0 =
      f.nodes.is_array() && !f.nodes.empty() && f.nodes.at(0).is_object() ? &f.nodes.at(0) : nullptr;
  return {{"torch", torch_version()},
          {"cuda", cuda_version()},
          {"nccl", nccl_version()},
          {"driver", node0 ? node0->value("driver", "unknown") : driver_version()},
          {"backend", f.backend},
          {"device_type", f.cuda ? "cuda" : "cpu"},
          {"cpu_model", cpu_model()},
          {"launcher", f.launcher},
          {"rendezvous", f.rendezvous},
          {"world_size", f.world_size},
          {"threads_per_rank", f.threads_per_rank},
          {"hosts", hosts},
          {"ranks", f.placements},
          {"gpus", f.gpus.is_null() ? gpus : f.gpus},
          {"topology", node0 ? node0->value("topology", "") : (f.cuda ? gpu_topology() : std::string())},
          {"slurm_job_id", f.slurm_job_id},
          {"malloc_tuning", f.malloc_tuning},
          {"math", f.math},
          {"env", f.env},
          {"nodes", f.nodes},
          {"node_differences", f.node_differences}};
}

nlohmann::json env_subset(const EnvMap& env) {
  static const char* prefixes[] = {"NCCL_",
                                   "TORCH_NCCL_",
                                   "TORCH_DISTRIBUTED_",
                                   "CUDA_VISIBLE_DEVICES",
                                   "OMP_NUM_THREADS",
                                   "GLOO_SOCKET_IFNAME",
                                   "MASTER_ADDR",
                                   "MASTER_PORT",
                                   "SLURM_JOB_ID",
                                   "SLURM_JOB_NODELIST",
                                   "SLURM_NTASKS",
                                   "SLURM_CPUS_PER_TASK",
                                   "MALLOC_",
                                   "TORCHELASTIC_USE_AGENT_STORE",
                                   "DDPBENCH_"};
  nlohmann::json out = nlohmann::json::object();
  for (const auto& kv : env) {
    for (const char* p : prefixes) {
      if (kv.first.rfind(p, 0) == 0) {
        out[sanitize_utf8(kv.first)] = sanitize_utf8(kv.second, 512);
        break;
      }
    }
  }
  return out;
}

}  // namespace ddpbench
