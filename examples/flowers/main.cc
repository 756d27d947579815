// flowers: an image classifier trained from JPEG bytes in a Delta table (README.md).
//
// Every rank runs this same program: rank 0 builds the table when it is missing while the others wait at a
// barrier; each rank then reads its shard of every split through its own lakerun::data::Loader, and the Trainer
// averages gradients over the ranks.
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/base/run_main.h"
#include "lakerun/base/file_system.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/dist/collectives.h"
#include "lakerun/dist/init.h"
#include "lakerun/track/torch_model.h"
#include "lakerun/track/tracker.h"
#include "lakerun/train/early_stopping.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"
#include "model.h"
#include "options.h"
#include "table_builder.h"
#include "throughput.h"

namespace lakerun::examples::flowers {
namespace {

// Rank 0 builds (or rebuilds) the table when needed; every rank then reads its metadata.
TableInfo PrepareTable(const FlowersOptions& o, dist::Context& ctx) {
  TableBuildOptions build;
  build.images_dir = o.images_dir;
  build.fashion_mnist_dir = o.fashion_mnist_dir;
  build.limit = o.table_limit;
  build.seed = o.seed;
  build.progress = &std::cout;
  if (ctx.rank() == 0) {
    FileSystem& fs = LocalFileSystem();
    if (o.rebuild && fs.Exists(o.table)) {
      std::cout << "[flowers] --rebuild: removing " << o.table << std::endl;
      fs.RemoveAll(o.table);
    }
    std::optional<TableInfo> existing = ReadTableInfo(o.table);
    if (!existing) {
      LAKERUN_CHECK(!fs.Exists(o.table), "--table ", o.table, " exists but is not a Delta table");
      std::cout << "[flowers] building " << o.table << " from " << SourceName(build) << std::endl;
      const auto start = std::chrono::steady_clock::now();
      const TableInfo built = BuildTable(o.table, build);
      std::cout << "[flowers] built " << o.table << ": " << built.train_rows << " train, " << built.val_rows
                << " val, " << built.test_rows << " test images in "
                << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s"
                << std::endl;
    } else {
      const bool source_given = !o.images_dir.empty();
      LAKERUN_CHECK(!source_given || existing->source == SourceName(build), "--table ", o.table,
                    " was built from ", existing->source, ", not ", SourceName(build),
                    "; pass --rebuild or another --table");
    }
  }
  if (ctx.world_size() > 1) dist::Barrier(ctx);  // the others wait here while rank 0 builds
  std::optional<TableInfo> info = ReadTableInfo(o.table);
  LAKERUN_CHECK(info.has_value(), "rank ", ctx.rank(), ": table ", o.table,
                " is missing after rank 0 prepared it (is the path on a file system every rank sees?)");
  return *info;
}

data::Loader MakeLoader(const FlowersOptions& o, const TableInfo& table, const std::string& split, int channels,
                        dist::Context& ctx) {
  data::TableOptions t;
  t.columns = {"image", "label"};
  t.filter = data::Filter::Compare("split", format::FilterOp::kEq, parquet::Value::String(split));
  t.rank = ctx.rank();
  data::ImageOptions image;
  image.channels = channels;
  image.resize = o.resize;
  image.crop_height = image.crop_width = o.crop;
  image.to_float = true;
  const bool train = split == "train";
  image.random_crop = train;
  image.flip_probability = train ? 0.5f : 0.0f;
  if (channels == 1) {
    image.mean = {0.2860f};  // Fashion-MNIST
    image.std = {0.3530f};
  } else {
    image.mean = {0.485f, 0.456f, 0.406f};  // ImageNet, the usual choice for photos
    image.std = {0.229f, 0.224f, 0.225f};
  }
  data::LoaderOptions l;
  l.batch_size = o.batch_size;
  l.rank = ctx.rank();
  l.world_size = ctx.world_size();
  l.seed = o.seed;
  l.shuffle.enabled = train;
  l.num_threads = static_cast<size_t>(o.loader_threads);
  l.images["image"] = image;
  return data::Loader(data::OpenTable(table.path, t), l);
}

int Run(const FlowersOptions& o) {
  const auto wall_start = std::chrono::steady_clock::now();
  dist::InitOptions init;
  init.timeout = std::chrono::seconds(o.dist_timeout_s);
  dist::Context& ctx = dist::Init(init);
  const bool rank0 = ctx.rank() == 0;
  const int threads = o.torch_threads > 0
                          ? static_cast<int>(o.torch_threads)
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                            std::max(1, ctx.local_world_size()));
  at::set_num_threads(threads);

