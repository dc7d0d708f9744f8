// The language models (engine/models/transformer): parameter counts against the published
// totals, rotary embeddings and grouped-query attention against hand-computed cases, and
// logits, loss and every gradient against a torch.nn reference in Python
// (tests/tools/llm_reference.py: nanoGPT's and Meta's architectures, written apart).
#include <gtest/gtest.h>

#include <ATen/ops/randint.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/testutil.hpp"
#include "core/util/errors.hpp"
#include "engine/models/flops.hpp"
#include "engine/models/registry.hpp"
#include "engine/models/transformer.hpp"
#include "engine/train/workload.hpp"

namespace ddpbench {
namespace {

using testutil::TempDir;

// The published totals: Hugging Face's GPT-2 model cards (tied head, learned positions) and
// Meta's Llama 3.2 1B (tied) and Llama 3.1 8B model cards.
TEST(LanguageModels, ParameterCountsAreThePublishedTotals) {
  const std::map<std::string, int64_t> published = {
      {"gpt2", 124'439'808},       {"gpt2-medium", 354'823'168}, {"gpt2-large", 774'030'080},
      {"gpt2-xl", 1'557'611'200},  {"llama3.2-1b", 1'235'814'400}, {"llama3.1-8b", 8'030'261'248}};
  ASSERT_EQ(language_model_names().size(), published.size());
  for (const auto& [name, n] : published) {
    const TransformerSpec* s = find_transformer(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(count_transformer(*s, 1024).parameters, n) << name;
  }
  // nanoGPT prints "number of parameters: 123.65M" for gpt2: its N leaves out the position table.
  EXPECT_EQ(palm_parameters(*find_transformer("gpt2")), 124'439'808 - 1024 * 768);
  EXPECT_EQ(palm_parameters(*find_transformer("llama3.2-1b")), 1'235'814'400);  // tied: nothing is only a lookup
  EXPECT_EQ(palm_parameters(*find_transformer("llama3.1-8b")), 8'030'261'248 - 128'256LL * 4096);
}

// The PaLM formula by hand for gpt2 at 1,024 tokens: 6 N + 12 L H Q T.
TEST(LanguageModels, TrainingFlopsPerTokenArePalmsFormula) {
  const TransformerSpec& s = *find_transformer("gpt2");
  const double n = 124'439'808.0 - 1024.0 * 768.0;
  EXPECT_DOUBLE_EQ(palm_training_flops_per_token(s, 1024), 6 * n + 12.0 * 12 * 12 * 64 * 1024);
}

double counted_forward_macs(Model& m, int64_t seq) {
  torch::NoGradGuard ng;
  flops::CountingScope counting;
  m.forward(at::zeros({1, seq}, at::kLong));
  return counting.macs();
}

// The built model has the counted parameters and, counted layer by layer as it runs, the
// counted forward MACs; a gpt2 at its published shape, the others reduced (an 8B model does
// not fit this machine's memory in fp32 three times over).
TEST(LanguageModels, BuiltModelsHaveTheCountedParametersAndMacs) {
  struct Case {
    std::string name;
    int64_t layers, width;
  };
  for (const Case& c : {Case{"gpt2", 0, 0}, Case{"gpt2-xl", 2, 100}, Case{"llama3.2-1b", 2, 128},
                        Case{"llama3.1-8b", 1, 64}}) {
    ModelArgs a;
    a.seq_len = 32;
    a.layers = c.layers;
    a.width = c.width;
    const flops::CountOnlyBuild count_only;
    auto m = make_model(c.name, a);
    const ModelCount want = *count_without_building(c.name, a);
    EXPECT_EQ(count_parameters(*m), want.parameters) << c.name;
    EXPECT_DOUBLE_EQ(counted_forward_macs(*m, 32), want.forward_macs) << c.name;
    EXPECT_EQ(m->units().size(), static_cast<size_t>(language_model_spec(c.name, a).layers)) << c.name;
    EXPECT_EQ(m->vocab_size(), language_model_spec(c.name, a).vocab);
  }
}

TEST(LanguageModels, BadShapesAreOneLineUsageErrors) {
  ModelArgs a;
  a.seq_len = 2048;
  EXPECT_THROW(check_model_args("gpt2", a), UsageError);  // 1,024 learned positions
  a.seq_len = 64;
  a.width = 100;  // not a multiple of 12 heads
  EXPECT_THROW(check_model_args("gpt2", a), UsageError);
  a.width = 96;
  EXPECT_NO_THROW(check_model_args("gpt2", a));
  a.width = 32;  // 32 heads of width 1: no rotary pairs
  EXPECT_THROW(check_model_args("llama3.2-1b", a), UsageError);
}

// Rotary embedding by hand: head dim 4, theta 100, so the pairs turn by t x 1 and t x 0.1 rad.
TEST(LanguageModels, RotaryEmbeddingTurnsEachPairByPositionTimesItsFrequency) {
  auto x = at::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({1, 1, 1, 4}).expand({1, 3, 1, 4}).contiguous();
  const auto y = apply_rotary(x, 100.0);
  for (int t = 0; t < 3; ++t) {
    const double a0 = t * 1.0, a1 = t * 0.1;
    const double want[4] = {1 * std::cos(a0) - 2 * std::sin(a0), 1 * std::sin(a0) + 2 * std::cos(a0),
                            3 * std::cos(a1) - 4 * std::sin(a1), 3 * std::sin(a1) + 4 * std::cos(a1)};
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[0][t][0][i].item<double>(), want[i], 1e-6) << "t " << t << " i " << i;
  }
}

// Grouped-query attention by hand: 4 query heads over 2 key/value heads (query heads 0, 1 read
// kv head 0; 2, 3 read kv head 1), 2 positions, head dim 1. Position 0 sees only itself: v0.
// Position 1 with q = 1 against keys 0 and ln 3 weighs v0, v1 by 1/4, 3/4; with q = 0 by 1/2, 1/2.
TEST(LanguageModels, GroupedQueryAttentionIsCausalAndSharesKeyValueHeads) {
  auto q = at::tensor({0.f, 1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.f}).view({1, 4, 2, 1});  // [N, H, T, d]
  auto k = at::tensor({0.f, std::log(3.f), 0.f, std::log(3.f)}).view({1, 2, 2, 1});
  auto v = at::tensor({4.f, 8.f, 10.f, 30.f}).view({1, 2, 2, 1});
  const auto y = causal_grouped_attention(q, k, v);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{1, 4, 2, 1}));
  const double want[4][2] = {{4, 0.25 * 4 + 0.75 * 8}, {4, 6}, {10, 0.25 * 10 + 0.75 * 30}, {10, 20}};
  for (int h = 0; h < 4; ++h)
    for (int t = 0; t < 2; ++t) EXPECT_NEAR(y[0][h][t][0].item<double>(), want[h][t], 1e-5) << "head " << h;
}

TEST(LanguageModels, TokenBatchTargetsAreTheNextTokens) {
  const auto b = make_token_batch(3, 8, 50, at::kCPU, 7);
  ASSERT_EQ(b.input.sizes(), (std::vector<int64_t>{3, 8}));
  ASSERT_EQ(b.target.sizes(), (std::vector<int64_t>{3, 8}));
  EXPECT_TRUE(b.input.slice(1, 1).equal(b.target.slice(1, 0, 7)));
  EXPECT_GE(b.input.min().item<int64_t>(), 0);
  EXPECT_LT(b.target.max().item<int64_t>(), 50);
}

// ---- Against the torch.nn reference in Python.

// Writes `tensors` as tests/tools/llm_reference.py reads them: DIR/NAME.json + DIR/NAME.bin.
void write_tensors(const std::filesystem::path& dir, const std::string& name, nlohmann::json meta,
                   const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  std::ofstream bin(dir / (name + ".bin"), std::ios::binary);
  int64_t offset = 0;
  meta["tensors"] = nlohmann::json::array();
  for (const auto& [n, t] : tensors) {
    const auto c = t.detach().contiguous();
    const auto bytes = static_cast<int64_t>(c.numel() * c.element_size());
    bin.write(static_cast<const char*>(c.data_ptr()), bytes);
    meta["tensors"].push_back({{"name", n},
                               {"dtype", c.scalar_type() == at::kLong ? "int64" : "float32"},
                               {"shape", c.sizes().vec()},
                               {"offset", offset},
                               {"bytes", bytes}});
    offset += bytes;
  }
  std::ofstream(dir / (name + ".json")) << meta.dump();
}

std::map<std::string, at::Tensor> read_tensors(const std::filesystem::path& dir, const std::string& name) {
  nlohmann::json meta;
  std::ifstream(dir / (name + ".json")) >> meta;
  std::ifstream bin(dir / (name + ".bin"), std::ios::binary);
  std::map<std::string, at::Tensor> out;
  for (const auto& e : meta["tensors"]) {
    auto t = at::empty(e["shape"].get<std::vector<int64_t>>(), at::kFloat);
    bin.seekg(e["offset"].get<int64_t>());
    bin.read(static_cast<char*>(t.data_ptr()), e["bytes"].get<int64_t>());
    out[e["name"].get<std::string>()] = t;
  }
  return out;
}

double rel_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1e-12, b.abs().max().item<double>());
}

struct ReferenceCase {
  std::string name;
  int64_t layers, width;
};

class AgainstPython : public ::testing::TestWithParam<ReferenceCase> {};

// fp32 on the CPU: the two implementations order their sums differently (the fused attention
// kernel on torch 2.x, Python's complex rotary), so agreement is to rounding: 1e-4 of each
// tensor's largest magnitude (measured on torch 1.13: at most 7e-7).
TEST_P(AgainstPython, LogitsLossAndEveryGradientEqualTheTorchNnReference) {
  const std::string python = "/usr/bin/python3";
  if (std::system((python + " -c 'import torch' >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "python3-torch is not installed (apt-get install python3-torch)";
  const ReferenceCase c = GetParam();
  ModelArgs a;
  a.seq_len = 12;
  a.layers = c.layers;
  a.width = c.width;
  const TransformerSpec s = language_model_spec(c.name, a);
  torch::manual_seed(11);
  auto m = make_model(c.name, a);
  m->train();
  const auto batch = make_token_batch(2, a.seq_len, s.vocab, at::kCPU, 12);
  TempDir d;
  nlohmann::json meta = {{"family", s.is_llama() ? "llama" : "gpt2"},
                         {"vocab", s.vocab},
                         {"context", s.context},
                         {"dim", s.dim},
                         {"layers", s.layers},
                         {"heads", s.heads},
                         {"kv_heads", s.kv_heads},
                         {"ffn", s.ffn},
                         {"tied", s.tied},
                         {"norm_eps", s.norm_eps},
                         {"rope_theta", s.rope_theta},
                         {"batch", 2},
                         {"seq_len", a.seq_len}};
  std::vector<std::pair<std::string, at::Tensor>> in = {{"tokens", batch.input}, {"targets", batch.target}};
  for (const auto& p : m->named_parameters()) in.emplace_back(p.key(), p.value());
  write_tensors(d.path, "in", meta, in);
  const std::string cmd = python + " " DDPBENCH_SOURCE_DIR "/tests/tools/llm_reference.py " + d.path.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto ref = read_tensors(d.path, "out");

  const auto logits = m->forward(batch.input);
  const auto loss = m->loss(logits, batch.target);
  loss.backward();
  EXPECT_LE(rel_diff(logits, ref.at("logits")), 1e-4);
  EXPECT_NEAR(loss.item<double>(), ref.at("loss").item<double>(), 1e-5);
  size_t grads = 0;
  for (const auto& p : m->named_parameters()) {
    ASSERT_TRUE(ref.count("grad." + p.key())) << p.key() << ": the reference has no such parameter";
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_LE(rel_diff(p.value().grad(), ref.at("grad." + p.key())), 1e-4) << p.key();
    ++grads;
  }
  EXPECT_EQ(grads + 2, ref.size());  // every reference gradient has its parameter (+ logits, loss)
}

INSTANTIATE_TEST_SUITE_P(Models, AgainstPython,
                         ::testing::Values(ReferenceCase{"gpt2", 2, 96}, ReferenceCase{"llama3.2-1b", 2, 128},
                                           ReferenceCase{"llama3.1-8b", 2, 64}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace ddpbench
