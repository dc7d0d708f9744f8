#include "engine/data/idx.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <filesystem>
#include <memory>

#include "core/util/errors.hpp"

namespace ddpbench {
namespace {

struct GzCloser {
  void operator()(gzFile_s* f) const {
    if (f) gzclose(f);
  }
};

// Reads up to `n` bytes; returns how many were read. Throws on a zlib error (corrupt gzip).
size_t gz_read(gzFile f, void* buf, size_t n, const std::string& path) {
  size_t got = 0;
  auto* p = static_cast<unsigned char*>(buf);
  while (got < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
    const int r = gzread(f, p + got, chunk);
    if (r < 0) {
      int err = 0;
      const char* msg = gzerror(f, &err);
      throw UsageError(
          fmt::format("{} is corrupt ({}); reinstall it (apt-get install --reinstall "
                      "dataset-fashion-mnist) or point --data-dir at intact files",
                      path, msg ? msg : "zlib error"));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

uint32_t big_endian(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

std::string fix_words() {
  return "install dataset-fashion-mnist (scripts/setup.sh) or point --data-dir at the folder of the four IDX .gz files";
}

}  // namespace

IdxArray read_idx(const std::string& path, uint32_t magic) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UsageError(fmt::format("{} is missing; {}", path, fix_words()));
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  if (!f) throw UsageError(fmt::format("{} cannot be opened; check its permissions or {}", path, fix_words()));
  unsigned char head[4];
  if (gz_read(f.get(), head, 4, path) != 4)
    throw UsageError(fmt::format("{} is too short for an IDX file; {}", path, fix_words()));
  const uint32_t m = big_endian(head);
  if (m != magic)
    throw UsageError(fmt::format("{} has IDX magic 0x{:08x}, expected 0x{:08x}; it is not this dataset file, {}", path,
                                 m, magic, fix_words()));
  IdxArray a;
  const int ndims = static_cast<int>(magic & 0xff);
  int64_t total = 1;
  for (int i = 0; i < ndims; ++i) {
    if (gz_read(f.get(), head, 4, path) != 4)
      throw UsageError(fmt::format("{} ends inside its header; {}", path, fix_words()));
    const int64_t d = big_endian(head);
    if (d <= 0 || total > kMaxIdxBytes / d)
      throw UsageError(fmt::format("{} declares a dimension of {}, more than {} MiB of data in all; it is corrupt, {}",
                                   path, d, kMaxIdxBytes >> 20, fix_words()));
    a.dims.push_back(d);
    total *= d;
  }
  // Read in chunks, the vector growing with the bytes that arrive: memory follows the data
  // the file holds, not what its header declares.
  constexpr size_t kChunk = size_t{16} << 20;
  size_t got = 0;
  while (got < static_cast<size_t>(total)) {
    const size_t want = std::min(kChunk, static_cast<size_t>(total) - got);
    a.data.resize(got + want);
    const size_t n = gz_read(f.get(), a.data.data() + got, want, path);
    got += n;
    if (n < want) break;
  }
  a.data.resize(got);
  if (got != static_cast<size_t>(total))
    throw UsageError(fmt::format("{} holds {} data bytes, its header declares {}; it is truncated, {}", path, got,
                                 total, fix_words()));
  unsigned char extra;
  if (gz_read(f.get(), &extra, 1, path) != 0)
    throw UsageError(fmt::format("{} holds more data than its header declares ({} bytes); it is corrupt, {}", path,
                                 total, fix_words()));
  return a;
}

ImageDataset load_idx_split(const std::string& dir, const std::string& split, long long limit, int num_classes) {
  if (split != "train" && split != "test")
    throw UsageError(fmt::format("unknown split '{}'; use train or test", split));
  const bool train = split == "train";
  const std::string ip = (std::filesystem::path(dir) / (train ? kTrainImagesFile : kTestImagesFile)).string();
  const std::string lp = (std::filesystem::path(dir) / (train ? kTrainLabelsFile : kTestLabelsFile)).string();
  IdxArray images = read_idx(ip, kIdxImagesMagic);
  IdxArray labels = read_idx(lp, kIdxLabelsMagic);
  if (images.dims[0] != labels.dims[0])
    throw UsageError(fmt::format("{} holds {} images but {} holds {} labels; the files belong to different sets, {}",
                                 ip, images.dims[0], lp, labels.dims[0], fix_words()));
  ImageDataset d;
  d.n = images.dims[0];
  d.rows = images.dims[1];
  d.cols = images.dims[2];
  d.num_classes = num_classes;
  if (limit > 0 && limit < d.n) d.n = limit;
  images.data.resize(static_cast<size_t>(d.n * d.rows * d.cols));
  labels.data.resize(static_cast<size_t>(d.n));
  d.pixels = std::move(images.data);
  d.labels = std::move(labels.data);
  for (int64_t i = 0; i < d.n; ++i)
    if (d.labels[static_cast<size_t>(i)] >= num_classes)
      throw UsageError(fmt::format("{} has label {} at example {}, beyond the {} classes; it is corrupt, {}", lp,
                                   int{d.labels[static_cast<size_t>(i)]}, i, num_classes, fix_words()));
  return d;
}

}  // namespace ddpbench
