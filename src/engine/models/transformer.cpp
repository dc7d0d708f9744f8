#include "engine/models/transformer.hpp"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <ATen/ops/arange.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/stack.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/util/errors.hpp"
#include "engine/models/flops.hpp"

namespace ddpbench {
namespace {

namespace nn = torch::nn;
using Family = TransformerSpec::Family;

// nanoGPT's _init_weights: Linear and Embedding weights N(0, 0.02), biases 0; the residual
// projections (GPT-2's c_proj, Llama's wo and w2) N(0, 0.02 / sqrt(2 layers)).
constexpr double kLmInitStd = 0.02;
void lm_init_normal(const torch::Tensor& w, double std) {
  torch::NoGradGuard ng;
  if (flops::initialising_weights()) nn::init::normal_(const_cast<torch::Tensor&>(w), 0.0, std);
}
void lm_init_linear(nn::Linear& l, double std = kLmInitStd) {
  lm_init_normal(l->weight, std);
  torch::NoGradGuard ng;
  if (l->bias.defined() && flops::initialising_weights()) nn::init::zeros_(l->bias);
}
// The residual projections' std (GPT-2's c_proj, Llama's wo and w2): 0.02 / sqrt(2 layers).
double lm_residual_std(const TransformerSpec& s) { return kLmInitStd / std::sqrt(2.0 * static_cast<double>(s.layers)); }
nn::Linear lm_linear(int64_t in, int64_t out, bool bias) { return nn::Linear(nn::LinearOptions(in, out).bias(bias)); }

// [N, T, C] -> [N, heads, T, C / heads]
torch::Tensor lm_split_heads(const torch::Tensor& x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}
// [N, heads, T, d] -> [N, T, heads * d]
torch::Tensor lm_merge_heads(const torch::Tensor& y) {
  return y.transpose(1, 2).reshape({y.size(0), y.size(2), y.size(1) * y.size(3)});
}

// What GPT-2 and Llama share: the spec, the blocks run as units, the head (its own weight or the
// tied embedding's) and the loss over the vocabulary at every position.
class DecoderModel : public Model {
 public:
  explicit DecoderModel(const TransformerSpec& s) : spec_(s) {}
  torch::Tensor loss(const torch::Tensor& logits, const torch::Tensor& target) override {
    return torch::nn::functional::cross_entropy(logits.flatten(0, 1), target.flatten());
  }
  int64_t vocab_size() const override { return spec_.vocab; }

 protected:
  // x through every block, each as unit i (activation checkpointing, fsdp's gathers).
  template <typename Blocks>
  torch::Tensor run_blocks(torch::Tensor x, Blocks& blocks) {
    for (size_t i = 0; i < blocks.size(); ++i)
      x = run_unit(i, x, [&blocks, i](const torch::Tensor& in) { return blocks[i](in); });
    return x;
  }
  // The output head: `output`'s weight when untied, else the token embedding's (no bias).
  static torch::Tensor head(const torch::Tensor& x, nn::Linear& output, const torch::Tensor& embedding) {
    return output ? flops::linear(output, x) : flops::linear(x, embedding, torch::Tensor());
  }

  TransformerSpec spec_;
};

// ---------------------------------------------------------------- GPT-2 (nanoGPT's model.py)

class Gpt2AttentionImpl : public nn::Module {
 public:
  explicit Gpt2AttentionImpl(const TransformerSpec& s) : heads_(s.heads) {
    c_attn_ = register_module("c_attn", lm_linear(s.dim, 3 * s.dim, true));
    c_proj_ = register_module("c_proj", lm_linear(s.dim, s.dim, true));
    lm_init_linear(c_attn_);
    lm_init_linear(c_proj_, lm_residual_std(s));
  }
  torch::Tensor forward(const torch::Tensor& x) {  // [N, T, C]
    auto qkv = flops::linear(c_attn_, x).chunk(3, -1);
    auto y = flops::causal_attention(lm_split_heads(qkv[0], heads_), lm_split_heads(qkv[1], heads_),
                                     lm_split_heads(qkv[2], heads_));
    return flops::linear(c_proj_, lm_merge_heads(y));
  }

