// Test support for the sharded data parallel tests: a small model, its data, optimizers of each supported kind, and
// one training routine that runs it under DDP or either ZeRO level on the calling rank.
#pragma once

#include <lakerun/base/error.h>
#include <lakerun/dist/ddp.h>
#include <lakerun/dist/sharded.h>

#include "dist/optimizer_state.h"
#include "dist/rank_threads.h"
#include "lakerun_testing/transformer.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/module.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace lakerun::dist::testing {

// Layers of odd sizes, so bucket chunks cut through parameters.
struct ShardNet : torch::nn::Module {
  ShardNet() {
    fc1 = register_module("fc1", torch::nn::Linear(6, 10));
    fc2 = register_module("fc2", torch::nn::Linear(10, 7));
    fc3 = register_module("fc3", torch::nn::Linear(7, 3));
  }
  at::Tensor forward(const at::Tensor& x) { return fc3(torch::tanh(fc2(torch::tanh(fc1(x))))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

enum class Parallel { kDdp, kZero1, kZero2, kZero3 };
enum class Opt { kSgd, kAdam, kAdamW, kRmsprop, kAdagrad };

inline const char* Name(Parallel p) {
  switch (p) {
    case Parallel::kDdp: return "ddp";
    case Parallel::kZero1: return "zero1";
    case Parallel::kZero2: return "zero2";
    case Parallel::kZero3: return "zero3";
  }
  return "?";
}

inline ZeroStage StageOf(Parallel p) {
  return p == Parallel::kZero1 ? ZeroStage::kOptimizerState
         : p == Parallel::kZero2 ? ZeroStage::kGradients
                                 : ZeroStage::kParameters;
}
inline const char* Name(Opt o) {
  switch (o) {
    case Opt::kSgd: return "sgd";
    case Opt::kAdam: return "adam";
    case Opt::kAdamW: return "adamw";
    case Opt::kRmsprop: return "rmsprop";
    case Opt::kAdagrad: return "adagrad";
  }
  return "?";
}

/// Two param groups (fc1 at a lower learning rate), each kind with non-default options that reach every field.
inline std::shared_ptr<torch::optim::Optimizer> MakeOpt(Opt kind, ShardNet& net) {
  std::vector<at::Tensor> first = net.fc1->parameters(), rest;
  for (auto* m : {&net.fc2, &net.fc3}) {
    for (const auto& p : (*m)->parameters()) rest.push_back(p);
  }
  auto groups = [&](auto options) {
    std::vector<torch::optim::OptimizerParamGroup> g;
    auto slow = std::make_unique<decltype(options)>(options);
    slow->lr(options.lr() / 2);
    g.emplace_back(first, std::move(slow));
    g.emplace_back(rest);
    return g;
  };
  switch (kind) {
    case Opt::kSgd: {
      auto o = torch::optim::SGDOptions(0.1).momentum(0.5).weight_decay(1e-3).nesterov(true);
      return std::make_shared<torch::optim::SGD>(groups(o), o);
    }
    case Opt::kAdam: {
      auto o = torch::optim::AdamOptions(0.01).weight_decay(1e-3).amsgrad(true);
      return std::make_shared<torch::optim::Adam>(groups(o), o);
    }
    case Opt::kAdamW: {
      auto o = torch::optim::AdamWOptions(0.01);
      return std::make_shared<torch::optim::AdamW>(groups(o), o);
    }
    case Opt::kRmsprop: {
      auto o = torch::optim::RMSpropOptions(0.01).momentum(0.3).centered(true);
      return std::make_shared<torch::optim::RMSprop>(groups(o), o);
    }
    case Opt::kAdagrad: {
      auto o = torch::optim::AdagradOptions(0.05).initial_accumulator_value(0.1);
      return std::make_shared<torch::optim::Adagrad>(groups(o), o);
    }
  }
  return nullptr;
}

inline std::vector<at::Tensor> Snapshot(torch::nn::Module& net) {
  std::vector<at::Tensor> out;
  for (const auto& p : net.parameters()) out.push_back(p.detach().clone());
  return out;
}

inline void Load(torch::nn::Module& net, const std::vector<at::Tensor>& values) {
  at::NoGradGuard no_grad;
  auto params = net.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(values[i]);
}

inline std::vector<at::Tensor> InitialParameters() {
  at::manual_seed(7);
  ShardNet net;
  return Snapshot(net);
}

struct TrainCase {
  int world = 2;
  Opt opt = Opt::kAdam;
  int accumulate = 1;       ///< micro-batches per step; all but the last inside NoSync()
  double clip_norm = 0;     ///< 0: none
  int64_t first_cap = 1 << 20, cap = 25 << 20;
  int steps = 6;
  bool shared_memory = true;  ///< ShardedOptions::shared_memory (DDP, the reference, always uses it)
  int64_t unit_min_params = 50;  ///< level 3: fc1 (70) and fc2 (77) are units, fc3 (24) is in the root unit
  bool prefetch = true;
  bool offload = false;  ///< ShardedOptions::offload_optimizer_state
};

/// `world` ranks training with `opt`, 2 micro-batches a step, buckets of 64 and 256 bytes (chunks that cut through
/// parameters).
inline TrainCase SmallBuckets(int world, Opt opt) {
  TrainCase c;
  c.world = world;
  c.opt = opt;
  c.accumulate = 2;
  c.first_cap = 64;
  c.cap = 256;
  return c;
}

constexpr int kRowsPerMicroBatch = 3;

/// Step s, rank r, micro-batch m of `c`: rows drawn from one seeded generator so every run sees the same data.
inline std::pair<at::Tensor, at::Tensor> Batch(const TrainCase& c, int step, int rank, int micro) {
  at::Generator gen = at::detail::createCPUGenerator(1000 + step);
  const int64_t rows = static_cast<int64_t>(c.world) * c.accumulate * kRowsPerMicroBatch;
  at::Tensor x = at::randn({rows, 6}, gen), y = at::randn({rows, 3}, gen);
  const int64_t start = (static_cast<int64_t>(rank) * c.accumulate + micro) * kRowsPerMicroBatch;
  return {x.narrow(0, start, kRowsPerMicroBatch), y.narrow(0, start, kRowsPerMicroBatch)};
}

/// What one rank ends with.
struct TrainResult {
  std::vector<at::Tensor> params;
  std::vector<double> norms;  ///< the clipping norm of each step
  int64_t state_bytes = 0;    ///< optimizer state bytes held on this rank
};

/// Part of a training run: steps [first_step, end_step) of the case, optionally from and to a checkpoint.
struct Phase {
  int first_step = 0;
  int end_step = -1;                  ///< -1: TrainCase::steps
  const std::string* load = nullptr;  ///< a checkpoint every rank loads before wrapping the module
  std::string* save = nullptr;        ///< where rank 0 writes a checkpoint (module and optimizer) at the end
  const std::string* load_sharded = nullptr;  ///< ZeRO: a sharded checkpoint directory loaded after wrapping
  const std::string* save_sharded = nullptr;  ///< ZeRO: where a sharded checkpoint is saved at the end
};

/// Module and optimizer in one archive, as a DDP program (or the Trainer) writes them.
inline std::string SaveCheckpoint(torch::nn::Module& net, const torch::optim::Optimizer& opt) {
  torch::serialize::OutputArchive ar, model, optimizer;
  net.save(model);
  opt.save(optimizer);
  ar.write("model", model);
  ar.write("optimizer", optimizer);
  std::ostringstream out;
  ar.save_to(out);
  return out.str();
}

inline void LoadCheckpoint(const std::string& bytes, torch::nn::Module& net, torch::optim::Optimizer& opt) {
  torch::serialize::InputArchive ar, model, optimizer;
  std::istringstream in(bytes);
  ar.load_from(in);
  ar.read("model", model);
  ar.read("optimizer", optimizer);
  net.load(model);
  opt.load(optimizer);
}

/// Trains steps of `c` on this rank under `parallel`, starting from `init` (rank 0's; the others start from zeros,
/// which the wrappers' broadcast must fix) or from `phase.load`.
inline TrainResult Train(Context& ctx, const TrainCase& c, Parallel parallel, const std::vector<at::Tensor>& init,
                         const Phase& phase = {}) {
  auto net = std::make_shared<ShardNet>();
  if (ctx.rank() == 0) {
    Load(*net, init);
  } else {
    for (auto& p : net->parameters()) p.detach().zero_();
  }
  std::shared_ptr<torch::optim::Optimizer> opt = MakeOpt(c.opt, *net);
  if (phase.load != nullptr) LoadCheckpoint(*phase.load, *net, *opt);
  std::unique_ptr<DistributedDataParallel> ddp;
  std::unique_ptr<ShardedDataParallel> sdp;
  if (parallel == Parallel::kDdp) {
    DdpOptions o;
    o.first_bucket_cap_bytes = c.first_cap;
    o.bucket_cap_bytes = c.cap;
    ddp = std::make_unique<DistributedDataParallel>(ctx, net, o);
  } else {
    ShardedOptions o;
    o.stage = StageOf(parallel);
    o.unit_min_params = c.unit_min_params;
    o.prefetch = c.prefetch;
    o.offload_optimizer_state = c.offload;
    o.first_bucket_cap_bytes = c.first_cap;
    o.bucket_cap_bytes = c.cap;
    o.shared_memory = c.shared_memory;
    sdp = std::make_unique<ShardedDataParallel>(ctx, net, std::vector{opt}, o);
    if (phase.load_sharded != nullptr) sdp->LoadShardedCheckpoint(*phase.load_sharded);
  }
  LAKERUN_CHECK(sdp != nullptr || phase.load_sharded == nullptr, "Phase::load_sharded needs a ZeRO level");
  TrainResult result;
  const int end = phase.end_step < 0 ? c.steps : phase.end_step;
  for (int s = phase.first_step; s < end; ++s) {
    opt->zero_grad();
    for (int m = 0; m < c.accumulate; ++m) {
      auto [x, y] = Batch(c, s, ctx.rank(), m);
      at::Tensor loss = (net->forward(x) - y).pow(2).mean() / c.accumulate;
      if (m + 1 < c.accumulate) {
        std::optional<DistributedDataParallel::NoSyncScope> a;
        std::optional<ShardedDataParallel::NoSyncScope> b;
        if (ddp) a.emplace(*ddp);
        if (sdp) b.emplace(*sdp);
        loss.backward();
      } else {
        loss.backward();
      }
    }
    if (c.clip_norm > 0) {
      result.norms.push_back(sdp ? sdp->ClipGradNorm(c.clip_norm)
                                 : torch::nn::utils::clip_grad_norm_(net->parameters(), c.clip_norm));
    }
    if (sdp) {
      sdp->Step();
    } else {
      opt->step();
    }
  }
  if (phase.save_sharded != nullptr) {
    LAKERUN_CHECK(sdp != nullptr, "Phase::save_sharded needs a ZeRO level, not ", Name(parallel));
    sdp->SaveShardedCheckpoint(*phase.save_sharded);
  }
  std::optional<ShardedDataParallel::FullParameters> full;  // level 3 holds only shards between steps
  if (sdp) full.emplace(sdp->GatherFullParameters());
  result.params = Snapshot(*net);
  result.state_bytes = sdp ? sdp->Memory().optimizer_state_bytes : OptimizerStateBytes(*opt);
  if (phase.save != nullptr) {
    std::optional<ShardedDataParallel::GatheredState> gathered;
    if (sdp) gathered.emplace(sdp->GatherOptimizerState(0));
    if (ctx.rank() == 0) *phase.save = SaveCheckpoint(*net, *opt);
  }
  return result;
}

/// The parameters of a checkpoint's module, in parameter order.
inline std::vector<at::Tensor> ParametersIn(const std::string& checkpoint, Opt kind) {
  ShardNet net;
  auto opt = MakeOpt(kind, net);
  LoadCheckpoint(checkpoint, net, *opt);
  return Snapshot(net);
}

/// The state of each parameter of a checkpoint's optimizer, in parameter order.
inline std::vector<StateParts> OptimizerStateIn(const std::string& checkpoint, Opt kind) {
  ShardNet net;
  auto opt = MakeOpt(kind, net);
  LoadCheckpoint(checkpoint, net, *opt);
  std::vector<StateParts> out;
  for (const auto& p : net.parameters()) {
    auto it = opt->state().find(StateKey(p));
    out.push_back(it == opt->state().end() ? StateParts{} : Decompose(*KindOf(*opt), *it->second));
  }
  return out;
}

inline void ExpectSameState(const std::vector<StateParts>& a, const std::vector<StateParts>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].step, b[i].step) << what << " parameter " << i;
    ASSERT_EQ(a[i].tensors.size(), b[i].tensors.size()) << what << " parameter " << i;
    for (std::size_t f = 0; f < a[i].tensors.size(); ++f) {
      EXPECT_EQ(a[i].tensors[f].first, b[i].tensors[f].first) << what;
      EXPECT_TRUE(at::equal(a[i].tensors[f].second, b[i].tensors[f].second))
          << what << " parameter " << i << " " << a[i].tensors[f].first;
    }
  }
}

