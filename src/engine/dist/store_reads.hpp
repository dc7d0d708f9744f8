// Rank 0's reads of one key per rank from the job's TCPStore, done over several client
// connections at once from a few hundred ranks on.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"

namespace ddpbench {

/// What another client connection to the job's store needs: the store's address and the
/// launcher's store prefix (li), and the job's own key prefix ("ddpbench/<token>").
struct StoreEndpoint {
  LaunchInfo li;
  std::string prefix;
};

/// From this many keys on, read_keys uses connections of its own.
inline constexpr std::size_t kParallelReadKeys = 256;
/// How many.
inline constexpr int kStoreReaders = 16;

/// The values of `keys` (relative to at.prefix, as `store` names them), in order; with
/// `erase`, each key is deleted once read. Fewer than kParallelReadKeys keys, or an empty
/// at.prefix: through `store`, one after the other. Otherwise over kStoreReaders client
/// connections of its own, opened for the call, each reading an interleaved slice, which the
/// server answers together: a TCPStore server that scans every connection per request (torch
/// 1.13's, and 2.x's without libuv) costs O(connections) per request, so N reads one after
/// the other cost O(N^2) at rank 0 while the other ranks' polls compete for the server.
/// Throws what the store throws (a key that does not appear within `timeout`: c10::Error).
std::vector<std::vector<uint8_t>> read_keys(const c10::intrusive_ptr<c10d::Store>& store, const StoreEndpoint& at,
                                            const std::vector<std::string>& keys, bool erase,
                                            std::chrono::milliseconds timeout);

}  // namespace ddpbench
