// How the ranks of one job find each other and prove they belong together, over
// c10d's TCPStore, with every wait bounded by --timeout (core/launch/watchdog.hpp).
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "core/launch/launch_env.hpp"
#include "engine/env_info.hpp"

namespace ddpbench {

/// What a rank brings to the rendezvous.
struct JoinRequest {
  std::string job_id;  ///< launcher_job_id(): "" when the launcher names none
  std::string config;  ///< the run configuration as rank 0 must see it (ranks must agree)
  RankPlacement placement;
};

/// The job once every rank joined.
struct Rendezvous {
  /// The store, with every key under "ddpbench/<token>/", so keys of a stranger that
  /// reached the same store never mix with this job's.
  c10::intrusive_ptr<c10d::Store> store;
  std::string token;  ///< rank 0's per-launch token (random, 16 hex digits)
  std::string prefix;  ///< "ddpbench/<token>": the store's key prefix (StoreEndpoint::prefix)
  /// Rank 0: every rank's placement in rank order (about 200 bytes each); others: empty.
  std::vector<RankPlacement> placements;
  /// Rank 0 when it serves the store: its server's backend, "libuv" or "poll"
  /// (compat::tcp_store_server_backend); "" on other ranks and under torchrun's agent store.
  std::string store_server;
};

/// Connects to (rank 0: serves) the TCPStore at li.master_addr:li.master_port and joins
/// the job:
///  1. rank 0 publishes the job record {token, job id, world size, configuration};
///  2. every rank reads it and is refused (UsageError, exit 2) when it belongs to another
///     job (both have a launcher job id and they differ, or the world sizes differ) or
///     was started with other flags;
///  3. it claims its rank (an atomic add on "claim/<rank>"); a rank already claimed is
///     refused (UsageError: another job shares the port, or two ranks have one RANK);
///  4. it publishes its placement and is counted; rank 0 waits until all world_size
///     ranks are counted.
/// Errors, each one line naming the peer: MASTER_ADDR that does not resolve and a port
/// rank 0 cannot listen on (UsageError); a rank that refused its input and told the store
/// (tell_rank0_refused) while rank 0 waits for it (UsageError on rank 0: "rank 1 refused
/// its input: <its line>"); a store that does not answer within `timeout`
/// (connect, handshake or read: the watchdog exits with code 1); ranks that did not join
/// within `timeout` (std::runtime_error naming them, at most 8 by number).
Rendezvous rendezvous(const LaunchInfo& li, const JoinRequest& me, std::chrono::milliseconds timeout);

/// For a rank other than 0 that refused its input (`line`: the message of its UsageError,
/// without "rank N: "): connects to the store at li.master_addr:li.master_port as a client,
/// waiting at most `wait` for rank 0 to serve it, and leaves the line there under
/// "ddpbench/refused/<rank>" (and counts it under "ddpbench/refused"), so that rank 0,
/// waiting for it in rendezvous(), says why instead of timing out. Best effort: never
/// throws; a store that cannot be reached within `wait` is left alone.
void tell_rank0_refused(const LaunchInfo& li, const std::string& line, std::chrono::milliseconds wait);

/// For rank 0, which serves the store: throws UsageError naming MASTER_ADDR when none of
/// the addresses li.master_addr resolves to belongs to this host (a bind to it fails with
/// EADDRNOTAVAIL: "0.0.0.1", another machine's address), so rank 0 does not serve on one
/// address and then talk to a store somewhere else. Says nothing when the name does not
/// resolve (check_master_addr says that) or a bind fails for another reason.
void check_serving_addr(const LaunchInfo& li);

/// Checks that `host` resolves (getaddrinfo); throws UsageError naming MASTER_ADDR otherwise.
void check_master_addr(const std::string& host);

}  // namespace ddpbench
