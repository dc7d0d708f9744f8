// libFuzzer target: the IDX reader of `run --data fashion-mnist` (engine/data/idx, torch-free),
// on the input as a file (a memfd; zlib reads it gzip-compressed or plain). The first byte
// picks the magic read against (images or labels). Any input must end in an array whose data
// is exactly the product of its dimensions and at most kMaxIdxBytes, or in a UsageError:
// never a crash, a hang, another exception or an allocation the input does not hold.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/util/errors.hpp"
#include "engine/data/idx.hpp"

namespace {
void require(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ddpbench;
  if (size < 1) return 0;
  const uint32_t magic = data[0] % 2 ? kIdxLabelsMagic : kIdxImagesMagic;
  const int fd = ::memfd_create("idx", 0);
  if (fd < 0) return 0;
  size_t off = 1;
  while (off < size) {
    const ssize_t n = ::write(fd, data + off, size - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    const IdxArray a = read_idx(path, magic);
    require(a.dims.size() == (magic & 0xff));
    int64_t total = 1;
    for (int64_t d : a.dims) {
      require(d > 0);
      total *= d;
    }
    require(total <= kMaxIdxBytes && static_cast<int64_t>(a.data.size()) == total);
  } catch (const UsageError&) {
  }
  ::close(fd);
  return 0;
}