 private:
  int64_t heads_;
  nn::Linear c_attn_{nullptr}, c_proj_{nullptr};
};
TORCH_MODULE(Gpt2Attention);

class Gpt2MlpImpl : public nn::Module {
 public:
  explicit Gpt2MlpImpl(const TransformerSpec& s) {
    c_fc_ = register_module("c_fc", lm_linear(s.dim, s.ffn, true));
    c_proj_ = register_module("c_proj", lm_linear(s.ffn, s.dim, true));
    lm_init_linear(c_fc_);
    lm_init_linear(c_proj_, lm_residual_std(s));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return flops::linear(c_proj_, torch::nn::functional::gelu(flops::linear(c_fc_, x)));  // nn.GELU(): erf
  }

 private:
  nn::Linear c_fc_{nullptr}, c_proj_{nullptr};
};
TORCH_MODULE(Gpt2Mlp);

nn::LayerNorm lm_layer_norm(const TransformerSpec& s) {
  return nn::LayerNorm(nn::LayerNormOptions({s.dim}).eps(s.norm_eps));
}

class Gpt2BlockImpl : public nn::Module {
 public:
  explicit Gpt2BlockImpl(const TransformerSpec& s) {
    ln_1_ = register_module("ln_1", lm_layer_norm(s));
    attn_ = register_module("attn", Gpt2Attention(s));
    ln_2_ = register_module("ln_2", lm_layer_norm(s));
    mlp_ = register_module("mlp", Gpt2Mlp(s));
  }
  torch::Tensor forward(const torch::Tensor& input) {
    auto x = input + attn_(ln_1_(input));
    return x + mlp_(ln_2_(x));
  }

 private:
  nn::LayerNorm ln_1_{nullptr}, ln_2_{nullptr};
  Gpt2Attention attn_{nullptr};
  Gpt2Mlp mlp_{nullptr};
};
TORCH_MODULE(Gpt2Block);

// GPT2LMHeadModel / nanoGPT's GPT: transformer.{wte, wpe, h.i, ln_f}; the head is wte's weight.
class Gpt2 : public DecoderModel {
 public:
  explicit Gpt2(const TransformerSpec& s) : DecoderModel(s) {
    auto t = register_module("transformer", std::make_shared<nn::Module>());
    wte_ = t->register_module("wte", nn::Embedding(s.vocab, s.dim));
    wpe_ = t->register_module("wpe", nn::Embedding(s.context, s.dim));
    auto h = t->register_module("h", nn::ModuleList());
    for (int64_t i = 0; i < s.layers; ++i) {
      blocks_.push_back(Gpt2Block(s));
      h->push_back(blocks_.back());
      add_unit(blocks_.back().ptr());
    }
    ln_f_ = t->register_module("ln_f", lm_layer_norm(s));
    if (!s.tied) lm_head_ = register_module("lm_head", lm_linear(s.dim, s.vocab, false));
    lm_init_normal(wte_->weight, kLmInitStd);
    lm_init_normal(wpe_->weight, kLmInitStd);
    if (lm_head_) lm_init_linear(lm_head_);
  }
  torch::Tensor forward_features(torch::Tensor tokens) override {  // [N, T] -> [N, T, C]
    const auto positions = at::arange(tokens.size(1), tokens.options().dtype(at::kLong));
    return run_blocks(wte_(tokens) + wpe_(positions), blocks_);
  }
  torch::Tensor classify(torch::Tensor x) override { return head(ln_f_(x), lm_head_, wte_->weight); }

 private:
  nn::Embedding wte_{nullptr}, wpe_{nullptr};
  std::vector<Gpt2Block> blocks_;
  nn::LayerNorm ln_f_{nullptr};
  nn::Linear lm_head_{nullptr};
};

// ---------------------------------------------------------------- Llama 3 (Meta's model.py)

// RMSNorm (Zhang & Sennrich 2019) as Meta's: x / sqrt(mean(x^2) + eps) in float32, back to x's dtype, times weight.
class RmsNormImpl : public nn::Module {
 public:
  RmsNormImpl(int64_t dim, double eps) : eps_(eps) { weight_ = register_parameter("weight", torch::ones({dim})); }
  torch::Tensor forward(const torch::Tensor& x) {
    const auto xf = x.to(at::kFloat);
    return (xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps_)).to(x.scalar_type()) * weight_;
  }

