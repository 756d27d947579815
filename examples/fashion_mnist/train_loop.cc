#include "train_loop.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include "checkpoint.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/base/logging.h"
#include "lakerun/dist/collectives.h"
#include "lakerun/dist/ddp.h"
#include "lakerun/dist/distributed_sampler.h"
#include "lakerun/dist/lr_scaling.h"
#include "model.h"

namespace lakerun::examples {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(std::chrono::system_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::system_clock::now() - start).count();
}

double ProcessCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// One JSON object per line; opened only on the ranks that write.
class MetricsWriter {
 public:
  MetricsWriter(const std::string& pattern, int rank) {
    if (pattern.empty()) return;
    std::string path = pattern;
    const size_t at = path.find("{rank}");
    if (at != std::string::npos) {
      path.replace(at, 6, std::to_string(rank));
    } else if (rank != 0) {
      return;
    }
    out_.open(path, std::ios::out | std::ios::trunc);
    LAKERUN_CHECK_AS(IoError, out_.is_open(), "flag --metrics-file: cannot open ", path, " for writing");
    path_ = path;
  }
  ~MetricsWriter() {
    if (out_.is_open()) out_.flush();
  }
  bool enabled() const { return out_.is_open(); }
  void Write(const std::string& line) {
    if (!out_.is_open()) return;
    out_ << line << '\n';
    LAKERUN_CHECK_AS(IoError, out_.good(), "cannot write metrics file ", path_);
  }

 private:
  std::ofstream out_;
  std::string path_;
};

std::string FormatDouble(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

// Each rank evaluates a contiguous slice of the test set; sums are all-reduced so every rank gets the same result.
EvalResult Evaluate(Net& net, dist::Context& ctx, const at::Tensor& images, const at::Tensor& labels) {
  const int64_t total = images.size(0);
  const int64_t per_rank = (total + ctx.world_size() - 1) / ctx.world_size();
  const int64_t begin = std::min<int64_t>(total, per_rank * ctx.rank());
  const int64_t end = std::min<int64_t>(total, begin + per_rank);
  double loss_sum = 0;
  int64_t correct = 0;
  net->eval();
  {
    torch::NoGradGuard no_grad;
    constexpr int64_t kEvalBatch = 1000;
    for (int64_t i = begin; i < end; i += kEvalBatch) {
      const int64_t n = std::min(kEvalBatch, end - i);
      const at::Tensor output = net->forward(images.narrow(0, i, n));
      const at::Tensor target = labels.narrow(0, i, n);
      loss_sum += at::nll_loss(output, target, {}, at::Reduction::Sum).item<double>();
      correct += output.argmax(1).eq(target).sum().item<int64_t>();
    }
  }
  net->train();
  at::Tensor sums = at::tensor({loss_sum, static_cast<double>(correct)}, at::kDouble);
  dist::AllReduce(ctx, sums, dist::ReduceOp::kSum);
  EvalResult result;
  result.total = total;
  result.average_loss = sums[0].item<double>() / static_cast<double>(std::max<int64_t>(total, 1));
  result.correct = static_cast<int64_t>(std::llround(sums[1].item<double>()));
  return result;
}

void PrintTestLine(const EvalResult& eval) {
  std::printf("\nTest set: Average loss: %.4f, Accuracy: %lld/%lld (%.0f%%)\n\n", eval.average_loss,
              static_cast<long long>(eval.correct), static_cast<long long>(eval.total), 100.0 * eval.accuracy());
  std::fflush(stdout);
}

}  // namespace

