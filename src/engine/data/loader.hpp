// A data loader with worker threads: batches of an index list built in the background
// (prefetched) and handed out in order, as torch.utils.data.DataLoader with num_workers
// workers and prefetch_factor 2; and the device-side preprocessing of Fashion-MNIST images.
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/data/idx.hpp"

namespace ddpbench {

/// Per-pixel mean and standard deviation of the 60000 Fashion-MNIST training images, pixels
/// scaled to [0, 1]: computed by ddpbench over train-images-idx3-ubyte.gz (numpy, float64:
/// mean 0.28604, std 0.35302; docs/METHODOLOGY.md "Real data and time-to-loss").
inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;

/// One batch as it leaves the loader: still bytes, on the CPU.
struct DataBatch {
  at::Tensor images;  ///< uint8 [B, 1, rows, cols]
  at::Tensor labels;  ///< int64 [B]
};

/// Batches of `batch` examples of `data` in the order of `indices` (the last one shorter
/// when batch does not divide the count: DataLoader's drop_last=False). With `workers` > 0,
/// that many threads build batches ahead, at most 2 * workers in flight or waiting
/// (DataLoader's prefetch_factor 2); with 0, next() builds each batch itself. Batches come
/// out in order whichever worker built them.
class BatchLoader {
 public:
  /// `data` must outlive the loader. Throws std::invalid_argument when batch < 1, workers < 0
  /// or an index is outside the dataset.
  BatchLoader(const ImageDataset& data, std::vector<int64_t> indices, int64_t batch, int workers,
              std::chrono::milliseconds timeout);
  ~BatchLoader();  ///< stops the workers and joins them
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  /// The next batch, or nullopt after the last. Blocks until it is built; last_wait_s() is
  /// how long it blocked (seconds; with 0 workers the time to build it). Throws
  /// std::runtime_error when no batch arrives within the timeout, and rethrows a worker's error.
  std::optional<DataBatch> next();
  double last_wait_s() const { return last_wait_s_; }
  /// Batches in one pass: ceil(indices / batch).
  size_t size() const { return total_; }

 private:
  DataBatch build(size_t k) const;
  void work();

  const ImageDataset& data_;
  std::vector<int64_t> indices_;
  int64_t batch_;
  size_t total_ = 0, next_build_ = 0, next_out_ = 0, capacity_ = 1;
  std::chrono::milliseconds timeout_;
  double last_wait_s_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::map<size_t, DataBatch> ready_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
};

/// Device-side preprocessing: uint8 [B, 1, H, W] -> float32 [B, 3, size, size] on `device`:
/// x / 255, then (x - mean) / std, then bilinear resize to size x size (align_corners=False,
/// as torch.nn.functional.interpolate and torchvision's Resize on tensors; skipped when
/// size == H == W), then the one grey channel repeated to 3 (expand, made contiguous).
/// Normalising before resizing equals the other order (both are affine per pixel).
at::Tensor preprocess_images(const at::Tensor& images_u8, int64_t size, double mean, double std,
                             const c10::Device& device);

}  // namespace ddpbench
