// fashion_mnist: the seed CNN trained by lakerun::train::Trainer on the Fashion-MNIST Delta tables — the main job.
//
//   ./fashion_mnist                                   # one process; imports data/fashion-mnist on first use
//   lakerun launch -n 2 -- ./fashion_mnist            # two ranks, the same program
//
// Rank 0 imports the tables when missing (table_setup.h), every rank reads its shard through lakerun::data::Loader
// (table_data.h), the Trainer fits with EarlyStopping and ModelCheckpoint, then tests on the test table; rank 0 logs
// params, metrics, the checkpoints and the final model to MLflow (./mlruns). See README.md and --help.
#include <dlfcn.h>

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "lakerun/base/error.h"
#include "lakerun/base/run_main.h"
#include "lakerun/data/loader.h"
#include "lakerun/dist/init.h"
#include "lakerun/track/torch_model.h"
#include "lakerun/track/tracker.h"
#include "lakerun/train/early_stopping.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"
#include "lightning_module.h"
#include "table_data.h"
#include "table_setup.h"
#include "trainer_options.h"

namespace lakerun::examples {
namespace {

// --threads, else OMP_NUM_THREADS, else 1 (one process per core beats threads on a busy box). OpenBLAS's pthread
// build would otherwise start one thread per core in every rank.
int SetThreads(int requested) {
  int threads = requested;
  if (threads <= 0) {
    threads = 1;
    if (const char* env = std::getenv("OMP_NUM_THREADS"); env != nullptr && *env) {
      threads = std::atoi(env);
      LAKERUN_CHECK_AS(ConfigError, threads >= 1, "OMP_NUM_THREADS must be a positive integer, got '", env, "'");
    }
  }
  at::set_num_threads(threads);
  using SetFn = void (*)(int);
  if (auto set = reinterpret_cast<SetFn>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
  return threads;
}

std::string Num(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

float MetricOr(const train::MetricMap& metrics, const std::string& key, float fallback) {
  auto it = metrics.find(key);
  return it == metrics.end() ? fallback : it->second;
}

int Run(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  const TrainerExampleOptions options = ParseTrainerExampleOptions(argc, argv);
  if (options.help) {
    std::fputs(TrainerExampleUsage().c_str(), stdout);
    return 0;
  }
  const int threads = SetThreads(options.threads);
  dist::InitOptions init;
  init.timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(options.collective_timeout_s * 1000)));
  dist::Context& ctx = dist::Init(init);
  const bool chief = ctx.rank() == 0;
  std::unique_ptr<train::RankSync> sync;
  if (ctx.world_size() > 1) {
    sync = train::NewDistRankSync(ctx);
  } else {
    sync = std::make_unique<train::LocalRankSync>();
  }

  // Data: the Delta tables (imported by rank 0 on first use), one Loader per split and rank.
  TableSetupOptions table_setup;
  table_setup.table = options.table;
  table_setup.idx_dir = options.idx_dir;
  const TableSetupResult setup = EnsureFashionMnistTables(table_setup, *sync);
  if (chief && !setup.imported.empty()) {
    std::printf("Imported Fashion-MNIST (%s) from %s into the Delta tables %s/{train,test} in %.2f s\n",
                setup.imported.size() == 2 ? "train, test" : setup.imported[0].c_str(), options.idx_dir.c_str(),
                options.table.c_str(), setup.seconds);
  }
  FashionMnistSourceOptions source_options;
  source_options.table = options.table;
  source_options.rank = ctx.rank();
  const FashionMnistSources sources = OpenFashionMnistSources(source_options);
  // No rank or world size in the loader options: the Trainer gives each rank its share of the table.
  FashionMnistLoaderSettings settings;
  settings.batch_size = options.batch_size;
  settings.seed = options.seed;
  settings.shuffle = true;
  settings.mean = options.mean;
  settings.std = options.std;
  train::LoaderBatchSource train_source = data::Loader(sources.train, FashionMnistLoaderOptions(settings));
  settings.batch_size = options.eval_batch_size;
  settings.shuffle = false;
  // Validation runs on the test table (README.md says why); the final test pass is a separate loader over it.
  train::LoaderBatchSource val_source = data::Loader(sources.test, FashionMnistLoaderOptions(settings));
  train::LoaderBatchSource test_source = data::Loader(sources.test, FashionMnistLoaderOptions(settings));
  // What the Trainer does before its first batch, done here so that the line below can tell the steps per rank.
  train_source.ShardByRank(ctx.rank(), ctx.world_size());
  if (chief) {
    std::printf("fashion_mnist: %d rank(s) (launcher %s, backend %s), %d thread(s) per rank; table %s: train %llu "
                "rows, test %llu (also the validation split); %llu steps per epoch of %lld samples per rank\n",
                ctx.world_size(), dist::LauncherName(ctx.launcher()), dist::ToString(ctx.backend()), threads,
                options.table.c_str(), static_cast<unsigned long long>(sources.train->num_rows()),
                static_cast<unsigned long long>(sources.test->num_rows()),
                static_cast<unsigned long long>(train_source.loader().batches_per_epoch()),
                static_cast<long long>(options.batch_size));
    std::fflush(stdout);
  }

  // Tracking: rank 0 only (other ranks get an inert tracker and run).
  std::optional<track::Tracker> tracker;
  track::Run run;
  if (options.tracking) {
    track::TrackerOptions tracker_options;
    tracker_options.tracking_uri = options.tracking_uri;
    tracker_options.experiment_name = options.experiment;
    if (tracker_options.experiment_name.empty() && std::getenv("MLFLOW_EXPERIMENT_NAME") == nullptr) {
      tracker_options.experiment_name = "fashion-mnist";
    }
    tracker = track::Tracker::FromEnvironment(tracker_options);
    if (tracker->enabled()) {
      track::StartRunOptions start_run;
      start_run.run_name = options.run_name;
      run = tracker->StartRun(start_run);
      run.LogParams({{"lr", Num(options.lr)},
                     {"momentum", Num(options.momentum)},
                     {"batch_size", std::to_string(options.batch_size)},
                     {"max_epochs", std::to_string(options.epochs)},
                     {"world_size", std::to_string(ctx.world_size())},
                     {"seed", std::to_string(options.seed)},
                     {"strategy", train::ToString(options.strategy)},
                     {"table", options.table},
                     {"early_stopping", StrCat("monitor=val_loss min_delta=", Num(options.min_delta), " patience=",
                                               options.patience, " stopping_threshold=",
                                               options.stopping_threshold ? Num(*options.stopping_threshold)
                                                                          : std::string("None"))}});
    }
  }

  // The model: initial weights from the seed, identical on every rank.
  torch::manual_seed(options.seed);
  FashionMnistModuleOptions module_options;
  module_options.lr = options.lr;
  module_options.momentum = options.momentum;
  FashionMnistModule module(module_options);

  train::EarlyStoppingOptions stopping;
  stopping.monitor = "val_loss";
  stopping.min_delta = options.min_delta;
  stopping.patience = options.patience;
  stopping.stopping_threshold = options.stopping_threshold;
  auto early_stopping = std::make_shared<train::EarlyStopping>(stopping);
  train::ModelCheckpointOptions checkpointing;
  checkpointing.dirpath = options.checkpoint_dir;
  checkpointing.filename = "{epoch:02d}-{val_loss:.4f}";
  checkpointing.monitor = "val_loss";
  checkpointing.save_last = true;
  checkpointing.save_top_k = 1;
  auto checkpoint = std::make_shared<train::ModelCheckpoint>(checkpointing);
  train::TrainerOptions trainer_options;
  trainer_options.max_epochs = options.epochs;
  trainer_options.limit_train_batches = options.limit_train_batches;
  trainer_options.limit_val_batches = options.limit_val_batches;
  trainer_options.limit_test_batches = options.limit_test_batches;
  trainer_options.seed = options.seed;
  trainer_options.collective_timeout = init.timeout;
  trainer_options.run = run.active() ? &run : nullptr;
  trainer_options.log_every_n_steps = options.log_every_n_steps;
  trainer_options.progress_every_n_steps = options.progress_every;
  trainer_options.progress_stream = &std::cout;
  trainer_options.strategy = options.strategy;
  // fsdp: conv2 (5,020 parameters) and fc1 (16,050) are units of their own; conv1 and fc2 form the root unit.
  trainer_options.fsdp.unit_min_params = 5000;
  train::Trainer trainer(trainer_options, {early_stopping, checkpoint});

  trainer.Fit(module, train_source, &val_source, options.resume ? "last" : "");
  const double fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const train::MetricMap test = trainer.Test(module, test_source);
  const double test_loss = MetricOr(test, "test_loss", NAN);
  const double correct = MetricOr(test, "test_correct", 0);
  const double samples = MetricOr(test, "test_samples", 0);
  const double accuracy = samples > 0 ? correct / samples : NAN;

  std::string where;
  if (run.active()) {
    run.LogMetrics({{"test_loss", test_loss}, {"test_acc", accuracy}}, trainer.global_step());
    for (const std::string& path : {checkpoint->best_model_path(), checkpoint->last_model_path()}) {
      if (!path.empty()) run.LogArtifact(path, "checkpoints");
    }
    if (options.log_model) track::LogModel(*tracker, run, *module.net());  // returns once stored
    where = StrCat(tracker->store().uri(), ", experiment ", run.experiment_id(), ", run ", run.run_id(), " (",
                   run.run_name(), ")");
    run.End(track::RunStatus::kFinished);
  }
  if (chief) {
    const int64_t epochs_done = trainer.current_epoch() + 1;
    if (early_stopping->stopping_reason() != train::StoppingReason::kNotStopped) {
      std::printf("Stopped early after epoch %lld: %s\n", static_cast<long long>(epochs_done),
                  early_stopping->stopping_reason_message().c_str());
    }
    std::printf("Trained on %s in %.2f s\n", module.device().str().c_str(), fit_seconds);
    std::printf("Test set: Average loss: %.4f, Accuracy: %.0f/%.0f (%.2f%%)\n", test_loss, correct, samples,
                100.0 * accuracy);
    std::printf("Checkpoints: best %s, last %s\n", checkpoint->best_model_path().c_str(),
                checkpoint->last_model_path().c_str());
    if (!where.empty()) std::printf("Tracked: %s\n", where.c_str());
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("RESULT {\"impl\":\"lakerun-trainer\",\"world_size\":%d,\"threads\":%d,\"lr\":%s,\"batch_size\":%lld,"
                "\"epochs_completed\":%lld,\"global_step\":%lld,\"test_loss\":%s,\"test_accuracy\":%s,"
                "\"fit_s\":%s,\"total_s\":%s,\"device\":\"%s\"}\n",
                ctx.world_size(), threads, Num(options.lr).c_str(), static_cast<long long>(options.batch_size),
                static_cast<long long>(epochs_done), static_cast<long long>(trainer.global_step()),
                Num(test_loss).c_str(), Num(accuracy).c_str(), Num(fit_seconds).c_str(), Num(total).c_str(),
                module.device().str().c_str());
    std::fflush(stdout);
  }
  dist::Shutdown();
  return 0;
}

}  // namespace
}  // namespace lakerun::examples

int main(int argc, char** argv) {
  return lakerun::RunMain(argc, argv, lakerun::examples::Run);  // an error: a message and exit code 1
}