  const TableInfo table = PrepareTable(o, ctx);
  const int channels = o.channels > 0 ? o.channels : table.channels;
  train::LoaderBatchSource train_source = MakeLoader(o, table, "train", channels, ctx);
  train::LoaderBatchSource val_source = MakeLoader(o, table, "val", channels, ctx);
  train::LoaderBatchSource test_source = MakeLoader(o, table, "test", channels, ctx);
  if (rank0) {
    std::cout << "[flowers] " << table.path << " (" << table.source << "): " << table.classes.size()
              << " classes, " << table.train_rows << " train / " << table.val_rows << " val / " << table.test_rows
              << " test images; " << ctx.world_size() << " rank(s) x batch " << o.batch_size << ", "
              << train_source.loader().batches_per_epoch() << " steps per epoch, " << threads
              << " torch thread(s) per rank"
              << std::endl;
  }

  // Tracking: rank 0 only (the tracker is a no-op elsewhere).
  std::optional<track::Tracker> tracker;
  track::Run run;
  if (o.tracking) {
    track::TrackerOptions t;
    t.tracking_uri = o.tracking_uri;
    t.experiment_name = o.experiment;
    tracker.emplace(track::Tracker::FromEnvironment(t));
    if (tracker->enabled()) {
      track::StartRunOptions start;
      start.run_name = o.run_name;
      run = tracker->StartRun(start);
      run.LogParams({{"table", table.path}, {"source", table.source},
                     {"classes", std::to_string(table.classes.size())}, {"channels", std::to_string(channels)},
                     {"resize", std::to_string(o.resize)}, {"crop", std::to_string(o.crop)},
                     {"batch_size", std::to_string(o.batch_size)}, {"world_size", std::to_string(ctx.world_size())},
                     {"width", std::to_string(o.width)}, {"lr", StrCat(o.lr)},
                     {"weight_decay", StrCat(o.weight_decay)}, {"max_epochs", std::to_string(o.epochs)},
                     {"seed", std::to_string(o.seed)}, {"patience", std::to_string(o.patience)},
                     {"min_delta", StrCat(o.min_delta)}, {"stopping_threshold", StrCat(o.stop_below)}});
    }
  }

  NetOptions net_options;
  net_options.in_channels = channels;
  net_options.num_classes = static_cast<int64_t>(table.classes.size());
  net_options.width = o.width;
  net_options.lr = o.lr;
  net_options.weight_decay = o.weight_decay;
  torch::manual_seed(o.seed);
  FlowersNet net(net_options);

  train::EarlyStoppingOptions stop_options;
  stop_options.monitor = "val_loss";
  stop_options.min_delta = o.min_delta;
  stop_options.patience = o.patience;
  if (o.stop_below > 0) stop_options.stopping_threshold = o.stop_below;
  auto early_stopping = std::make_shared<train::EarlyStopping>(stop_options);
  const std::string checkpoint_dir = JoinPath(o.output_dir, "checkpoints");
  train::ModelCheckpointOptions ckpt_options;
  ckpt_options.dirpath = checkpoint_dir;
  ckpt_options.filename = "{epoch:02d}-{val_loss:.3f}";
  ckpt_options.monitor = "val_loss";
  ckpt_options.save_top_k = -1;  // keep every epoch's checkpoint
  ckpt_options.every_n_epochs = 1;
  ckpt_options.save_last = true;
  auto checkpoint = std::make_shared<train::ModelCheckpoint>(ckpt_options);
  auto throughput = std::make_shared<ThroughputMonitor>(o.batch_size * ctx.world_size(),
                                                        run.active() ? &run : nullptr, &std::cout);

