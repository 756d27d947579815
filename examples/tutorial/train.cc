// tutorial_train: the program docs/tutorial.md builds step by step. A classifier of the rows of a CSV file imported
// into a Delta table, trained by lakerun::train::Trainer on one process or on N ranks, unchanged.
//
//   tutorial_train --table data/tutorial                     # one process
//   lakerun launch -n 2 -- tutorial_train --table data/tutorial --name two-ranks
//   tutorial_train --table data/tutorial --max-epochs 20 --resume   # continue from runs/tutorial/checkpoints
//
// Rank 0 logs the run to MLflow (MLFLOW_TRACKING_URI, else ./mlruns, experiment "tutorial"); checkpoints go to
// runs/<name>/checkpoints. --help lists the flags.
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <lakerun/base/error.h>
#include <lakerun/base/file_system.h>
#include <lakerun/base/run_main.h>
#include <lakerun/data/loader.h>
#include <lakerun/data/table_source.h>
#include <lakerun/dist/init.h>
#include <lakerun/format/import/import.h>
#include <lakerun/track/tracker.h>
#include <lakerun/train/data_module.h>
#include <lakerun/train/early_stopping.h>
#include <lakerun/train/model_checkpoint.h>
#include <lakerun/train/trainer.h>

namespace {

const std::vector<std::string> kFeatures = {"f0", "f1", "f2", "f3"};
constexpr int64_t kClasses = 3;

// --- The data -----------------------------------------------------------------------------------------------------

// Runs on the loader's decoding threads, batch by batch: the four feature columns (float64 [B] each, the type the
// CSV importer gave them) become one float32 tensor "features" [B, 4].
void StackFeatures(lakerun::data::Batch& batch) {
  std::vector<at::Tensor> columns;
  for (const std::string& name : kFeatures) {
    columns.push_back(batch.tensors.at(name));
    batch.tensors.erase(name);
  }
  batch.tensors["features"] = torch::stack(columns, 1).to(torch::kFloat32);
}

// The table's rows with split = 'train' feed training, those with split = 'val' validation.
class CsvTable : public lakerun::train::DataModule {
 public:
  CsvTable(std::string table, std::string csv, int64_t batch_size)
      : table_(std::move(table)), csv_(std::move(csv)), batch_size_(batch_size) {}

  // Rank 0 only, while the other ranks wait: import the CSV file when the table does not exist yet.
  void PrepareData() override {
    if (csv_.empty() || lakerun::LocalFileSystem().Exists(table_)) return;
    lakerun::importer::ImportResult imported = lakerun::importer::ImportCsv(csv_, table_, {});
    std::printf("imported %s into %s: %lld rows\n", csv_.c_str(), table_.c_str(),
                static_cast<long long>(imported.rows));
  }

  // Every rank: one loader per split. No rank or world size in the options: under N ranks the Trainer gives each
  // rank its own 1/N of the rows.
  void Setup(lakerun::train::TrainerFn stage) override {
    train_ = lakerun::data::Loader(Open("train"), Options(/*shuffle=*/true));
    val_ = lakerun::data::Loader(Open("val"), Options(/*shuffle=*/false));
  }
  lakerun::train::BatchSource* TrainSource() override { return &train_; }
  lakerun::train::BatchSource* ValSource() override { return &val_; }

 private:
  std::shared_ptr<lakerun::data::RowSource> Open(const std::string& split) const {
    lakerun::data::TableOptions options;
    options.columns = kFeatures;
    options.columns.push_back("label");
    options.filter = lakerun::data::Filter::Parse("split = '" + split + "'");
    return lakerun::data::OpenTable(table_, options);
  }

  lakerun::data::LoaderOptions Options(bool shuffle) const {
    lakerun::data::LoaderOptions options;
    options.batch_size = batch_size_;
    options.shuffle.enabled = shuffle;  // a new order every epoch, from (seed, epoch)
    options.num_threads = 1;
    options.transforms.push_back(StackFeatures);
    return options;
  }

  std::string table_;
  std::string csv_;
  int64_t batch_size_;
  lakerun::train::LoaderBatchSource train_, val_;
};

// --- The model ----------------------------------------------------------------------------------------------------

// A small MLP from the features to one score per class: what the Trainer runs for each batch, and what it logs.
class Classifier : public lakerun::train::Module {
 public:
  explicit Classifier(double lr) : lr_(lr) {
    hidden_ = register_module("hidden", torch::nn::Linear(static_cast<int64_t>(kFeatures.size()), 16));
    output_ = register_module("output", torch::nn::Linear(16, kClasses));
  }

