#include "engine/data/loader.hpp"

#include <ATen/ops/upsample_bilinear2d.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace ddpbench {

BatchLoader::BatchLoader(const ImageDataset& data, std::vector<int64_t> indices, int64_t batch, int workers,
                         std::chrono::milliseconds timeout)
    : data_(data), indices_(std::move(indices)), batch_(batch), timeout_(timeout) {
  if (batch < 1 || workers < 0) throw std::invalid_argument("BatchLoader: batch >= 1 and workers >= 0");
  for (auto i : indices_)
    if (i < 0 || i >= data_.n)
      throw std::invalid_argument("BatchLoader: index " + std::to_string(i) + " is outside the dataset");
  total_ = (indices_.size() + static_cast<size_t>(batch_) - 1) / static_cast<size_t>(batch_);
  capacity_ = static_cast<size_t>(std::max(1, 2 * workers));
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

DataBatch BatchLoader::build(size_t k) const {
  const size_t begin = k * static_cast<size_t>(batch_);
  const size_t end = std::min(indices_.size(), begin + static_cast<size_t>(batch_));
  const auto b = static_cast<int64_t>(end - begin);
  const int64_t px = data_.rows * data_.cols;
  DataBatch out;
  out.images = at::empty({b, 1, data_.rows, data_.cols}, at::TensorOptions().dtype(at::kByte));
  out.labels = at::empty({b}, at::TensorOptions().dtype(at::kLong));
  auto* img = out.images.data_ptr<uint8_t>();
  auto* lab = out.labels.data_ptr<int64_t>();
  for (int64_t j = 0; j < b; ++j) {
    const int64_t i = indices_[begin + static_cast<size_t>(j)];
    std::memcpy(img + j * px, data_.pixels.data() + i * px, static_cast<size_t>(px));
    lab[j] = data_.labels[static_cast<size_t>(i)];
  }
  return out;
}

void BatchLoader::work() {
  for (;;) {
    size_t k = 0;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || (next_build_ < total_ && next_build_ < next_out_ + capacity_); });
      if (stop_) return;
      k = next_build_++;
    }
    try {
      DataBatch b = build(k);
      std::lock_guard<std::mutex> lk(mu_);
      ready_.emplace(k, std::move(b));
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu_);
      if (!error_) error_ = std::current_exception();
    }
    cv_.notify_all();
  }
}

std::optional<DataBatch> BatchLoader::next() {
  const auto t0 = std::chrono::steady_clock::now();
  const auto waited = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  if (next_out_ >= total_) {
    last_wait_s_ = 0;
    return std::nullopt;
  }
  if (threads_.empty()) {
    DataBatch b = build(next_out_++);
    last_wait_s_ = waited();
    return b;
  }
  std::unique_lock<std::mutex> lk(mu_);
  const size_t k = next_out_;
  if (!cv_.wait_for(lk, timeout_, [&] { return error_ || ready_.count(k) > 0; }))
    throw std::runtime_error("the data loader built no batch within the timeout (" +
                             std::to_string(timeout_.count() / 1000) + " s)");
  if (error_) std::rethrow_exception(error_);
  auto node = ready_.extract(k);
  ++next_out_;
  lk.unlock();
  cv_.notify_all();  // a slot is free
  last_wait_s_ = waited();
  return std::move(node.mapped());
}

at::Tensor preprocess_images(const at::Tensor& images_u8, int64_t size, double mean, double std,
                             const c10::Device& device) {
  at::Tensor x = images_u8.to(device, /*non_blocking=*/true).to(at::kFloat).div_(255.0).sub_(mean).div_(std);
  if (x.size(2) != size || x.size(3) != size) x = at::upsample_bilinear2d(x, {size, size}, /*align_corners=*/false);
  return x.expand({x.size(0), 3, size, size}).contiguous();
}

}  // namespace ddpbench
