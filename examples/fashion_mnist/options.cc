#include "options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "flag_values.h"
#include "lakerun/base/error.h"

namespace lakerun::examples {

namespace {


dist::LrScaling ParseScaling(const std::string& value) {
  if (value == "linear") return dist::LrScaling::kLinear;
  if (value == "sqrt") return dist::LrScaling::kSqrt;
  if (value == "none") return dist::LrScaling::kNone;
  LAKERUN_THROW(ConfigError, "flag --scale-lr: expected linear, sqrt or none, got '", value, "'");
}

}  // namespace

std::string UsageText() {
  return R"(usage: fashion_mnist_ddp [flags]
Trains PyTorch's MNIST CNN on Fashion-MNIST on one process, or on every rank of a job started by
`lakerun launch -n N -- fashion_mnist_ddp`, torchrun, Slurm or MPI (gradients averaged with lakerun's DDP).

  --epochs N               epochs (3)
  --lr X                   SGD learning rate (0.001)
  --momentum X             SGD momentum (0.5)
  --batch-size N           samples per rank per step (100)
  --seed N                 torch seed: initial weights, dropout (1)
  --sampler-seed N         DistributedSampler seed (0)
  --max-steps N            stop after N steps in total (0: no limit)
  --data-dir DIR           directory of the four *-ubyte.gz files (/usr/share/datasets/fashion-mnist)
  --mean X --std X         input normalization (0.1307, 0.3081: MNIST's)
  --checkpoint-dir DIR     rank 0 writes checkpoint-epoch-<N>.pt here after each epoch
  --resume                 continue from the latest checkpoint in --checkpoint-dir, if there is one
  --scale-lr[=RULE]        scale lr with the world size: linear (bare flag), sqrt or none (default)
  --threads N              intra-op threads per rank (OMP_NUM_THREADS, else 1)
  --no-dropout             keep dropout in eval mode (for the bit-level cross-check with Python)
  --nchw                   keep activations NCHW (default: channels-last after conv1, ~1.4x faster steps)
  --gradients-via-gloo     all-reduce gradients through Gloo even when every rank is on this host (default: shared
                           memory there, see DdpOptions::shared_memory)
  --log-interval N         print the loss every N steps (10)
  --eval-every N           also evaluate every N steps (0: after each epoch only)
  --target-accuracy X      stop once the test accuracy reaches X (0: never)
  --warmup-steps N         steps per epoch left out of the steady samples/s figure (20)
  --train-limit N          train on the first N training images (0: all)
  --test-limit N           evaluate on the first N test images (0: all)
  --metrics-file PATH      JSON lines per step and evaluation ("{rank}" in PATH: one file per rank)
  --save-initial-weights PATH   write the initial parameters in torch.save format (rank 0)
  --init-weights PATH      start from parameters in torch.save format (a dict name -> tensor)
  --tracking-uri URI       where rank 0 logs params, metrics and the model (MLFLOW_TRACKING_URI, else ./mlruns)
  --experiment NAME        experiment to log to (MLFLOW_EXPERIMENT_NAME, else fashion-mnist)
  --run-name NAME          name of the run (generated if not given)
  --no-tracking            log nothing
  --no-log-model           log params and metrics but not the final model
)";
}

ExampleOptions ParseOptions(int argc, const char* const* argv) {
  ExampleOptions o;
  const std::map<std::string, FlagSetter> with_value = {
      {"--epochs", [&](auto& f, auto& v) { o.epochs = static_cast<int>(ParseInt(f, v, 1)); }},
      {"--lr", [&](auto& f, auto& v) { o.lr = ParseDouble(f, v, 0, true); }},
      {"--momentum", [&](auto& f, auto& v) { o.momentum = ParseDouble(f, v, 0, false); }},
      {"--batch-size", [&](auto& f, auto& v) { o.batch_size = ParseInt(f, v, 1); }},
      {"--seed", [&](auto& f, auto& v) { o.seed = static_cast<uint64_t>(ParseInt(f, v, 0)); }},
      {"--sampler-seed", [&](auto& f, auto& v) { o.sampler_seed = static_cast<uint64_t>(ParseInt(f, v, 0)); }},
      {"--max-steps", [&](auto& f, auto& v) { o.max_steps = ParseInt(f, v, 0); }},
      {"--data-dir", [&](auto&, auto& v) { o.data_dir = v; }},
      {"--mean", [&](auto& f, auto& v) { o.mean = ParseDouble(f, v, -1e9, false); }},
      {"--std", [&](auto& f, auto& v) { o.std = ParseDouble(f, v, 0, true); }},
      {"--checkpoint-dir", [&](auto&, auto& v) { o.checkpoint_dir = v; }},
      {"--threads", [&](auto& f, auto& v) { o.threads = static_cast<int>(ParseInt(f, v, 1)); }},
      {"--log-interval", [&](auto& f, auto& v) { o.log_interval = static_cast<int>(ParseInt(f, v, 1)); }},
      {"--eval-every", [&](auto& f, auto& v) { o.eval_every = ParseInt(f, v, 0); }},
      {"--target-accuracy", [&](auto& f, auto& v) { o.target_accuracy = ParseDouble(f, v, 0, false); }},
      {"--warmup-steps", [&](auto& f, auto& v) { o.warmup_steps = ParseInt(f, v, 0); }},
      {"--train-limit", [&](auto& f, auto& v) { o.train_limit = ParseInt(f, v, 0); }},
      {"--test-limit", [&](auto& f, auto& v) { o.test_limit = ParseInt(f, v, 0); }},
      {"--metrics-file", [&](auto&, auto& v) { o.metrics_file = v; }},
      {"--save-initial-weights", [&](auto&, auto& v) { o.save_initial_weights = v; }},
      {"--init-weights", [&](auto&, auto& v) { o.init_weights = v; }},
      {"--scale-lr", [&](auto&, auto& v) { o.scale_lr = ParseScaling(v); }},
      {"--tracking-uri", [&](auto&, auto& v) { o.tracking_uri = v; }},
      {"--experiment", [&](auto&, auto& v) { o.experiment = v; }},
      {"--run-name", [&](auto&, auto& v) { o.run_name = v; }},
  };
  ParseFlags(argc, argv, [&] { o.help = true; },
             {{"--resume", [&] { o.resume = true; }},
              {"--no-dropout", [&] { o.dropout = false; }},
              {"--nchw", [&] { o.channels_last = false; }},
              {"--gradients-via-gloo", [&] { o.shared_memory_gradients = false; }},
              {"--no-tracking", [&] { o.tracking = false; }},
              {"--no-log-model", [&] { o.log_model = false; }},
              // the bare flag; the value form goes through with_value
              {"--scale-lr", [&] { o.scale_lr = dist::LrScaling::kLinear; }}},
             with_value);
  LAKERUN_CHECK_AS(ConfigError, !o.resume || !o.checkpoint_dir.empty(), "flag --resume needs --checkpoint-dir");
  LAKERUN_CHECK_AS(ConfigError, o.target_accuracy <= 1.0, "flag --target-accuracy: expected at most 1, got ",
                   o.target_accuracy);
  return o;
}

}  // namespace lakerun::examples