  at::Tensor TrainingStep(const lakerun::train::Batch& batch, int64_t batch_idx) override {
    at::Tensor loss = torch::nn::functional::cross_entropy(Forward(batch), batch.at("label"));
    lakerun::train::LogOptions shown;
    shown.prog_bar = true;
    Log("train_loss", loss, shown);
    return loss;
  }

  // Each rank validates its share of the rows; sync_dist averages the values over the ranks, so every rank (and
  // the run, the checkpoint names, early stopping) sees the figure of the whole split.
  void ValidationStep(const lakerun::train::Batch& batch, int64_t batch_idx) override {
    const at::Tensor scores = Forward(batch);
    const at::Tensor& labels = batch.at("label");
    lakerun::train::LogOptions synced;
    synced.sync_dist = true;
    synced.prog_bar = true;
    Log("val_loss", torch::nn::functional::cross_entropy(scores, labels), synced);
    Log("val_acc", scores.argmax(1).eq(labels).to(torch::kFloat32).mean(), synced);
  }

  lakerun::train::Optimizers ConfigureOptimizers() override {
    return {std::make_shared<torch::optim::SGD>(parameters(), torch::optim::SGDOptions(lr_).momentum(0.9))};
  }

  // Logged as the run's params when a fit starts.
  std::map<std::string, std::string> Hyperparameters() const override {
    return {{"lr", lakerun::StrCat(lr_)}, {"hidden_units", "16"}};
  }

 private:
  at::Tensor Forward(const lakerun::train::Batch& batch) {
    return output_(torch::relu(hidden_(batch.at("features"))));
  }

  double lr_;
  torch::nn::Linear hidden_{nullptr};
  torch::nn::Linear output_{nullptr};
};

// --- The program --------------------------------------------------------------------------------------------------

struct Flags {
  std::string table = "data/tutorial";
  std::string csv;
  std::string name = "tutorial";
  int64_t max_epochs = 10;
  int64_t batch_size = 32;
  double lr = 0.05;
  int64_t patience = 0;
  bool resume = false;
  bool help = false;
};

constexpr const char* kUsage =
    "usage: tutorial_train [flags]\n"
    "  --table DIR       the Delta table to train on (default data/tutorial)\n"
    "  --csv FILE        import FILE into --table first when the table does not exist\n"
    "  --name NAME       the run's name; checkpoints go to runs/NAME/checkpoints (default tutorial)\n"
    "  --max-epochs N    train until N epochs are done (default 10)\n"
    "  --batch-size N    rows per batch on each rank (default 32)\n"
    "  --lr X            SGD learning rate (default 0.05)\n"
    "  --patience N      stop early once val_loss has not improved for N epochs (default: never)\n"
    "  --resume          continue from the newest checkpoint of runs/NAME/checkpoints\n";

// The value of a flag that takes a positive number; a ConfigError naming the flag otherwise.
double PositiveNumber(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  LAKERUN_CHECK_AS(ConfigError, !text.empty() && *end == '\0' && value > 0, flag,
                   ": expected a positive number, got '", text, "'");
  return value;
}

int64_t PositiveInteger(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  LAKERUN_CHECK_AS(ConfigError, !text.empty() && *end == '\0' && value > 0, flag,
                   ": expected a positive integer, got '", text, "'");
  return value;
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--resume") {
      flags.resume = true;
      continue;
    }
    if (flag == "--help") {
      flags.help = true;
      continue;
    }
    LAKERUN_CHECK_AS(ConfigError, i + 1 < argc, flag, " needs a value (--help lists the flags)");
    const std::string value = argv[++i];
    if (flag == "--table") {
      flags.table = value;
    } else if (flag == "--csv") {
      flags.csv = value;
    } else if (flag == "--name") {
      flags.name = value;
    } else if (flag == "--max-epochs") {
      flags.max_epochs = PositiveInteger(flag, value);
    } else if (flag == "--batch-size") {
      flags.batch_size = PositiveInteger(flag, value);
    } else if (flag == "--lr") {
      flags.lr = PositiveNumber(flag, value);
    } else if (flag == "--patience") {
      flags.patience = PositiveInteger(flag, value);
    } else {
      LAKERUN_THROW(ConfigError, "unknown flag ", flag, " (--help lists the flags)");
    }
  }
  return flags;
}

