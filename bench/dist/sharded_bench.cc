// ZeRO levels 1, 2 and 3 (ShardedDataParallel) against DDP: step time and per-rank bytes, same model, data and Adam
// optimizer, 2 ranks on this host.
//
//   bench_dist_sharded [--steps N] [--model cnn|mlp|transformer|all]
//
// The program starts its two ranks itself. Each rank builds one identical model per contender and trains them side
// by side: blocks of 10 steps rotate among them so load changes hit all alike. Contenders: DDP; ZeRO-1, ZeRO-2 and
// ZeRO-3 as the Trainer runs them (both ranks are on this host, so buckets travel through shared memory); ZeRO-2 and
// ZeRO-3 with ShardedOptions::shared_memory off, i.e. through Gloo (reduce-scatter as all-to-all plus a sum, Gloo's
// all-gather), the path ranks on several hosts take. Models: the MNIST CNN (bench/common/mnist_cnn.h, 21,840
// parameters, batch 100; level 3's units: conv2, fc1 and the rest), an MLP 784-1024-1024-10 (1.86 M parameters,
// batch 64; units: each layer), and a transformer-style language model (lakerun_testing/transformer.h: width 128,
// 4 heads, 4 blocks, context 32, vocabulary 512; 0.93 M parameters, batch 16; units: each block and the rest);
// Adam; 1 intra-op thread per rank.
// Rank 0 prints, per model, each contender's median step (the slower rank's), the throughput ratio DDP / contender
// (1.00 = parity), and rank 0's peak bytes of: optimizer state; gradients kept between backward and step (.grad, or
// ZeRO's chunks); parameters holding values (level 3: the units gathered at once; else the whole model); ZeRO's copy
// of its chunks; transport buffers kept between steps (DDP: its buckets, one flat buffer per bucket covering every
// parameter; ZeRO-1: DDP's buckets plus its all-gather slots; ZeRO-2 and 3: its slots).
#include <lakerun/dist/collectives.h>
#include <lakerun/dist/ddp.h>
#include <lakerun/dist/init.h>
#include <lakerun/dist/sharded.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "../common/local_ranks.h"
#include "../common/mnist_cnn.h"
#include "lakerun_testing/transformer.h"

