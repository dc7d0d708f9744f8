#include "engine/dist/store_probe.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/util/errors.hpp"
#include "core/launch/watchdog.hpp"
#include "engine/compat.hpp"

namespace ddpbench {
namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// One non-blocking connect to `ai` within the deadline: the socket, or -1 with errno.
int connect_once(const addrinfo* ai, Clock::time_point deadline) {
  const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return -1;
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) return fd;
  if (errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, ms_left(deadline)) == 1) {
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err == 0) return fd;
      errno = err;
    } else {
      errno = ETIMEDOUT;
    }
  }
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return -1;
}

// Connects to host:port, retrying refused connections (backoff 50 ms doubling to 1 s) until the
// deadline. Throws std::runtime_error with the last reason when the deadline passes.
int connect_until(const std::string& host, int port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    throw std::runtime_error(fmt::format("{} does not resolve ({})", host, ::gai_strerror(rc)));
  std::string last = "no address";
  auto backoff = std::chrono::milliseconds(50);
  for (;;) {
    for (const addrinfo* ai = res; ai; ai = ai->ai_next) {
      const int fd = connect_once(ai, deadline);
      if (fd >= 0) {
        ::freeaddrinfo(res);
        return fd;
      }
      last = std::strerror(errno);
    }
    if (Clock::now() + backoff >= deadline) break;
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  ::freeaddrinfo(res);
  throw std::runtime_error(fmt::format("could not connect: {}", last));
}

std::string hex_prefix(const unsigned char* b, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += fmt::format("{}{:02x}", i ? " " : "", b[i]);
  return out;
}

}  // namespace

void check_store_peer(const std::string& host, int port, const std::string& what, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Fd s{connect_until(host, port, deadline)};
  const std::string phase = fmt::format("(phase: {})", current_phase());
  const std::string fix = fmt::format(
      "another program listens on {}:{}; give the job a free MASTER_PORT (rank 0 serves the store there)", host, port);

  const std::vector<unsigned char> request = compat::store_check_request("ddpbench/store-check");
  for (size_t sent = 0; sent < request.size();) {
    pollfd p{s.fd, POLLOUT, 0};
    if (::poll(&p, 1, ms_left(deadline)) != 1) throw std::runtime_error("connected, but it took no request");
    const ssize_t n = ::send(s.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0)
      throw UsageError(fmt::format("{} closed the connection before taking ddpbench's store check ({}) {}: {}",
                                   what, std::strerror(errno), phase, fix));
    sent += static_cast<size_t>(n);
  }

  unsigned char reply[compat::kStoreCheckReplyBytes];
  size_t got = 0;
  while (got < sizeof reply) {
    pollfd p{s.fd, POLLIN, 0};
    const int rc = ::poll(&p, 1, ms_left(deadline));
    if (rc == 0) throw std::runtime_error("connected, but it sent no answer");
    if (rc < 0 && errno == EINTR) continue;
    const ssize_t n = ::recv(s.fd, reply + got, sizeof reply - got, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0)
      throw UsageError(fmt::format("{} closed the connection after {} of the {} bytes of a PyTorch TCPStore's reply "
                                   "to ddpbench's store check {}: it is not a TCPStore server; {}",
                                   what, got, sizeof reply, phase, fix));
    got += static_cast<size_t>(n);
  }
  if (!compat::store_check_reply_ok(reply))
    throw UsageError(fmt::format("{} is not a PyTorch TCPStore server {}: it answered ddpbench's store check with {} "
                                 "(a TCPStore answers with the 8 bytes of the value 0; ddpbench reads no more than "
                                 "that); {}",
                                 what, phase, hex_prefix(reply, sizeof reply), fix));
}

}  // namespace ddpbench
