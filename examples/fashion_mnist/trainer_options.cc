#include "trainer_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "flag_values.h"
#include "lakerun/base/error.h"

namespace lakerun::examples {

std::string TrainerExampleUsage() {
  return R"(usage: fashion_mnist [flags]
Trains PyTorch's MNIST CNN on the Fashion-MNIST Delta tables with lakerun::train::Trainer, on one process or on
every rank of `lakerun launch -n N -- fashion_mnist` (or torchrun, Slurm, MPI). Imports the tables from the IDX
files on first use. Logs to MLflow (./mlruns) from rank 0.

  --epochs N                 max epochs (5)
  --lr X                     SGD learning rate (0.05)
  --momentum X               SGD momentum (0.5)
  --batch-size N             training samples per rank per step (100)
  --eval-batch-size N        validation / test samples per rank per batch (1000)
  --seed N                   initial weights, dropout, shuffling (1)
  --table DIR                the train/ and test/ Delta tables (data/fashion-mnist; imported when missing)
  --idx-dir DIR              IDX files to import from (/usr/share/datasets/fashion-mnist)
  --mean X --std X           input normalization (0.1307, 0.3081: MNIST's, as the seed example)
  --checkpoint-dir DIR       ModelCheckpoint's directory: best (by val_loss) and last.ckpt (checkpoints)
  --resume                   continue from DIR/last.ckpt (ckpt_path="last"); fresh when there is none
  --strategy S               on several ranks: ddp, zero1 (optimizer state sharded), zero2 (and gradients) or
                             fsdp (and parameters) (ddp)
  --threads N                intra-op threads per rank (OMP_NUM_THREADS, else 1)
  --collective-timeout S     seconds a rank waits for its peers to join or to reach a collective (300)
  --limit-train-batches N    batches per training epoch (all)
  --limit-val-batches N      validation batches (all)
  --limit-test-batches N     test batches (all)
  --min-delta X              EarlyStopping min_delta (0.01)
  --patience N               EarlyStopping patience (10)
  --stopping-threshold X     EarlyStopping: stop once val_loss < X (0.55; `none`: off)
  --progress-every N         progress line every N optimizer steps (100; 0: epoch ends only)
  --log-every-n-steps N      training metrics reach MLflow every N steps (50)
  --tracking-uri URI         where rank 0 logs (MLFLOW_TRACKING_URI, else ./mlruns)
  --experiment NAME          experiment (MLFLOW_EXPERIMENT_NAME, else fashion-mnist)
  --run-name NAME            run name (generated if not given)
  --no-tracking              log nothing
  --no-log-model             log params and metrics but not the final model
)";
}

TrainerExampleOptions ParseTrainerExampleOptions(int argc, const char* const* argv) {
  TrainerExampleOptions o;
  const std::map<std::string, FlagSetter> with_value = {
      {"--epochs", [&](auto& f, auto& v) { o.epochs = ParseInt(f, v, 1); }},
      {"--lr", [&](auto& f, auto& v) { o.lr = ParseDouble(f, v, 0, true); }},
      {"--momentum", [&](auto& f, auto& v) { o.momentum = ParseDouble(f, v, 0, false); }},
      {"--batch-size", [&](auto& f, auto& v) { o.batch_size = ParseInt(f, v, 1); }},
      {"--eval-batch-size", [&](auto& f, auto& v) { o.eval_batch_size = ParseInt(f, v, 1); }},
      {"--seed", [&](auto& f, auto& v) { o.seed = static_cast<uint64_t>(ParseInt(f, v, 0)); }},
      {"--table", [&](auto&, auto& v) { o.table = v; }},
      {"--idx-dir", [&](auto&, auto& v) { o.idx_dir = v; }},
      {"--mean", [&](auto& f, auto& v) { o.mean = ParseDouble(f, v, -1e9, false); }},
      {"--std", [&](auto& f, auto& v) { o.std = ParseDouble(f, v, 0, true); }},
      {"--checkpoint-dir", [&](auto&, auto& v) { o.checkpoint_dir = v; }},
      {"--threads", [&](auto& f, auto& v) { o.threads = static_cast<int>(ParseInt(f, v, 1)); }},
      {"--collective-timeout", [&](auto& f, auto& v) { o.collective_timeout_s = ParseDouble(f, v, 0, true); }},
      {"--limit-train-batches", [&](auto& f, auto& v) { o.limit_train_batches = ParseInt(f, v, 1); }},
      {"--limit-val-batches", [&](auto& f, auto& v) { o.limit_val_batches = ParseInt(f, v, 0); }},
      {"--limit-test-batches", [&](auto& f, auto& v) { o.limit_test_batches = ParseInt(f, v, 1); }},
      {"--min-delta", [&](auto& f, auto& v) { o.min_delta = ParseDouble(f, v, 0, false); }},
      {"--patience", [&](auto& f, auto& v) { o.patience = ParseInt(f, v, 0); }},
      {"--stopping-threshold",
       [&](auto& f, auto& v) {
         o.stopping_threshold = v == "none" ? std::nullopt : std::optional<double>(ParseDouble(f, v, -1e30, false));
       }},
      {"--progress-every", [&](auto& f, auto& v) { o.progress_every = ParseInt(f, v, 0); }},
      {"--log-every-n-steps", [&](auto& f, auto& v) { o.log_every_n_steps = ParseInt(f, v, 1); }},
      {"--tracking-uri", [&](auto&, auto& v) { o.tracking_uri = v; }},
      {"--experiment", [&](auto&, auto& v) { o.experiment = v; }},
      {"--run-name", [&](auto&, auto& v) { o.run_name = v; }},
      {"--strategy", [&](auto& f, auto& v) { o.strategy = train::ParseStrategy("flag " + f, v); }},
  };
  ParseFlags(argc, argv, [&] { o.help = true; },
             {{"--resume", [&] { o.resume = true; }},
              {"--no-tracking", [&] { o.tracking = false; }},
              {"--no-log-model", [&] { o.log_model = false; }}},
             with_value);
  LAKERUN_CHECK_AS(ConfigError, !o.table.empty(), "flag --table: expected a directory, got ''");
  LAKERUN_CHECK_AS(ConfigError, !o.checkpoint_dir.empty(), "flag --checkpoint-dir: expected a directory, got ''");
  return o;
}

}  // namespace lakerun::examples
