// Per-step cost of DistributedDataParallel at world size 1 vs a plain libtorch loop, same model, batch and optimizer.
//
//   bench_dist_ddp_overhead [--steps N]
//
// The classic MNIST CNN (conv1 1->10 k5, maxpool2, relu, conv2 10->20 k5, dropout2d, maxpool2, relu, fc1 320->50,
// relu, dropout, fc2 50->10, log_softmax), batch 100 of 1x28x28, SGD lr 0.001 momentum 0.5, 1 intra-op thread.
// Two identical models train side by side; blocks of 10 steps alternate between them so load changes hit both.
// Prints median step times and the ratio ddp / plain (target <= 1.05).
#include <lakerun/dist/ddp.h>
#include <lakerun/dist/init.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/nn/functional.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/mnist_cnn.h"

namespace {

namespace F = torch::nn::functional;

using Cnn = lakerun::bench::MnistCnn<torch::nn::Module>;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 300;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--steps") steps = std::max(20, std::atoi(argv[i + 1]));
  }
  at::set_num_threads(1);
  lakerun::dist::Context& ctx = lakerun::dist::Init();
  at::manual_seed(1);
  auto plain = std::make_shared<Cnn>();
  auto wrapped = std::make_shared<Cnn>();
  {
    at::NoGradGuard no_grad;
    auto a = plain->parameters(), b = wrapped->parameters();
    for (std::size_t i = 0; i < a.size(); ++i) b[i].copy_(a[i]);
  }
  lakerun::dist::DistributedDataParallel ddp(ctx, wrapped);
  torch::optim::SGD opt_plain(plain->parameters(), torch::optim::SGDOptions(0.001).momentum(0.5));
  torch::optim::SGD opt_ddp(wrapped->parameters(), torch::optim::SGDOptions(0.001).momentum(0.5));
  at::Tensor x = at::randn({100, 1, 28, 28});
  at::Tensor y = at::randint(0, 10, {100}, at::kLong);

  auto step = [&](Cnn& net, torch::optim::SGD& opt) {
    auto start = std::chrono::steady_clock::now();
    opt.zero_grad();
    F::nll_loss(net.forward(x), y).backward();
    opt.step();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  for (int i = 0; i < 10; ++i) {
    step(*plain, opt_plain);
    step(*wrapped, opt_ddp);
  }
  std::vector<double> t_plain, t_ddp;
  const int block = 10;
  for (int done = 0; done < steps; done += block) {
    bool ddp_first = (done / block) % 2 == 1;
    for (int pass = 0; pass < 2; ++pass) {
      bool use_ddp = (pass == 0) == ddp_first;
      for (int i = 0; i < block; ++i) {
        (use_ddp ? t_ddp : t_plain).push_back(use_ddp ? step(*wrapped, opt_ddp) : step(*plain, opt_plain));
      }
    }
  }
  double p = Median(t_plain), d = Median(t_ddp);
  std::printf("MNIST CNN, batch 100, SGD(0.001, momentum 0.5), 1 thread, world size %d, %d steps each\n",
              ctx.world_size(), static_cast<int>(t_plain.size()));
  std::printf("plain libtorch loop   median %.3f ms/step\n", p);
  std::printf("lakerun DDP           median %.3f ms/step\n", d);
  std::printf("ratio ddp/plain       %.4f  (overhead %+.2f %%)\n", d / p, (d / p - 1) * 100);
  return 0;
}
