#include "engine/models/vit.hpp"

#include <torch/nn/init.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <ATen/ops/cat.h>

#include <fmt/format.h>

#include <cmath>

#include "engine/models/flops.hpp"

namespace ddpbench {
namespace {

namespace nn = torch::nn;

// nn.MultiheadAttention(hidden, heads, batch_first=True) as EncoderBlock uses it
// (need_weights=False): parameters in_proj_weight [3h, h], in_proj_bias [3h], out_proj.
class SelfAttentionImpl : public nn::Module {
 public:
  SelfAttentionImpl(int64_t hidden, int64_t heads) : hidden_(hidden), heads_(heads) {
    in_proj_weight_ = register_parameter("in_proj_weight", torch::empty({3 * hidden, hidden}));
    in_proj_bias_ = register_parameter("in_proj_bias", torch::zeros({3 * hidden}));
    out_proj_ = register_module("out_proj", nn::Linear(hidden, hidden));
    torch::NoGradGuard ng;
    if (!flops::initialising_weights()) return;
    nn::init::xavier_uniform_(in_proj_weight_);
    nn::init::zeros_(out_proj_->bias);
  }
  torch::Tensor forward(const torch::Tensor& x) {  // x: [N, S, h]
    const int64_t n = x.size(0), s = x.size(1), d = hidden_ / heads_;
    auto qkv = flops::linear(x, in_proj_weight_, in_proj_bias_);           // [N, S, 3h]
    auto parts = qkv.view({n, s, 3, heads_, d}).permute({2, 0, 3, 1, 4});  // [3, N, H, S, d]
    auto attn = flops::attention(parts[0], parts[1], parts[2]);            // [N, H, S, d]
    return flops::linear(out_proj_, attn.transpose(1, 2).reshape({n, s, hidden_}));
  }

 private:
  int64_t hidden_, heads_;
  torch::Tensor in_proj_weight_, in_proj_bias_;
  nn::Linear out_proj_{nullptr};
};
TORCH_MODULE(SelfAttention);

// torchvision.models.vision_transformer.EncoderBlock (pre-norm).
class EncoderBlockImpl : public nn::Module {
 public:
  EncoderBlockImpl(int64_t hidden, int64_t heads, int64_t mlp_dim) {
    ln_1_ = register_module("ln_1", nn::LayerNorm(nn::LayerNormOptions({hidden}).eps(1e-6)));
    self_attention_ = register_module("self_attention", SelfAttention(hidden, heads));
    dropout_ = register_module("dropout", nn::Dropout(0.0));
    ln_2_ = register_module("ln_2", nn::LayerNorm(nn::LayerNormOptions({hidden}).eps(1e-6)));
    // MLPBlock: Linear, GELU, Dropout, Linear, Dropout (names mlp.0, mlp.3)
    mlp_ = register_module("mlp", nn::Sequential(nn::Linear(hidden, mlp_dim), nn::GELU(), nn::Dropout(0.0),
                                                 nn::Linear(mlp_dim, hidden), nn::Dropout(0.0)));
    torch::NoGradGuard ng;
    if (!flops::initialising_weights()) return;
    for (auto& m : mlp_->modules(false))
      if (auto* l = m->as<nn::Linear>()) {
        nn::init::xavier_uniform_(l->weight);
        nn::init::normal_(l->bias, 0.0, 1e-6);
      }
  }
  torch::Tensor forward(const torch::Tensor& input) {
    auto x = dropout_(self_attention_(ln_1_(input))) + input;
    return x + flops::run(mlp_, ln_2_(x));
  }

 private:
  nn::LayerNorm ln_1_{nullptr}, ln_2_{nullptr};
  SelfAttention self_attention_{nullptr};
  nn::Dropout dropout_{nullptr};
  nn::Sequential mlp_{nullptr};
};
TORCH_MODULE(EncoderBlock);

// torchvision.models.vision_transformer.Encoder: position embedding, layers, final norm.
class EncoderImpl : public nn::Module {
 public:
  EncoderImpl(int64_t seq, const ViTSpec& s) {
    pos_embedding_ = register_parameter("pos_embedding", torch::empty({1, seq, s.hidden_dim}));
    {
      torch::NoGradGuard ng;
      if (flops::initialising_weights()) nn::init::normal_(pos_embedding_, 0.0, 0.02);
    }
    dropout_ = register_module("dropout", nn::Dropout(0.0));
    layers_ = register_module("layers", nn::Sequential());
    for (int64_t i = 0; i < s.num_layers; ++i)
      blocks_.push_back(layers_->register_module(fmt::format("encoder_layer_{}", i),
                                                 EncoderBlock(s.hidden_dim, s.num_heads, s.mlp_dim)));
    ln_ = register_module("ln", nn::LayerNorm(nn::LayerNormOptions({s.hidden_dim}).eps(1e-6)));
  }
  // The encoder's forward in three pieces, so the model runs each layer as a unit.
  torch::Tensor embed(const torch::Tensor& x) { return dropout_(x + pos_embedding_); }
  std::vector<EncoderBlock>& blocks() { return blocks_; }
  torch::Tensor norm(const torch::Tensor& x) { return ln_(x); }