/// Every rank's result of `phase` of `c` under `parallel`, ranks as threads.
inline std::vector<TrainResult> TrainOnRanks(const TrainCase& c, Parallel parallel, const Phase& phase = {}) {
  const std::vector<at::Tensor> init = InitialParameters();
  std::vector<TrainResult> results(c.world);
  RunRanks(c.world, [&](Context& ctx) { results[ctx.rank()] = Train(ctx, c, parallel, init, phase); },
           std::chrono::seconds(60));
  return results;
}

/// The transformer-style model of the tests: 2 blocks of width 32 (12,704 parameters each), 29,312 in all.
struct TinyTransformer : lakerun::testing::TransformerLm {
  static constexpr int64_t kWidth = 32, kVocab = 64, kContext = 8;
  TinyTransformer() : TransformerLm({kWidth, /*heads=*/4, /*blocks=*/2, kContext, kVocab}) {}
};

/// Next-token loss of the transformer on step `step`, rank `rank`'s 4 sequences (a fixed pattern plus noise, so the
/// loss falls).
inline at::Tensor TransformerLoss(TinyTransformer& net, int step, int rank) {
  at::Generator gen = at::detail::createCPUGenerator(5000 + 97 * step + rank);
  at::Tensor start = at::randint(TinyTransformer::kVocab, {4, 1}, gen);
  at::Tensor ids = (start + at::arange(TinyTransformer::kContext + 1) * 3).remainder(TinyTransformer::kVocab);
  return net.NextTokenLoss(ids);
}