 private:
  double eps_;
  torch::Tensor weight_;
};
TORCH_MODULE(RmsNorm);

class LlamaAttentionImpl : public nn::Module {
 public:
  explicit LlamaAttentionImpl(const TransformerSpec& s) : spec_(s) {
    const int64_t d = s.head_dim();
    wq_ = register_module("wq", lm_linear(s.dim, s.heads * d, false));
    wk_ = register_module("wk", lm_linear(s.dim, s.kv_heads * d, false));
    wv_ = register_module("wv", lm_linear(s.dim, s.kv_heads * d, false));
    wo_ = register_module("wo", lm_linear(s.heads * d, s.dim, false));
    for (auto* l : {&wq_, &wk_, &wv_}) lm_init_linear(*l);
    lm_init_linear(wo_, lm_residual_std(s));
  }
  torch::Tensor forward(const torch::Tensor& x) {  // [N, T, C]
    const int64_t n = x.size(0), t = x.size(1), d = spec_.head_dim();
    auto q = apply_rotary(flops::linear(wq_, x).view({n, t, spec_.heads, d}), spec_.rope_theta);
    auto k = apply_rotary(flops::linear(wk_, x).view({n, t, spec_.kv_heads, d}), spec_.rope_theta);
    auto v = flops::linear(wv_, x).view({n, t, spec_.kv_heads, d});
    auto y = causal_grouped_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2));
    return flops::linear(wo_, lm_merge_heads(y));
  }

 private:
  TransformerSpec spec_;
  nn::Linear wq_{nullptr}, wk_{nullptr}, wv_{nullptr}, wo_{nullptr};
};
TORCH_MODULE(LlamaAttention);

// SwiGLU (Shazeer 2020): w2(silu(w1 x) * w3 x).
class SwiGluImpl : public nn::Module {
 public:
  explicit SwiGluImpl(const TransformerSpec& s) {
    w1_ = register_module("w1", lm_linear(s.dim, s.ffn, false));
    w2_ = register_module("w2", lm_linear(s.ffn, s.dim, false));
    w3_ = register_module("w3", lm_linear(s.dim, s.ffn, false));
    lm_init_linear(w1_);
    lm_init_linear(w3_);
    lm_init_linear(w2_, lm_residual_std(s));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return flops::linear(w2_, torch::nn::functional::silu(flops::linear(w1_, x)) * flops::linear(w3_, x));
  }

 private:
  nn::Linear w1_{nullptr}, w2_{nullptr}, w3_{nullptr};
};
TORCH_MODULE(SwiGlu);

class LlamaBlockImpl : public nn::Module {
 public:
  explicit LlamaBlockImpl(const TransformerSpec& s) {
    attention_ = register_module("attention", LlamaAttention(s));
    feed_forward_ = register_module("feed_forward", SwiGlu(s));
    attention_norm_ = register_module("attention_norm", RmsNorm(s.dim, s.norm_eps));
    ffn_norm_ = register_module("ffn_norm", RmsNorm(s.dim, s.norm_eps));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = x + attention_(attention_norm_(x));
    return h + feed_forward_(ffn_norm_(h));
  }

 private:
  LlamaAttention attention_{nullptr};
  SwiGlu feed_forward_{nullptr};
  RmsNorm attention_norm_{nullptr}, ffn_norm_{nullptr};
};
TORCH_MODULE(LlamaBlock);