int Train(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  if (flags.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }

  // Join the job: this process alone, or one rank of `lakerun launch`, torchrun, srun or mpirun. The Trainer would
  // join when the fit starts; joining first tells the program its rank.
  lakerun::dist::Context& job = lakerun::dist::Init();

  // Tracking, from rank 0: to MLFLOW_TRACKING_URI, else ./mlruns. MLFLOW_RUN_ID continues an existing run instead
  // of starting one. On the other ranks the run is never started and takes every call without doing anything.
  lakerun::track::TrackerOptions tracking;
  tracking.experiment_name = "tutorial";
  lakerun::track::Tracker tracker = lakerun::track::Tracker::FromEnvironment(tracking);
  lakerun::track::StartRunOptions start;
  start.run_name = flags.name;
  lakerun::track::Run run;
  if (job.rank() == 0) run = tracker.StartRun(start);

  torch::manual_seed(0);  // the initial weights (under N ranks, DDP copies rank 0's to the others)
  Classifier model(flags.lr);
  CsvTable data(flags.table, flags.csv, flags.batch_size);

  // runs/NAME/checkpoints: the best epoch by val_loss, and last.ckpt after every epoch.
  lakerun::train::ModelCheckpointOptions checkpoints;
  checkpoints.monitor = "val_loss";
  checkpoints.filename = "{epoch:02d}-{val_loss:.3f}";
  checkpoints.save_last = true;
  auto checkpoint = std::make_shared<lakerun::train::ModelCheckpoint>(checkpoints);
  std::vector<std::shared_ptr<lakerun::train::Callback>> callbacks = {checkpoint};

  // --patience N: stop once val_loss has not improved by more than 0.001 at N validations in a row.
  std::shared_ptr<lakerun::train::EarlyStopping> early_stopping;
  if (flags.patience > 0) {
    lakerun::train::EarlyStoppingOptions stopping;
    stopping.monitor = "val_loss";
    stopping.min_delta = 0.001;
    stopping.patience = flags.patience;
    early_stopping = std::make_shared<lakerun::train::EarlyStopping>(stopping);
    callbacks.push_back(early_stopping);
  }

  lakerun::train::TrainerOptions options;
  options.max_epochs = flags.max_epochs;
  options.default_root_dir = "runs/" + flags.name;
  options.run = &run;
  options.log_every_n_steps = 10;
  options.tracker = &tracker;  // with log_model_artifact_path: the trained model is logged
  options.log_model_artifact_path = "model";
  lakerun::train::Trainer trainer(options, callbacks);
  trainer.Fit(model, data, flags.resume ? "last" : "");

  if (job.rank() == 0) {
    std::printf("%d rank(s): %lld epochs, %lld steps", job.world_size(),
                static_cast<long long>(trainer.current_epoch() + 1), static_cast<long long>(trainer.global_step()));
    for (const char* key : {"val_loss", "val_acc"}) {
      auto metric = trainer.callback_metrics().find(key);  // absent when the fit had no epoch left to train
      if (metric != trainer.callback_metrics().end()) std::printf("; %s %.4f", key, metric->second);
    }
    std::printf("\n");
    if (!trainer.state().ckpt_path.empty()) std::printf("resumed from %s\n", trainer.state().ckpt_path.c_str());
    if (early_stopping && early_stopping->stopping_reason() != lakerun::train::StoppingReason::kNotStopped) {
      std::printf("stopped early: %s\n", early_stopping->stopping_reason_message().c_str());
    }
    std::printf("checkpoints: best %s, last %s\n", checkpoint->best_model_path().c_str(),
                checkpoint->last_model_path().c_str());
    std::printf("tracked: %s, run %s (%s)\n", tracker.store().uri().c_str(), run.run_id().c_str(),
                run.run_name().c_str());
  }
  lakerun::dist::Shutdown();  // leave the job: the process group goes before the program ends
  return 0;
}

}  // namespace

// An error escaping Train prints "tutorial_train: error: ..." and exits 1.
int main(int argc, char** argv) { return lakerun::RunMain(argc, argv, Train); }
