// Decoder-only transformer language models: GPT-2 (the architecture of nanoGPT's model.py and
// Hugging Face's GPT2LMHeadModel: learned positions, pre-LayerNorm blocks, GELU MLP, biases,
// the head tied to the token embedding) and a Llama-3-shaped decoder (Meta's llama3
// model.py: RMSNorm, SwiGLU MLP, rotary position embeddings, grouped-query attention, no
// biases). No weights are loaded: they are initialised as nanoGPT does (normal, std 0.02;
// the residual projections std 0.02 / sqrt(2 layers)). A model maps token ids int64
// [N, T] to logits [N, T, vocab]; its loss is the cross-entropy over the vocabulary of
// every position against the targets [N, T] (the tokens shifted by one).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/models/count.hpp"
#include "engine/models/model.hpp"

namespace ddpbench {

/// The shape of one language model. Parameter names follow the reference implementations'
/// state_dict: nanoGPT's ("transformer.h.0.attn.c_attn.weight") and Meta's llama3
/// ("layers.0.attention.wq.weight").
struct TransformerSpec {
  enum class Family { kGpt2, kLlama };
  std::string name;  ///< "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "llama3.2-1b", "llama3.1-8b"
  Family family = Family::kGpt2;
  int64_t vocab = 0;        ///< tokens in the vocabulary (GPT-2 50,257; Llama 3 128,256)
  int64_t context = 0;      ///< longest sequence: GPT-2's learned position table (1,024); Llama's context length
  int64_t dim = 0;          ///< model width (embedding dimension)
  int64_t layers = 0;       ///< transformer blocks
  int64_t heads = 0;        ///< query heads
  int64_t kv_heads = 0;     ///< key/value heads (grouped-query attention; GPT-2: = heads)
  int64_t ffn = 0;          ///< hidden width of the MLP (GPT-2: 4 x dim; Llama: SwiGLU's)
  bool tied = true;         ///< the output head is the token embedding (no separate head weight)
  double norm_eps = 1e-5;   ///< LayerNorm / RMSNorm epsilon
  double rope_theta = 0;    ///< Llama's rotary base (500,000); 0 for GPT-2

  int64_t head_dim() const { return dim / heads; }
  bool is_llama() const { return family == Family::kLlama; }
};

/// The published shapes, in listing order: GPT-2 small/medium/large/XL (Radford et al. 2019;
/// Hugging Face's configs) and Llama 3.2 1B, Llama 3.1 8B (Meta's params.json).
const std::vector<TransformerSpec>& transformer_specs();

/// The spec named `name`, or null when `name` is not a language model.
const TransformerSpec* find_transformer(const std::string& name);

/// `spec` with `layers` blocks and model width `width` where those are > 0 (0 keeps the
/// spec's): the MLP width scales with the model width (rounded down to a multiple of 8, at
/// least 8), heads and key/value heads stay. For tests and small machines; the name stays.
/// Throws UsageError (one line naming the fix) for a width that is not a multiple of the
/// heads (Llama: of 2 x heads, for the rotary pairs).
TransformerSpec reshaped(const TransformerSpec& spec, int64_t layers, int64_t width);

/// Throws UsageError, one line naming the fix, for a sequence length the model cannot take
/// (below 2, or above GPT-2's 1,024 learned positions / the model's context).
void check_sequence_length(const TransformerSpec& spec, int64_t seq_len);

/// Builds the model on the CPU (weights initialised unless a flops::CountOnlyBuild is alive).
/// Its units (activation checkpointing, FSDP's sharding unit) are the transformer blocks.
ModelPtr make_transformer(const TransformerSpec& spec);

/// Parameters and forward MACs of one sequence of seq_len tokens, counted from the shape
/// (engine/models/count.hpp conventions: linear layers, the head and attention's two
/// matrix products; equal to flops::forward_macs of the built model).
ModelCount count_transformer(const TransformerSpec& spec, int64_t seq_len);

/// N of the PaLM paper's FLOPs formula: every parameter but the embedding tables that do
/// no matrix product (GPT-2's position table; an untied token embedding). GPT-2: 123,653,376,
/// nanoGPT's get_num_params(non_embedding=True); tied Llama 3.2 1B: all 1,235,814,400.
int64_t palm_parameters(const TransformerSpec& spec);

/// Training FLOPs per token by the PaLM paper (Chowdhery et al. 2022, Appendix B), the
/// formula of nanoGPT's estimate_mfu: 6 N + 12 L H Q T (N palm_parameters, L layers, H heads,
/// Q head dimension, T seq_len).
double palm_training_flops_per_token(const TransformerSpec& spec, int64_t seq_len);

/// Rotary position embedding of x [N, T, heads, head_dim] at positions 0..T-1 (Su et al.
/// 2021, as Meta's llama3 apply_rotary_emb: interleaved pairs (x[2j], x[2j+1]) rotated by
/// t * theta^(-2j / head_dim)), computed in float32 and returned in x's dtype.
torch::Tensor apply_rotary(const torch::Tensor& x, double theta);

/// Causal grouped-query attention of q [N, H, T, d] over k, v [N, KV, T, d] (H a multiple of
/// KV; query head h reads key/value head h / (H / KV), Meta's repeat_kv): softmax of
/// q k^T / sqrt(d) with the future masked, times v -> [N, H, T, d]. The linked torch's fused
/// scaled_dot_product_attention (causal) where it has one, else the masked softmax.
torch::Tensor causal_grouped_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

}  // namespace ddpbench