// Meta's Transformer: tok_embeddings, layers.i, norm, output (untied only).
class Llama : public DecoderModel {
 public:
  explicit Llama(const TransformerSpec& s) : DecoderModel(s) {
    tok_embeddings_ = register_module("tok_embeddings", nn::Embedding(s.vocab, s.dim));
    auto layers = register_module("layers", nn::ModuleList());
    for (int64_t i = 0; i < s.layers; ++i) {
      blocks_.push_back(LlamaBlock(s));
      layers->push_back(blocks_.back());
      add_unit(blocks_.back().ptr());
    }
    norm_ = register_module("norm", RmsNorm(s.dim, s.norm_eps));
    if (!s.tied) output_ = register_module("output", lm_linear(s.dim, s.vocab, false));
    lm_init_normal(tok_embeddings_->weight, kLmInitStd);
    if (output_) lm_init_linear(output_);
  }
  torch::Tensor forward_features(torch::Tensor tokens) override { return run_blocks(tok_embeddings_(tokens), blocks_); }
  torch::Tensor classify(torch::Tensor x) override { return head(norm_(x), output_, tok_embeddings_->weight); }

 private:
  nn::Embedding tok_embeddings_{nullptr};
  std::vector<LlamaBlock> blocks_;
  RmsNorm norm_{nullptr};
  nn::Linear output_{nullptr};
};

}  // namespace

const std::vector<TransformerSpec>& transformer_specs() {
  static const std::vector<TransformerSpec> specs = [] {
    std::vector<TransformerSpec> out;
    auto gpt2 = [&](const char* name, int64_t dim, int64_t layers, int64_t heads) {
      TransformerSpec s;
      s.name = name;
      s.family = Family::kGpt2;
      s.vocab = 50257;
      s.context = 1024;
      s.dim = dim;
      s.layers = layers;
      s.heads = s.kv_heads = heads;
      s.ffn = 4 * dim;
      s.tied = true;
      s.norm_eps = 1e-5;
      out.push_back(s);
    };
    gpt2("gpt2", 768, 12, 12);
    gpt2("gpt2-medium", 1024, 24, 16);
    gpt2("gpt2-large", 1280, 36, 20);
    gpt2("gpt2-xl", 1600, 48, 25);
    // Meta's params.json: dim, n_layers, n_heads, n_kv_heads, ffn_dim_multiplier and
    // multiple_of (ffn 8,192 and 14,336), rope_theta 500,000, context 131,072.
    auto llama = [&](const char* name, int64_t dim, int64_t layers, int64_t ffn, bool tied) {
      TransformerSpec s;
      s.name = name;
      s.family = Family::kLlama;
      s.vocab = 128256;
      s.context = 131072;
      s.dim = dim;
      s.layers = layers;
      s.heads = 32;
      s.kv_heads = 8;
      s.ffn = ffn;
      s.tied = tied;
      s.norm_eps = 1e-5;
      s.rope_theta = 500000.0;
      out.push_back(s);
    };
    llama("llama3.2-1b", 2048, 16, 8192, true);
    llama("llama3.1-8b", 4096, 32, 14336, false);
    return out;
  }();
  return specs;
}

const TransformerSpec* find_transformer(const std::string& name) {
  for (const auto& s : transformer_specs())
    if (s.name == name) return &s;
  return nullptr;
}

TransformerSpec reshaped(const TransformerSpec& spec, int64_t layers, int64_t width) {
  TransformerSpec s = spec;
  if (layers > 0) s.layers = layers;
  if (width > 0 && width != spec.dim) {
    const int64_t multiple = spec.is_llama() ? 2 * spec.heads : spec.heads;
    if (width % multiple != 0)
      throw UsageError(fmt::format("--model-width {} does not split into {}'s {} heads{}; use a multiple of {}, e.g. {}",
                                   width, spec.name, spec.heads, spec.is_llama() ? " of even size" : "", multiple,
                                   std::max(multiple, width / multiple * multiple)));
    s.dim = width;
    s.ffn = std::max<int64_t>(8, spec.ffn * width / spec.dim / 8 * 8);
  }
  return s;
}

void check_sequence_length(const TransformerSpec& spec, int64_t seq_len) {
  if (seq_len < 2 || seq_len > spec.context)
    throw UsageError(fmt::format("--seq-len {} is out of range for {}: use 2..{} ({})", seq_len, spec.name,
                                 spec.context,
                                 spec.is_llama() ? "its context length" : "its learned position table"));
}

