// Parameters and forward multiply-adds of a model counted from its architecture, without
// building it: what `ddpbench models` prints for the families whose layers are written out
// below (building a model fills every weight with random numbers, about 2 ns an element on
// one core, seconds for the whole zoo). The conventions are those of engine/models/flops.hpp
// (convolutions, linear layers and attention's two matrix products; one multiply-add = one
// MAC), and tests/engine/test_models.cpp checks each count against the built model.
#pragma once

#include <cstdint>

namespace ddpbench {

/// A model's count, accumulated layer by layer.
struct ModelCount {
  int64_t parameters = 0;   ///< elements of every parameter (weights, biases, norms' affine, embeddings)
  double forward_macs = 0;  ///< multiply-adds of one forward pass of one example

  /// A 2-D convolution with a k x k kernel on a side x side input of in_c channels, as
  /// torch.nn.Conv2d: returns the output side, floor((side + 2 pad - k) / stride) + 1
  /// (PyTorch's shape rule, dilation 1); adds out_c x in_c/groups x k^2 weights (+ out_c
  /// biases) and out_side^2 x out_c x in_c/groups x k^2 MACs.
  int64_t conv(int64_t in_c, int64_t out_c, int64_t k, int64_t stride, int64_t pad, int64_t side, bool bias,
               int64_t groups = 1);
  /// A linear layer in -> out applied to `rows` vectors: in x out weights (+ out biases),
  /// rows x in x out MACs.
  void linear(int64_t in, int64_t out, int64_t rows = 1, bool bias = true);
  /// A normalisation's affine weight and bias (BatchNorm2d, LayerNorm): 2 x channels; no MACs.
  void norm(int64_t channels) { parameters += 2 * channels; }
};

/// Output side of a max pool (torch.nn.MaxPool2d, ceil_mode off): floor((side + 2 pad - k) / stride) + 1.
int64_t pooled_side(int64_t side, int64_t k, int64_t stride, int64_t pad = 0);

}  // namespace ddpbench
