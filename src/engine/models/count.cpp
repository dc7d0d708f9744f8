#include "engine/models/count.hpp"

namespace ddpbench {

int64_t pooled_side(int64_t side, int64_t k, int64_t stride, int64_t pad) { return (side + 2 * pad - k) / stride + 1; }

int64_t ModelCount::conv(int64_t in_c, int64_t out_c, int64_t k, int64_t stride, int64_t pad, int64_t side, bool bias,
                         int64_t groups) {
  const int64_t out_side = pooled_side(side, k, stride, pad);
  const int64_t per_output = in_c / groups * k * k;
  parameters += out_c * per_output + (bias ? out_c : 0);
  forward_macs += static_cast<double>(out_side * out_side * out_c) * static_cast<double>(per_output);
  return out_side;
}

void ModelCount::linear(int64_t in, int64_t out, int64_t rows, bool bias) {
  parameters += in * out + (bias ? out : 0);
  forward_macs += static_cast<double>(rows) * static_cast<double>(in) * static_cast<double>(out);
}

}  // namespace ddpbench