/// Trains `make()`'s model for `steps` Adam steps on this rank under `parallel` (sharded ones with `options`, its
/// stage replaced) and returns its parameters. Every rank builds the model the same way; the wrappers' broadcast
/// makes rank 0's values everyone's regardless.
template <class Net>
std::vector<at::Tensor> TrainModel(Context& ctx, Parallel parallel, const std::function<std::shared_ptr<Net>()>& make,
                                   const std::function<at::Tensor(Net&, int step, int rank)>& loss_of, int steps,
                                   ShardedOptions options = {}) {
  std::shared_ptr<Net> net = make();
  auto adam = std::make_shared<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(1e-3));
  std::unique_ptr<DistributedDataParallel> ddp;
  std::unique_ptr<ShardedDataParallel> sdp;
  if (parallel == Parallel::kDdp) {
    ddp = std::make_unique<DistributedDataParallel>(ctx, net);
  } else {
    options.stage = StageOf(parallel);
    sdp = std::make_unique<ShardedDataParallel>(ctx, net, std::vector<std::shared_ptr<torch::optim::Optimizer>>{adam},
                                                options);
  }
  for (int s = 0; s < steps; ++s) {
    adam->zero_grad();
    loss_of(*net, s, ctx.rank()).backward();
    if (sdp) {
      sdp->Step();
    } else {
      adam->step();
    }
  }
  std::optional<ShardedDataParallel::FullParameters> full;
  if (sdp) full.emplace(sdp->GatherFullParameters());
  return Snapshot(*net);
}

}  // namespace lakerun::dist::testing
