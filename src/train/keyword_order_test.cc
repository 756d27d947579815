// Options written as a Lightning user writes them: the keywords of Lightning's (and PyTorch's) signatures, in their
// order, as C++20 designated initializers. This file is compiled as C++20 (CMakeLists.txt): if a field moves out of
// Lightning's order, it stops compiling.
#include <gtest/gtest.h>

#include <chrono>

#include "lakerun/train/early_stopping.h"
#include "lakerun/train/logged_metrics.h"
#include "lakerun/train/lr_monitor.h"
#include "lakerun/train/lr_schedulers.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"

namespace lakerun::train {
namespace {

TEST(KeywordOrderTest, TrainerOptionsFollowLightningsTrainerSignature) {
  // Trainer(accelerator="cpu", precision="bf16-mixed", logger=..., fast_dev_run=0, max_epochs=10, min_epochs=1,
  //         max_steps=-1, min_steps=5, max_time=..., limit_train_batches=..., limit_val_batches=...,
  //         limit_test_batches=..., val_check_interval=0.5, check_val_every_n_epoch=1, num_sanity_val_steps=0,
  //         log_every_n_steps=10, accumulate_grad_batches=2, gradient_clip_val=1.0,
  //         gradient_clip_algorithm="value", deterministic=True, use_distributed_sampler=True,
  //         default_root_dir="runs")
  const TrainerOptions o{.accelerator = Accelerator::kCpu,
                         .precision = Precision::kBf16Mixed,
                         .run = nullptr,
                         .fast_dev_run = 0,
                         .max_epochs = 10,
                         .min_epochs = 1,
                         .max_steps = -1,
                         .min_steps = 5,
                         .max_time = std::chrono::minutes(30),
                         .limit_train_batches = 100,
                         .limit_val_batches = 10,
                         .limit_test_batches = 10,
                         .val_check_interval = 0.5,
                         .check_val_every_n_epoch = 1,
                         .num_sanity_val_steps = 0,
                         .log_every_n_steps = 10,
                         .accumulate_grad_batches = 2,
                         .gradient_clip_val = 1.0,
                         .gradient_clip_algorithm = GradientClipAlgorithm::kValue,
                         .deterministic = true,
                         .use_distributed_sampler = true,
                         .default_root_dir = "runs"};
  EXPECT_EQ(o.max_epochs, 10);
  EXPECT_EQ(o.gradient_clip_algorithm, GradientClipAlgorithm::kValue);
}

TEST(KeywordOrderTest, CallbackOptionsFollowLightningsCallbacks) {
  // EarlyStopping(monitor, min_delta, patience, verbose, mode, strict, check_finite, stopping_threshold,
  //               divergence_threshold, check_on_train_epoch_end)
  const EarlyStopping stop({.monitor = "val_loss", .min_delta = 0.01, .patience = 10, .verbose = false,
                            .mode = MonitorMode::kMin, .strict = true, .check_finite = true,
                            .stopping_threshold = 0.55, .divergence_threshold = 5.0,
                            .check_on_train_epoch_end = true});
  EXPECT_EQ(stop.monitor(), "val_loss");
  // ModelCheckpoint(dirpath, filename, monitor, verbose, save_last, save_top_k, mode, auto_insert_metric_name,
  //                 every_n_train_steps, every_n_epochs, save_on_train_epoch_end, enable_version_counter)
  const ModelCheckpoint checkpoint({.dirpath = "ckpt", .filename = "{epoch}-{val_loss:.2f}", .monitor = "val_loss",
                                    .verbose = false, .save_last = true, .save_top_k = 3, .mode = MonitorMode::kMin,
                                    .auto_insert_metric_name = true, .every_n_train_steps = std::nullopt,
                                    .every_n_epochs = 1, .save_on_train_epoch_end = std::nullopt,
                                    .enable_version_counter = true});
  EXPECT_EQ(checkpoint.mode(), MonitorMode::kMin);
  // LearningRateMonitor(logging_interval, log_momentum, log_weight_decay)
  const LearningRateMonitor lr({.logging_interval = Interval::kStep, .log_momentum = true, .log_weight_decay = false});
  EXPECT_EQ(lr.state_key(), "LearningRateMonitor");
  // self.log(name, value, prog_bar, logger, on_step, on_epoch, reduce_fx, sync_dist, batch_size)
  const LogOptions log{.prog_bar = true, .logger = true, .on_step = false, .on_epoch = true,
                       .reduce_fx = ReduceFx::kMean, .sync_dist = true, .batch_size = 32};
  EXPECT_TRUE(log.sync_dist);
}

TEST(KeywordOrderTest, SchedulerOptionsFollowPyTorchAndLightning) {
  // ReduceLROnPlateau(optimizer, mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps)
  const ReduceLROnPlateauOptions plateau{.mode = MonitorMode::kMax, .factor = 0.5, .patience = 2, .threshold = 1e-3,
                                         .threshold_mode = ThresholdMode::kAbs, .cooldown = 1, .min_lr = 1e-5,
                                         .eps = 1e-8};
  // OneCycleLR(optimizer, max_lr, total_steps, epochs, steps_per_epoch, pct_start, anneal_strategy, ...)
  const OneCycleLROptions one_cycle{.max_lr = 0.1, .total_steps = 100, .epochs = 0, .steps_per_epoch = 0,
                                    .pct_start = 0.3, .anneal_strategy = AnnealStrategy::kLinear};
  // Lightning's scheduler dict: {"scheduler", "interval", "frequency", "monitor", "strict", "name"}
  const LRSchedulerConfig config{.scheduler = nullptr, .interval = Interval::kStep, .frequency = 1,
                                 .monitor = "val_loss", .strict = true, .name = "lr"};
  EXPECT_EQ(plateau.threshold_mode, ThresholdMode::kAbs);
  EXPECT_EQ(one_cycle.anneal_strategy, AnnealStrategy::kLinear);
  EXPECT_EQ(config.interval, Interval::kStep);
}

}  // namespace
}  // namespace lakerun::train
