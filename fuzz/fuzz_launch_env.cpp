// libFuzzer target: the launcher-environment parsers (torchrun, OpenMPI, PMIx and Slurm
// variables, Slurm node lists and tasks-per-node, CPU lists). The first byte b picks the
// parser by b % 8: 0-3 detect_launch (then threads_per_rank) on "KEY=VALUE" lines (a bare
// KEY unsets it) laid over the environment of launcher (b / 8) % 5: none, torchrun,
// OpenMPI, Slurm srun, PMIx ('P', '0', '8', '@', 'H' in the corpus); 4 slurm_first_host
// ('4'), whose host must have a name before any bracket group; 5 slurm_tasks_per_node and slurm_tasks_on_node ('5'); 6 parse_cpu_list ('6');
// 7 parse_bounded ('7'). The job id (launcher_job_id) of an accepted environment must be
// valid UTF-8 of bounded size. Any input must end in a result or a UsageError, never in a
// crash, another exception, a huge allocation (run with -malloc_limit_mb) or a result
// outside its documented bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "core/util/errors.hpp"
#include "core/util/parse.hpp"
#include "core/util/utf8.hpp"

namespace {

using namespace ddpbench;

// A bug the fuzzer found: a value past the documented bounds, reported as a crash.
void require(bool ok) {
  if (!ok) std::abort();
}

EnvMap base_env(unsigned which) {
  switch (which % 5) {
    case 1:
      return {{"RANK", "1"},
              {"WORLD_SIZE", "4"},
              {"LOCAL_RANK", "1"},
              {"LOCAL_WORLD_SIZE", "2"},
              {"MASTER_ADDR", "node0"},
              {"MASTER_PORT", "29500"}};
    case 2:
      return {{"OMPI_COMM_WORLD_RANK", "3"},       {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
              {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"SLURM_JOB_ID", "4242"},      {"SLURM_JOB_NODELIST", "gpu[01-04]"}};
    case 3:
      return {{"SLURM_PROCID", "5"},       {"SLURM_NTASKS", "8"},
              {"SLURM_STEP_ID", "0"},      {"SLURM_LOCALID", "1"},
              {"SLURM_NODEID", "2"},       {"SLURM_TASKS_PER_NODE", "2(x3),2"},
              {"SLURM_JOB_ID", "77"},      {"SLURM_JOB_NODELIST", "rack[1-2]-n[01-04]"},
              {"SLURM_CPUS_PER_TASK", "4"}};
    case 4:
      return {{"PMIX_RANK", "2"},
              {"PMI_SIZE", "4"},
              {"MPI_LOCALRANKID", "0"},
              {"MPI_LOCALNRANKS", "2"},
              {"SLURM_JOB_NODELIST", "a[3-4]"}};
    default: return {};
  }
}

void check_launch(const std::string& text, unsigned which) {
  EnvMap env = base_env(which);
  size_t start = 0;
  while (start <= text.size()) {
    size_t eol = text.find('\n', start);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(start, eol - start);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    else if (!line.empty()) env.erase(line);  // a bare name unsets it
    start = eol + 1;
  }
  LaunchInfo li;
  try {
    li = detect_launch(env);
  } catch (const UsageError&) {
    return;
  }
  require(li.world_size >= 1 && li.world_size <= kMaxWorldSize);
  require(li.rank >= 0 && li.rank < li.world_size);
  require(li.local_world_size >= 1 && li.local_rank >= 0 && li.local_rank < li.local_world_size);
  require(li.master_port >= 1 && li.master_port <= 65535);
  // The job id the rendezvous compares and records is text: valid UTF-8, bounded.
  const std::string job = launcher_job_id(env, li.launcher);
  require(is_valid_utf8(job) && job.size() <= 2 * kMaxJobIdBytes + 16);
  try {
    const int threads = threads_per_rank(env, li.launcher, li.local_world_size, 8);
    require(threads >= 1 && threads <= kMaxThreadsPerRank);
  } catch (const UsageError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (selector % 8) {
      case 0:
      case 1:
      case 2:
      case 3: check_launch(text, selector / 8); break;
      case 4: {
        const std::string host = slurm_first_host(text);
        // A name before any group: never "1" from "[1-3]", never a bracket.
        require(!host.empty() && host.size() <= text.size() && text[0] != '[' &&
                host.find_first_of("[],") == std::string::npos);
        break;
      }
      case 5: {
        const std::vector<int> per_node = slurm_tasks_per_node(text);
        require(!per_node.empty() && per_node.size() <= static_cast<size_t>(kMaxWorldSize));
        for (size_t node : {size_t{0}, per_node.size() / 2, per_node.size() - 1, per_node.size()}) {
          const int n = slurm_tasks_on_node(text, static_cast<long long>(node));
          require(n == per_node[node < per_node.size() ? node : 0]);
        }
        break;
      }
      case 6: {
        const std::vector<int> cpus = parse_cpu_list(text);
        require(cpus.size() <= static_cast<size_t>(kMaxCpuId) + 1);
        require(parse_cpu_list(format_cpu_list(cpus)) == cpus);  // the format round-trips
        break;
      }
      case 7: {
        const long long v = parse_bounded(text, "X", -1000, 1LL << 40);
        require(v >= -1000 && v <= (1LL << 40));
        require(parse_int(std::to_string(v), "X") == v);
        break;
      }
    }
  } catch (const UsageError&) {
  }
  return 0;
}
