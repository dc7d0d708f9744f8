// Reader of the IDX files of MNIST and Fashion-MNIST (gzip-compressed, as Debian's
// dataset-fashion-mnist ships them) into memory. Format (http://yann.lecun.com/exdb/mnist/,
// "FILE FORMATS FOR THE MNIST DATABASE"): big-endian int32 magic 0x00000800 | type << 8 | dims
// (type 0x08 = unsigned byte), one big-endian int32 size per dimension, then the data,
// row-major. zlib reads both gzip and plain files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench {

/// Magic numbers of the two unsigned-byte IDX files of (Fashion-)MNIST.
inline constexpr uint32_t kIdxImagesMagic = 0x00000803;  ///< ubyte, 3 dims: [N, rows, cols]
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;  ///< ubyte, 1 dim: [N]

/// One unsigned-byte IDX array.
struct IdxArray {
  std::vector<int64_t> dims;  ///< sizes, outermost first
  std::vector<uint8_t> data;  ///< product(dims) bytes, row-major
};

/// The most data an IDX file may declare: 1 GiB (Fashion-MNIST's largest file holds 47 MB).
inline constexpr int64_t kMaxIdxBytes = int64_t{1} << 30;

/// Reads `path` (gzip or plain) and checks that its magic is `magic` and that it holds
/// exactly product(dims) data bytes, at most kMaxIdxBytes; memory grows with the bytes read,
/// not with what the header declares. Throws UsageError, one line naming the file and the
/// fix, when it is missing, unreadable, not gzip-valid, has another magic, declares more
/// than kMaxIdxBytes, or is short or long (a truncated download or another file).
IdxArray read_idx(const std::string& path, uint32_t magic);

/// An image classification split in memory: `n` grey images of rows x cols bytes.
struct ImageDataset {
  int64_t n = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;  ///< n * rows * cols, image-major, 0..255
  std::vector<uint8_t> labels;  ///< n class indices
  int num_classes = 10;
};

/// The four files of a Fashion-MNIST (or MNIST) folder.
inline constexpr const char* kTrainImagesFile = "train-images-idx3-ubyte.gz";
inline constexpr const char* kTrainLabelsFile = "train-labels-idx1-ubyte.gz";
inline constexpr const char* kTestImagesFile = "t10k-images-idx3-ubyte.gz";
inline constexpr const char* kTestLabelsFile = "t10k-labels-idx1-ubyte.gz";

/// Loads split "train" or "test" from `dir` (the files above), keeping the first `limit`
/// examples when limit > 0. Throws UsageError (as read_idx) for a missing or corrupt file,
/// when images and labels disagree in count, or a label is >= `num_classes`.
ImageDataset load_idx_split(const std::string& dir, const std::string& split, long long limit = 0,
                            int num_classes = 10);

}  // namespace ddpbench
