#pragma once

#include <chrono>
#include <string>

namespace ddpbench {

/// Before libtorch's TCPStore client reads from MASTER_ADDR:MASTER_PORT, checks that the peer
/// is a PyTorch TCPStore server: one connection, one request the linked torch's client would
/// send (compat::store_check_request: an `add` of 0 to a ddpbench key, after the `validate`
/// message torch 2.x servers expect first), and a reply of exactly
/// compat::kStoreCheckReplyBytes (8) that must be the key's value, 0. Nothing longer is ever read,
/// so a program that answers with a length prefix (2 GiB, say) or with text costs 8 bytes,
/// not an allocation of that length (libtorch's own client allocates what the length says).
/// Connection refused is retried (the server may not listen yet) until `timeout`.
/// `what` names the peer in messages ("the rendezvous store at host:port").
/// Throws UsageError (one line, the peer and the fix) when the peer answers something else or
/// closes the connection without a reply; std::runtime_error when it cannot be reached or
/// sends nothing within `timeout` (the caller words that as its usual timeout line).
void check_store_peer(const std::string& host, int port, const std::string& what, std::chrono::milliseconds timeout);

}  // namespace ddpbench