 private:
  torch::Tensor pos_embedding_;
  nn::Dropout dropout_{nullptr};
  nn::Sequential layers_{nullptr};  // holds the blocks under torchvision's names
  std::vector<EncoderBlock> blocks_;
  nn::LayerNorm ln_{nullptr};
};
TORCH_MODULE(Encoder);

class VisionTransformer : public Model {
 public:
  VisionTransformer(const ViTSpec& s, int64_t classes, int64_t image) : spec_(s) {
    conv_proj_ =
        register_module("conv_proj", nn::Conv2d(nn::Conv2dOptions(3, s.hidden_dim, s.patch_size).stride(s.patch_size)));
    class_token_ = register_parameter("class_token", torch::zeros({1, 1, s.hidden_dim}));
    const int64_t seq = (image / s.patch_size) * (image / s.patch_size) + 1;
    encoder_ = register_module("encoder", Encoder(seq, s));
    heads_ = register_module("heads", nn::Sequential());
    head_ = heads_->register_module("head", nn::Linear(s.hidden_dim, classes));
    for (auto& b : encoder_->blocks()) add_unit(b.ptr());
    torch::NoGradGuard ng;
    if (!flops::initialising_weights()) return;
    const double fan_in = 3.0 * static_cast<double>(s.patch_size * s.patch_size);
    trunc_normal(conv_proj_->weight, std::sqrt(1.0 / fan_in));
    nn::init::zeros_(conv_proj_->bias);
    nn::init::zeros_(head_->weight);
    nn::init::zeros_(head_->bias);
  }

  torch::Tensor forward_features(torch::Tensor x) override {
    const int64_t n = x.size(0);
    x = flops::conv(conv_proj_, x);                               // [N, h, H/p, W/p]
    x = x.reshape({n, spec_.hidden_dim, -1}).permute({0, 2, 1});  // [N, S-1, h]
    x = at::cat({class_token_.expand({n, -1, -1}), x}, 1);
    x = encoder_->embed(x);
    auto& blocks = encoder_->blocks();
    for (size_t i = 0; i < blocks.size(); ++i)
      x = run_unit(i, x, [&blocks, i](const torch::Tensor& t) { return blocks[i](t); });
    return encoder_->norm(x).select(1, 0);  // the class token
  }
  torch::Tensor classify(torch::Tensor f) override { return flops::linear(head_, f); }

 private:
  // nn.init.trunc_normal_(t, std=s) truncates at the absolute bounds [-2, 2]; with
  // s = sqrt(1 / fan_in) <= 0.07 those lie beyond 28 standard deviations, so a clamp
  // is the same distribution.
  static void trunc_normal(torch::Tensor& t, double std) {
    nn::init::normal_(t, 0.0, std);
    t.clamp_(-2.0, 2.0);
  }

  ViTSpec spec_;
  nn::Conv2d conv_proj_{nullptr};
  torch::Tensor class_token_;
  Encoder encoder_{nullptr};
  nn::Sequential heads_{nullptr};
  nn::Linear head_{nullptr};
};

}  // namespace

const std::vector<ViTSpec>& vit_specs() {
  static const std::vector<ViTSpec> specs = {
      {"vit_b_16", 16, 12, 12, 768, 3072},
      {"vit_b_32", 32, 12, 12, 768, 3072},
      {"vit_l_16", 16, 24, 16, 1024, 4096},
  };
  return specs;
}

ModelCount count_vit(const ViTSpec& s, int64_t num_classes, int64_t image_size) {
  ModelCount c;
  const int64_t h = s.hidden_dim, patches = (image_size / s.patch_size) * (image_size / s.patch_size), seq = patches + 1;
  c.conv(3, h, s.patch_size, s.patch_size, 0, image_size, true);  // conv_proj
  c.parameters += h + seq * h;                                    // class token, position embedding
  for (int64_t l = 0; l < s.num_layers; ++l) {
    c.norm(h);                   // ln_1
    c.linear(h, 3 * h, seq);     // in_proj
    c.forward_macs += 2.0 * static_cast<double>(seq) * static_cast<double>(seq) * static_cast<double>(h);  // QK^T, AV
    c.linear(h, h, seq);         // out_proj
    c.norm(h);                   // ln_2
    c.linear(h, s.mlp_dim, seq);  // mlp.0
    c.linear(s.mlp_dim, h, seq);  // mlp.3
  }
  c.norm(h);                     // encoder.ln
  c.linear(h, num_classes);      // heads.head, on the class token
  return c;
}

ModelPtr make_vit(const ViTSpec& spec, int64_t num_classes, int64_t image_size) {
  TORCH_CHECK(image_size % spec.patch_size == 0, spec.name, ": image size ", image_size,
              " is not a multiple of the patch size (make_model checks this first)");
  return std::make_shared<VisionTransformer>(spec, num_classes, image_size);
}

}  // namespace ddpbench