namespace {

namespace dist = lakerun::dist;
using Clock = std::chrono::steady_clock;

struct Mlp : torch::nn::Module {
  Mlp() {
    fc1 = register_module("fc1", torch::nn::Linear(784, 1024));
    fc2 = register_module("fc2", torch::nn::Linear(1024, 1024));
    fc3 = register_module("fc3", torch::nn::Linear(1024, 10));
  }
  at::Tensor forward(const at::Tensor& x) {
    return at::log_softmax(fc3(at::relu(fc2(at::relu(fc1(x.reshape({x.size(0), -1})))))), 1);
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Net>
struct Contender {
  const char* name;
  std::shared_ptr<Net> net;
  std::shared_ptr<torch::optim::Adam> opt;
  std::unique_ptr<dist::DistributedDataParallel> ddp;
  std::unique_ptr<dist::ShardedDataParallel> sdp;
  std::vector<double> ms;
  dist::ShardedMemory peak;

  double Step(const std::function<at::Tensor(Net&)>& loss) {
    const auto start = Clock::now();
    opt->zero_grad();
    loss(*net).backward();
    dist::ShardedMemory now = Held();  // between backward and step: gradients are there
    if (sdp) {
      sdp->Step();
    } else {
      opt->step();
    }
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    now.optimizer_state_bytes = Held().optimizer_state_bytes;
    peak.optimizer_state_bytes = std::max(peak.optimizer_state_bytes, now.optimizer_state_bytes);
    peak.gradient_bytes = std::max(peak.gradient_bytes, now.gradient_bytes);
    peak.chunk_bytes = std::max(peak.chunk_bytes, now.chunk_bytes);
    peak.transport_bytes = std::max(peak.transport_bytes, now.transport_bytes);
    peak.peak_resident_parameter_bytes = Held().peak_resident_parameter_bytes;
    return elapsed;
  }

  dist::ShardedMemory Held() const {
    dist::ShardedMemory m;
    if (sdp) {
      m = sdp->Memory();
    } else {
      m.optimizer_state_bytes = dist::OptimizerStateBytes(*opt);
      for (const auto& p : net->parameters()) {
        if (p.grad().defined()) m.gradient_bytes += static_cast<int64_t>(p.grad().nbytes());
        m.peak_resident_parameter_bytes += static_cast<int64_t>(p.nbytes());
      }
    }
    if (!sdp || sdp->stage() == dist::ZeroStage::kOptimizerState) {
      for (const auto& p : net->parameters()) m.transport_bytes += static_cast<int64_t>(p.nbytes());  // DDP's buckets
    }
    return m;
  }
};

template <typename Net>
void BenchModel(dist::Context& ctx, const char* title, const std::function<std::shared_ptr<Net>()>& make,
                int64_t unit_min_params, const std::function<at::Tensor(Net&)>& loss, int steps) {
  at::manual_seed(1);
  auto reference = make();
  constexpr int kContenders = 6;
  std::vector<Contender<Net>> all(kContenders);
  const char* names[] = {"DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3", "ZeRO-2 gloo", "ZeRO-3 gloo"};
  const dist::ZeroStage stages[] = {dist::ZeroStage::kOptimizerState, dist::ZeroStage::kOptimizerState,
                                    dist::ZeroStage::kGradients,      dist::ZeroStage::kParameters,
                                    dist::ZeroStage::kGradients,      dist::ZeroStage::kParameters};
  for (int c = 0; c < kContenders; ++c) {
    Contender<Net>& k = all[c];
    k.name = names[c];
    k.net = make();
    {
      at::NoGradGuard no_grad;
      auto from = reference->parameters(), to = k.net->parameters();
      for (std::size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
    }
    k.opt = std::make_shared<torch::optim::Adam>(k.net->parameters(), torch::optim::AdamOptions(1e-3));
    if (c == 0) {
      k.ddp = std::make_unique<dist::DistributedDataParallel>(ctx, k.net);
    } else {
      dist::ShardedOptions o;
      o.stage = stages[c];
      o.shared_memory = c < 4;
      o.unit_min_params = unit_min_params;
      std::vector<std::shared_ptr<torch::optim::Optimizer>> optimizers{k.opt};
      k.sdp = std::make_unique<dist::ShardedDataParallel>(ctx, k.net, optimizers, o);
    }
  }
  for (int warm = 0; warm < 5; ++warm) {
    for (auto& k : all) k.Step(loss);
  }
  const int block = 10;
  for (int done = 0; done < steps; done += block) {
    for (int turn = 0; turn < kContenders; ++turn) {
      Contender<Net>& k = all[(done / block + turn) % kContenders];
      for (int i = 0; i < block; ++i) k.ms.push_back(k.Step(loss));
    }
  }
  int64_t params = 0;
  for (const auto& p : reference->parameters()) params += p.numel();
  std::vector<double> median(kContenders);
  for (int c = 0; c < kContenders; ++c) {
    median[c] = dist::AllReduceDouble(ctx, Median(all[c].ms), dist::ReduceOp::kMax);
  }
  if (ctx.rank() != 0) return;
  std::printf("\n%s: %lld parameters, Adam, 2 ranks, %d steps each\n", title, static_cast<long long>(params),
              static_cast<int>(all[0].ms.size()));
  std::printf("%-12s %9s %15s %13s %12s %12s %12s %15s\n", "", "ms/step", "ratio DDP/this", "optim bytes",
              "grad bytes", "param bytes", "chunk bytes", "transport bytes");
  for (int c = 0; c < kContenders; ++c) {
    const dist::ShardedMemory& m = all[c].peak;
    std::printf("%-12s %9.3f %15.3f %13lld %12lld %12lld %12lld %15lld\n", all[c].name, median[c],
                median[0] / median[c], static_cast<long long>(m.optimizer_state_bytes),
                static_cast<long long>(m.gradient_bytes), static_cast<long long>(m.peak_resident_parameter_bytes),
                static_cast<long long>(m.chunk_bytes), static_cast<long long>(m.transport_bytes));
  }
  std::printf("optimizer state per rank, ZeRO / DDP: %.3f (level 1), %.3f (level 2), %.3f (level 3)\n",
              static_cast<double>(all[1].peak.optimizer_state_bytes) / all[0].peak.optimizer_state_bytes,
              static_cast<double>(all[2].peak.optimizer_state_bytes) / all[0].peak.optimizer_state_bytes,
              static_cast<double>(all[3].peak.optimizer_state_bytes) / all[0].peak.optimizer_state_bytes);
  std::printf("transports (gradients / parameters): DDP %s", all[0].ddp->GradientTransport().c_str());
  for (int c = 1; c < kContenders; ++c) {
    std::printf("; %s %s / %s", all[c].name, all[c].sdp->GradientTransport().c_str(),
                all[c].sdp->ParameterTransport().c_str());
  }
  const dist::ShardedStepStats stats = all[3].sdp->LastStepStats();
  std::printf("\nZeRO-3's last step: %d unit gathers, %d of them prefetched\n", stats.parameter_gathers,
              stats.prefetched_gathers);
  std::fflush(stdout);
}

int RunRank(int steps, const std::string& model) {
  at::set_num_threads(1);
  dist::InitOptions options;
  options.timeout = std::chrono::minutes(2);
  dist::Context& ctx = dist::Init(options);
  at::manual_seed(100 + ctx.rank());
  if (model == "cnn" || model == "all") {
    using Cnn = lakerun::bench::MnistCnn<torch::nn::Module>;
    const at::Tensor x = at::randn({100, 1, 28, 28}), y = at::randint(0, 10, {100}, at::kLong);
    BenchModel<Cnn>(
        ctx, "MNIST CNN, batch 100", [] { return std::make_shared<Cnn>(); }, 5000,
        [&](Cnn& net) { return at::nll_loss(net.forward(x), y); }, steps);
  }
  if (model == "mlp" || model == "all") {
    const at::Tensor x = at::randn({64, 1, 28, 28}), y = at::randint(0, 10, {64}, at::kLong);
    BenchModel<Mlp>(
        ctx, "MLP 784-1024-1024-10, batch 64", [] { return std::make_shared<Mlp>(); }, 5000,
        [&](Mlp& net) { return at::nll_loss(net.forward(x), y); }, steps);
  }
  if (model == "transformer" || model == "all") {
    using lakerun::testing::TransformerLm;
    const lakerun::testing::TransformerOptions shape{128, 4, 4, 32, 512};
    const at::Tensor ids = at::randint(0, shape.vocab, {16, shape.context + 1}, at::kLong);
    BenchModel<TransformerLm>(
        ctx, "Transformer-style LM (width 128, 4 blocks, context 32), batch 16",
        [&] { return std::make_shared<TransformerLm>(shape); }, 100'000,
        [&](TransformerLm& net) { return net.NextTokenLoss(ids); }, steps);
  }
  dist::Barrier(ctx);
  dist::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 150;
  std::string model = "all";
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--steps") steps = std::max(30, std::atoi(argv[i + 1]));
    if (std::string(argv[i]) == "--model") model = argv[i + 1];
  }
  if (model != "cnn" && model != "mlp" && model != "transformer" && model != "all") {
    std::fprintf(stderr, "--model must be cnn, mlp, transformer or all, got %s\n", model.c_str());
    return 2;
  }
  try {
    if (std::getenv("RANK") == nullptr) return lakerun::bench::RunLocalRanks(2, argv);
    return RunRank(steps, model);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