ModelPtr make_transformer(const TransformerSpec& spec) {
  if (spec.is_llama()) return std::make_shared<Llama>(spec);
  return std::make_shared<Gpt2>(spec);
}

ModelCount count_transformer(const TransformerSpec& s, int64_t seq_len) {
  ModelCount c;
  const int64_t t = seq_len, d = s.head_dim();
  c.parameters += s.vocab * s.dim;  // token embedding
  if (!s.is_llama()) c.parameters += s.context * s.dim;  // learned positions
  for (int64_t i = 0; i < s.layers; ++i) {
    if (s.is_llama()) {
      c.linear(s.dim, s.heads * d, t, false);
      c.linear(s.dim, s.kv_heads * d, t, false);
      c.linear(s.dim, s.kv_heads * d, t, false);
      c.linear(s.heads * d, s.dim, t, false);
      c.linear(s.dim, s.ffn, t, false);
      c.linear(s.dim, s.ffn, t, false);
      c.linear(s.ffn, s.dim, t, false);
      c.parameters += 2 * s.dim;  // RMSNorm weights
    } else {
      c.norm(s.dim);
      c.linear(s.dim, 3 * s.dim, t);
      c.linear(s.dim, s.dim, t);
      c.norm(s.dim);
      c.linear(s.dim, s.ffn, t);
      c.linear(s.ffn, s.dim, t);
    }
    c.forward_macs += 2.0 * static_cast<double>(s.heads) * static_cast<double>(t * t) * static_cast<double>(d);
  }
  if (s.is_llama()) c.parameters += s.dim;
  else c.norm(s.dim);
  // The head: the tied embedding's matrix product (no new parameters) or a separate weight.
  const int64_t before = c.parameters;
  c.linear(s.dim, s.vocab, t, false);
  if (s.tied) c.parameters = before;
  return c;
}

int64_t palm_parameters(const TransformerSpec& s) {
  int64_t n = count_transformer(s, 1).parameters;
  if (!s.is_llama()) n -= s.context * s.dim;  // position table: a lookup
  if (!s.tied) n -= s.vocab * s.dim;          // an untied input embedding: a lookup
  return n;
}

double palm_training_flops_per_token(const TransformerSpec& s, int64_t seq_len) {
  return 6.0 * static_cast<double>(palm_parameters(s)) + 12.0 * static_cast<double>(s.layers) *
                                                              static_cast<double>(s.heads) *
                                                              static_cast<double>(s.head_dim()) *
                                                              static_cast<double>(seq_len);
}

torch::Tensor apply_rotary(const torch::Tensor& x, double theta) {
  const int64_t t = x.size(1), d = x.size(3);
  const auto f32 = x.options().dtype(at::kFloat);
  // theta^(-2j/d), j = 0..d/2-1, as Meta's 1 / theta^(arange(0, d, 2) / d); angles [T, d/2]
  const auto inv = at::pow(theta, at::arange(0, d, 2, f32) / static_cast<double>(d)).reciprocal();
  const auto angles = at::outer(at::arange(t, f32), inv);
  const auto cos = angles.cos().view({1, t, 1, d / 2}), sin = angles.sin().view({1, t, 1, d / 2});
  const auto pairs = x.to(at::kFloat).reshape({x.size(0), t, x.size(2), d / 2, 2});
  const auto x0 = pairs.select(-1, 0), x1 = pairs.select(-1, 1);
  return at::stack({x0 * cos - x1 * sin, x0 * sin + x1 * cos}, -1).flatten(3).to(x.scalar_type());
}

torch::Tensor causal_grouped_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const int64_t rep = q.size(1) / k.size(1);
  if (rep == 1) return flops::causal_attention(q, k, v);
  // Meta's repeat_kv: [N, KV, T, d] -> [N, KV * rep, T, d], each key/value head `rep` times in a row.
  auto repeat = [rep](const torch::Tensor& x) {
    return x.unsqueeze(2).expand({x.size(0), x.size(1), rep, x.size(2), x.size(3)}).reshape(
        {x.size(0), x.size(1) * rep, x.size(2), x.size(3)});
  };
  return flops::causal_attention(q, repeat(k), repeat(v));
}

}  // namespace ddpbench
