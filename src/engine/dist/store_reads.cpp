#include "engine/dist/store_reads.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <exception>
#include <thread>

#include "engine/compat.hpp"

namespace ddpbench {

std::vector<std::vector<uint8_t>> read_keys(const c10::intrusive_ptr<c10d::Store>& store, const StoreEndpoint& at,
                                            const std::vector<std::string>& keys, bool erase,
                                            std::chrono::milliseconds timeout) {
  std::vector<std::vector<uint8_t>> out(keys.size());
  auto read = [&](c10d::Store& s, std::size_t first, std::size_t step) {
    for (std::size_t i = first; i < keys.size(); i += step) {
      out[i] = s.get(keys[i]);
      if (erase) s.deleteKey(keys[i]);
    }
  };
  if (keys.size() < kParallelReadKeys || at.prefix.empty()) {
    read(*store, 0, 1);
    return out;
  }
  std::vector<std::exception_ptr> failed(kStoreReaders);
  std::vector<std::thread> readers;
  for (int t = 0; t < kStoreReaders; ++t)
    readers.emplace_back([&, t] {
      try {
        c10d::TCPStoreOptions opts;
        opts.port = static_cast<uint16_t>(at.li.master_port);
        opts.isServer = false;
        opts.waitWorkers = false;
        opts.timeout = timeout;
        c10::intrusive_ptr<c10d::Store> s = compat::make_tcp_store(at.li.master_addr, opts);
        if (at.li.use_agent_store) s = c10::make_intrusive<c10d::PrefixStore>(at.li.store_prefix, s);
        s = c10::make_intrusive<c10d::PrefixStore>(at.prefix, s);
        read(*s, static_cast<std::size_t>(t), kStoreReaders);
      } catch (...) {
        failed[static_cast<std::size_t>(t)] = std::current_exception();
      }
    });
  for (auto& t : readers) t.join();
  for (const auto& e : failed)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace ddpbench