TrainResult Train(const ExampleOptions& options, dist::Context& ctx, const FashionMnist& data,
                  std::chrono::system_clock::time_point start, TrainObserver* observer,
                  std::shared_ptr<torch::nn::Module>* trained) {
  const int rank = ctx.rank();
  const int world = ctx.world_size();
  const bool leader = rank == 0;
  TrainObserver no_observer;
  TrainObserver& observe = observer != nullptr && leader ? *observer : no_observer;

  const int64_t train_available = data.train_images.size(0);
  const int64_t train_size = options.train_limit > 0 ? std::min(options.train_limit, train_available) : train_available;
  const int64_t test_size =
      options.test_limit > 0 ? std::min(options.test_limit, data.test_images.size(0)) : data.test_images.size(0);
  const at::Tensor test_images = data.test_images.narrow(0, 0, test_size);
  const at::Tensor test_labels = data.test_labels.narrow(0, 0, test_size);

  torch::manual_seed(options.seed);
  NetOptions net_options;
  net_options.dropout = options.dropout;
  net_options.channels_last = options.channels_last;
  Net net(net_options);
  if (!options.init_weights.empty()) LoadParameters(net, options.init_weights);

  TrainResult result;
  result.world_size = world;
  result.lr = dist::ScaleLearningRate(options.lr, world, options.scale_lr);
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(result.lr).momentum(options.momentum));

  CheckpointPosition position;
  if (options.resume) {
    if (auto latest = FindLatestCheckpoint(options.checkpoint_dir)) {
      position = LoadCheckpoint(*latest, *net, optimizer);
      if (leader) {
        std::printf("Resumed from %s (epoch %lld done, step %lld)\n", latest->c_str(),
                    static_cast<long long>(position.epoch), static_cast<long long>(position.global_step));
      }
    } else if (leader) {
      std::printf("No checkpoint in %s; starting from scratch\n", options.checkpoint_dir.c_str());
    }
  }

  // Broadcasts rank 0's parameters, so every replica starts from the same weights whatever each rank loaded.
  dist::DdpOptions ddp_options;
  ddp_options.shared_memory = options.shared_memory_gradients;
  dist::DistributedDataParallel ddp(ctx, net.ptr(), ddp_options);
  if (leader && world > 1) {
    std::printf("Gradients all-reduced through %s\n", ddp.GradientTransport().c_str());
    std::fflush(stdout);
  }
  if (leader && !options.save_initial_weights.empty()) SaveParametersForPython(net, options.save_initial_weights);

  dist::SamplerOptions sampler_options;
  sampler_options.seed = options.sampler_seed;
  dist::DistributedSampler sampler(train_size, rank, world, sampler_options);
  const int64_t steps_per_epoch = (sampler.num_samples() + options.batch_size - 1) / options.batch_size;
  LAKERUN_CHECK_AS(ConfigError, steps_per_epoch > 0, "the training set is empty (--train-limit ", options.train_limit,
                   ")");

  MetricsWriter metrics(options.metrics_file, rank);
  net->train();
  int64_t global_step = position.global_step;
  int64_t last_eval_step = -1;
  double steady_seconds = 0;
  double steady_cpu_seconds = 0;
  int64_t steady_steps = 0;
  int64_t steady_samples = 0;
  double train_seconds = 0;
  bool stop = options.max_steps > 0 && global_step >= options.max_steps;

  auto evaluate_and_check = [&](int64_t epoch) {
    result.test = Evaluate(net, ctx, test_images, test_labels);
    last_eval_step = global_step;
    const double t = SecondsSince(start);
    metrics.Write(StrCat("{\"type\":\"eval\",\"epoch\":", epoch, ",\"step\":", global_step,
                         ",\"test_loss\":", FormatDouble(result.test.average_loss),
                         ",\"test_accuracy\":", FormatDouble(result.test.accuracy()), ",\"t\":", FormatDouble(t), "}"));
    observe.OnEvaluation(global_step, epoch, result.test);
    if (options.target_accuracy > 0 && result.test.accuracy() >= options.target_accuracy) {
      if (!result.time_to_target_s) result.time_to_target_s = t;
      stop = true;
    }
  };

  for (int64_t epoch = position.epoch + 1; epoch <= options.epochs && !stop; ++epoch) {
    sampler.set_epoch(epoch - 1);  // as `for epoch in range(epochs): sampler.set_epoch(epoch)`
    const std::vector<int64_t> order = sampler.indices();
    const at::Tensor order_tensor = at::tensor(order, at::kLong);
    bool epoch_finished = true;
    for (int64_t batch_idx = 0; batch_idx < steps_per_epoch; ++batch_idx) {
      if (options.max_steps > 0 && global_step >= options.max_steps) {
        epoch_finished = false;
        stop = true;
        break;
      }
      const int64_t first = batch_idx * options.batch_size;
      const int64_t n = std::min(options.batch_size, sampler.num_samples() - first);
      const auto t0 = Clock::now();
      const double cpu0 = ProcessCpuSeconds();

      const at::Tensor index = order_tensor.narrow(0, first, n);
      const at::Tensor x = data.train_images.index_select(0, index);
      const at::Tensor y = data.train_labels.index_select(0, index);
      optimizer.zero_grad();
      const at::Tensor loss = at::nll_loss(net->forward(x), y);
      loss.backward();  // DDP averages the gradients before backward returns
      optimizer.step();
      const float loss_value = loss.item<float>();

      const double step_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      train_seconds += step_seconds;
      if (batch_idx >= options.warmup_steps) {
        steady_seconds += step_seconds;
        steady_cpu_seconds += ProcessCpuSeconds() - cpu0;
        steady_steps += 1;
        steady_samples += n * world;
      }
      ++global_step;
      ++result.steps_this_run;
      if (result.steps_this_run == 1) result.first_step_done_s = SecondsSince(start);
      result.losses.push_back(loss_value);
      LAKERUN_CHECK_AS(ConfigError, std::isfinite(loss_value), "rank ", rank, ": the loss became ", loss_value,
                       " at step ", global_step, " (epoch ", epoch, "); lower --lr");
      if (metrics.enabled()) {
        metrics.Write(StrCat("{\"type\":\"step\",\"epoch\":", epoch, ",\"step\":", global_step,
                             ",\"loss\":", FormatDouble(loss_value), ",\"step_ms\":", FormatDouble(step_seconds * 1e3),
                             "}"));
      }
      if (leader && batch_idx % options.log_interval == 0) {
        std::printf("Train Epoch: %lld [%lld/%lld (%.0f%%)]\tLoss: %.6f\n", static_cast<long long>(epoch),
                    static_cast<long long>(first * world), static_cast<long long>(train_size),
                    100.0 * static_cast<double>(batch_idx) / static_cast<double>(steps_per_epoch), loss_value);
        std::fflush(stdout);
        observe.OnTrainLoss(global_step, epoch, loss_value);
      }
      if (options.eval_every > 0 && global_step % options.eval_every == 0) {
        evaluate_and_check(epoch);
        if (leader) {
          std::printf("Step %lld: test accuracy %.4f\n", static_cast<long long>(global_step), result.test.accuracy());
          std::fflush(stdout);
        }
        if (stop) {
          epoch_finished = false;
          break;
        }
      }
    }
    if (!epoch_finished) break;
    result.epochs_completed = epoch;
    if (last_eval_step != global_step) evaluate_and_check(epoch);
    if (leader) PrintTestLine(result.test);
    if (leader && !options.checkpoint_dir.empty()) {
      const std::string path =
          SaveCheckpoint(options.checkpoint_dir, CheckpointPosition{epoch, global_step}, *net, optimizer);
      std::printf("Saved checkpoint %s\n", path.c_str());
      std::fflush(stdout);
      observe.OnCheckpoint(epoch, path);
    }
  }
  if (last_eval_step != global_step || result.test.total == 0) {
    evaluate_and_check(result.epochs_completed);
    if (leader) PrintTestLine(result.test);
  }

  if (metrics.enabled()) {
    // Replicas must end identical; tests compare this across ranks.
    double checksum = 0;
    for (const auto& p : net->parameters()) checksum += p.detach().to(at::kDouble).abs().sum().item<double>();
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.17g", checksum);
    metrics.Write(StrCat("{\"type\":\"final\",\"step\":", global_step, ",\"param_checksum\":", buffer, "}"));
  }
  if (trained != nullptr) *trained = net.ptr();
  result.steps = global_step;
  result.train_seconds = train_seconds;
  if (steady_steps > 0) {
    result.steady_samples_per_s = static_cast<double>(steady_samples) / steady_seconds;
    result.steady_step_ms = 1e3 * steady_seconds / static_cast<double>(steady_steps);
    result.cpu_ms_per_step = 1e3 * steady_cpu_seconds / static_cast<double>(steady_steps);
  }
  return result;
}

}  // namespace lakerun::examples
