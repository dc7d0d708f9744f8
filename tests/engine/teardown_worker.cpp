// One rank of the teardown test (tests/engine/test_teardown.cpp starts 2 of them over Gloo
// on 127.0.0.1, with DDPBENCH_TEARDOWN_TRACE set). Usage: teardown_worker ok|fail OUT_DIR
//   1. connects to the job's store and makes three Gloo groups (#1, #2, #3), runs an
//      allreduce on each and a backward pass;
//   2. destroys group #2 with destroy_process_group and keeps #1 and #3 registered only;
//   3. mode fail: the work "fails" (an exception) with #1 and #3 still registered;
//   4. counts its threads, runs teardown_process("teardown-worker", code), counts them again,
//      and rank 0 tries to connect to the store's port;
//   5. writes OUT_DIR/rank<r>.json {threads_before, threads_after, store_port_refused}, waits
//      (at most 60 s) until every rank wrote its file (the built-in spawner ends the other
//      ranks once one exits non-zero), and exits with the code (0 ok, 1 fail).
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/torch.h>

#include <ATen/Parallel.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/launch/launch_env.hpp"
#include "core/util/errors.hpp"
#include "engine/dist/collectives.hpp"
#include "engine/dist/process_group.hpp"
#include "engine/run/teardown.hpp"

using namespace ddpbench;

namespace {

const auto kTimeout = std::chrono::milliseconds(60000);

int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

// True when nothing listens on 127.0.0.1:port any more (connect is refused).
bool port_refused(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool refused = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 && errno == ECONNREFUSED;
  ::close(fd);
  return refused;
}

// Every rank arrives before any goes on: the store outlives every rank's last use of it.
void store_barrier(const c10::intrusive_ptr<c10d::Store>& store, const std::string& key, int world) {
  store->add(key, 1);
  while (store->add(key, 0) < world) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: teardown_worker ok|fail OUT_DIR\n";
    return 2;
  }
  const std::string mode = argv[1], out = argv[2];
  const LaunchInfo li = detect_launch(current_env());
  int code = 0;
  try {
    at::set_num_threads(1);
    auto store = connect_store(li, kTimeout);
    {
      std::vector<c10::intrusive_ptr<c10d::ProcessGroup>> groups;
      for (const char* prefix : {"a/", "b/", "c/"})
        groups.push_back(make_process_group(BackendKind::kGloo, c10::make_intrusive<c10d::PrefixStore>(prefix, store),
                                            li.rank, li.world_size, at::kCPU, kTimeout));
      for (auto& pg : groups) {
        const double sum = allreduce_values(pg, {1.0}, c10d::ReduceOp::SUM, at::kCPU, kTimeout).front();
        if (sum != li.world_size) throw std::runtime_error("allreduce gave a wrong sum");
      }
      auto w = torch::ones({4}, torch::requires_grad());
      (w * w).sum().backward();
      destroy_process_group(groups[1]);
      store_barrier(store, "done", li.world_size);
      if (mode == "fail") throw std::runtime_error("the work failed (test)");
    }  // the worker's references go: #1 and #3 are held by the registry alone
  } catch (const std::exception& e) {
    std::cerr << "teardown_worker: rank " << li.rank << ": " << first_line(e.what()) << "\n";
    code = 1;
  }
  const int before = thread_count();
  teardown_process("teardown-worker", code);
  const int after = thread_count();
  const bool refused = li.rank == 0 ? port_refused(li.master_port) : false;
  const auto file = [&](int r) { return out + "/rank" + std::to_string(r) + ".json"; };
  {
    std::ofstream f(file(li.rank) + ".tmp");
    f << nlohmann::json{{"threads_before", before}, {"threads_after", after}, {"store_port_refused", refused}}.dump()
      << "\n";
  }
  std::rename((file(li.rank) + ".tmp").c_str(), file(li.rank).c_str());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int r = 0; r < li.world_size && std::chrono::steady_clock::now() < deadline; ++r)
    while (!std::ifstream(file(r)).good() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return code;
}
