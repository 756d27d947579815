// A transformer-style language model for tests and benchmarks of the data-parallel wrappers: token and position
// embeddings, pre-norm blocks of causal multi-head attention and a GELU MLP (4x wide), a final layer norm and a head.
//
//   lakerun::testing::TransformerLm net({/*width=*/32, /*heads=*/4, /*blocks=*/2, /*context=*/8, /*vocab=*/64});
//   at::Tensor logits = net.forward(ids);                        // ids [N, T <= context] int64 -> [N, T, vocab]
//   at::Tensor loss = net.NextTokenLoss(ids_with_one_more_column);  // cross-entropy of each next token
//
// Submodules: tokens, positions, blocks.<i>.{ln1, qkv, proj, ln2, up, down}, ln_f, head. Parameters per block:
// 12 w^2 + 13 w (w = width).
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

namespace lakerun::testing {

struct TransformerOptions {
  int64_t width = 32;
  int64_t heads = 4;
  int blocks = 2;
  int64_t context = 8;
  int64_t vocab = 64;
};

struct AttentionBlock : torch::nn::Module {
  AttentionBlock(int64_t width, int64_t heads) : width_(width), heads_(heads) {
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})));
    qkv = register_module("qkv", torch::nn::Linear(width, 3 * width));
    proj = register_module("proj", torch::nn::Linear(width, width));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})));
    up = register_module("up", torch::nn::Linear(width, 4 * width));
    down = register_module("down", torch::nn::Linear(4 * width, width));
  }
  at::Tensor forward(const at::Tensor& x) {  // [N, T, width]
    const int64_t n = x.size(0), t = x.size(1), d = width_ / heads_;
    std::vector<at::Tensor> qkv_parts = qkv(ln1(x)).view({n, t, 3, heads_, d}).permute({2, 0, 3, 1, 4}).unbind(0);
    at::Tensor scores = at::matmul(qkv_parts[0], qkv_parts[1].transpose(-2, -1)) / std::sqrt(static_cast<double>(d));
    const at::Tensor causal = at::ones({t, t}, x.options().dtype(at::kBool)).triu(1);
    at::Tensor attended = at::matmul(scores.masked_fill(causal, -1e9).softmax(-1), qkv_parts[2]);
    at::Tensor h = x + proj(attended.transpose(1, 2).reshape({n, t, width_}));
    return h + down(at::gelu(up(ln2(h))));
  }
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, up{nullptr}, down{nullptr};

 private:
  int64_t width_, heads_;
};

struct TransformerLm : torch::nn::Module {
  explicit TransformerLm(TransformerOptions options = {}) : options_(options) {
    tokens = register_module("tokens", torch::nn::Embedding(options.vocab, options.width));
    positions = register_module("positions", torch::nn::Embedding(options.context, options.width));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < options.blocks; ++i) blocks->push_back(std::make_shared<AttentionBlock>(options.width, options.heads));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.width})));
    head = register_module("head", torch::nn::Linear(options.width, options.vocab));
  }
  at::Tensor forward(const at::Tensor& ids) {
    at::Tensor x = tokens(ids) + positions(at::arange(ids.size(1), ids.options()));
    for (const auto& block : *blocks) x = block->as<AttentionBlock>()->forward(x);
    return head(ln_f(x));
  }
  /// ids: [N, T + 1]; the mean cross-entropy of predicting ids[:, 1:] from ids[:, :-1].
  at::Tensor NextTokenLoss(const at::Tensor& ids) {
    const int64_t t = ids.size(1) - 1;
    at::Tensor logits = forward(ids.narrow(1, 0, t));
    return torch::nn::functional::cross_entropy(logits.reshape({-1, options_.vocab}),
                                                ids.narrow(1, 1, t).reshape({-1}));
  }
  const TransformerOptions& options() const { return options_; }

  torch::nn::Embedding tokens{nullptr}, positions{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
  torch::nn::Linear head{nullptr};

 private:
  TransformerOptions options_;
};

}  // namespace lakerun::testing