  train::TrainerOptions trainer_options;
  trainer_options.limit_test_batches = o.limit_test_batches;
  trainer_options.max_epochs = o.epochs;
  trainer_options.limit_train_batches = o.limit_train_batches;
  trainer_options.limit_val_batches = o.limit_val_batches;
  trainer_options.seed = o.seed;
  trainer_options.default_root_dir = o.output_dir;
  trainer_options.run = run.active() ? &run : nullptr;
  trainer_options.log_every_n_steps = o.log_every;
  trainer_options.progress_every_n_steps = o.log_every;
  trainer_options.progress_stream = &std::cout;
  train::Trainer trainer(trainer_options, {early_stopping, checkpoint, throughput});

  const auto fit_start = std::chrono::steady_clock::now();
  trainer.Fit(net, train_source, &val_source, o.resume ? "last" : "");
  const double fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - fit_start).count();
  const train::MetricMap test = trainer.Test(net, test_source);
  const auto metric = [&](const char* key) {
    auto it = test.find(key);
    LAKERUN_CHECK(it != test.end(), "the test pass logged no ", key);
    return it->second;
  };
  const double test_acc = metric("test_acc"), test_loss = metric("test_loss");

  if (rank0) {
    const int64_t epochs = trainer.current_epoch() + 1;
    std::cout << std::fixed << std::setprecision(4) << "[flowers] stopped after " << epochs << " epoch(s), "
              << trainer.global_step() << " steps, " << std::setprecision(1) << fit_seconds << " s ("
              << (early_stopping->stopping_reason() == train::StoppingReason::kNotStopped
                      ? std::string("no early stop")
                      : "early stop: " + early_stopping->stopping_reason_message())
              << ")" << std::endl;
    std::cout << std::setprecision(4) << "Test accuracy: " << test_acc << " (loss " << test_loss << ")"
              << std::endl;
    std::cout << std::setprecision(1) << "[flowers] training throughput: " << throughput->overall_rate()
              << " images/s over " << ctx.world_size() << " rank(s)" << std::endl;
    std::cout << "[flowers] checkpoints: " << checkpoint->dirpath() << " (best: " << checkpoint->best_model_path()
              << ")" << std::endl;
  }
  if (run.active()) {
    run.LogMetrics({{"test_acc", test_acc}, {"test_loss", test_loss}, {"fit_seconds", fit_seconds},
                    {"images_per_sec_overall", throughput->overall_rate()}},
                   trainer.global_step());
    run.LogArtifact(checkpoint->dirpath(), "checkpoints");
    track::LogModel(*tracker, run, net);  // returns once the model (and everything before it) is stored
    const std::string where = StrCat(tracker->store().uri(), ", experiment ", run.experiment_id(), ", run ",
                                     run.run_id(), " (", run.run_name(), ")");
    run.End(track::RunStatus::kFinished);
    std::cout << "[flowers] MLflow run: " << where << std::endl;
  }
  if (rank0) {
    std::cout << "[flowers] wall time: " << std::setprecision(1)
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count() << " s"
              << std::endl;
  }
  return 0;
}

int Main(int argc, char** argv) {
  const FlowersOptions options = ParseFlags(argc, argv);
  if (options.help) {
    std::cout << Usage();
    return 0;
  }
  const int code = Run(options);
  dist::Shutdown();
  return code;
}

}  // namespace
}  // namespace lakerun::examples::flowers

int main(int argc, char** argv) {
  // An error escaping Main prints "flowers: error: ..." and exits 1 instead of aborting.
  return lakerun::RunMain(argc, argv, lakerun::examples::flowers::Main);
}
