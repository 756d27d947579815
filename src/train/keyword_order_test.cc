// Options written as a Lightning user writes them: the keywords of Lightning's (and PyTorch's) signatures, in their
// order, in the C++17 form of docs/trainer.md (a named variable, fields assigned). The structs must also declare their
// fields in that order, so that C++20 designated initializers written in it compile. The order is checked in C++17:
// a structured binding names a struct's members in declaration order, so each name below must bind the member of
// that name (a swap of members of different types does not compile, of the same type fails the test). A structured
// binding names every member, so a field added to one of these structs is added here too.
#include <gtest/gtest.h>

#include <chrono>
#include <type_traits>

#include "lakerun/train/early_stopping.h"
#include "lakerun/train/logged_metrics.h"
#include "lakerun/train/lr_monitor.h"
#include "lakerun/train/lr_schedulers.h"
#include "lakerun/train/model_checkpoint.h"
#include "lakerun/train/trainer.h"

// `field` is both a structured binding of `options` and a member of it: the two must be the same object.
#define EXPECT_DECLARED_IN_ORDER(options, field) \
  EXPECT_EQ(&field, &(options).field) << #field " is not declared in keyword order"

namespace lakerun::train {
namespace {

// Designated initializers need aggregates.
static_assert(std::is_aggregate_v<TrainerOptions>);
static_assert(std::is_aggregate_v<EarlyStoppingOptions>);
static_assert(std::is_aggregate_v<ModelCheckpointOptions>);
static_assert(std::is_aggregate_v<LearningRateMonitorOptions>);
static_assert(std::is_aggregate_v<LogOptions>);
static_assert(std::is_aggregate_v<ReduceLROnPlateauOptions>);
static_assert(std::is_aggregate_v<OneCycleLROptions>);
static_assert(std::is_aggregate_v<LRSchedulerConfig>);

TEST(KeywordOrderTest, TrainerOptionsFollowLightningsTrainerSignature) {
  // Trainer(accelerator="cpu", strategy="deepspeed_stage_2", precision="bf16-mixed", logger=..., fast_dev_run=0,
  //         max_epochs=10, min_epochs=1, max_steps=-1, min_steps=5, max_time=..., limit_train_batches=...,
  //         limit_val_batches=..., limit_test_batches=..., val_check_interval=0.5, check_val_every_n_epoch=1,
  //         num_sanity_val_steps=0, log_every_n_steps=10, accumulate_grad_batches=2, gradient_clip_val=1.0,
  //         gradient_clip_algorithm="value", deterministic=True, use_distributed_sampler=True,
  //         default_root_dir="runs")
  TrainerOptions o;
  o.accelerator = Accelerator::kCpu;
  o.strategy = Strategy::kZero2;
  o.precision = Precision::kBf16Mixed;
  o.run = nullptr;
  o.fast_dev_run = 0;
  o.max_epochs = 10;
  o.min_epochs = 1;
  o.max_steps = -1;
  o.min_steps = 5;
  o.max_time = std::chrono::minutes(30);
  o.limit_train_batches = 100;
  o.limit_val_batches = 10;
  o.limit_test_batches = 10;
  o.val_check_interval = 0.5;
  o.check_val_every_n_epoch = 1;
  o.num_sanity_val_steps = 0;
  o.log_every_n_steps = 10;
  o.accumulate_grad_batches = 2;
  o.gradient_clip_val = 1.0;
  o.gradient_clip_algorithm = GradientClipAlgorithm::kValue;
  o.deterministic = true;
  o.use_distributed_sampler = true;
  o.default_root_dir = "runs";
  EXPECT_EQ(o.max_epochs, 10);
  EXPECT_EQ(o.gradient_clip_algorithm, GradientClipAlgorithm::kValue);

  // Lightning's keywords, then lakerun's own (seed onwards).
  auto& [accelerator, strategy, precision, run, fast_dev_run, max_epochs, min_epochs, max_steps, min_steps, max_time,
         limit_train_batches, limit_val_batches, limit_test_batches, val_check_interval, check_val_every_n_epoch,
         num_sanity_val_steps, log_every_n_steps, accumulate_grad_batches, gradient_clip_val, gradient_clip_algorithm,
         deterministic, use_distributed_sampler, default_root_dir, seed, distributed, dist_context, collective_timeout,
         scale_lr, progress_every_n_steps, progress_style, progress_stream, log_model_artifact_path, tracker, fsdp] = o;
  EXPECT_DECLARED_IN_ORDER(o, accelerator);
  EXPECT_DECLARED_IN_ORDER(o, strategy);
  EXPECT_DECLARED_IN_ORDER(o, precision);
  EXPECT_DECLARED_IN_ORDER(o, run);
  EXPECT_DECLARED_IN_ORDER(o, fast_dev_run);
  EXPECT_DECLARED_IN_ORDER(o, max_epochs);
  EXPECT_DECLARED_IN_ORDER(o, min_epochs);
  EXPECT_DECLARED_IN_ORDER(o, max_steps);
  EXPECT_DECLARED_IN_ORDER(o, min_steps);
  EXPECT_DECLARED_IN_ORDER(o, max_time);
  EXPECT_DECLARED_IN_ORDER(o, limit_train_batches);
  EXPECT_DECLARED_IN_ORDER(o, limit_val_batches);
  EXPECT_DECLARED_IN_ORDER(o, limit_test_batches);
  EXPECT_DECLARED_IN_ORDER(o, val_check_interval);
  EXPECT_DECLARED_IN_ORDER(o, check_val_every_n_epoch);
  EXPECT_DECLARED_IN_ORDER(o, num_sanity_val_steps);
  EXPECT_DECLARED_IN_ORDER(o, log_every_n_steps);
  EXPECT_DECLARED_IN_ORDER(o, accumulate_grad_batches);
  EXPECT_DECLARED_IN_ORDER(o, gradient_clip_val);
  EXPECT_DECLARED_IN_ORDER(o, gradient_clip_algorithm);
  EXPECT_DECLARED_IN_ORDER(o, deterministic);
  EXPECT_DECLARED_IN_ORDER(o, use_distributed_sampler);
  EXPECT_DECLARED_IN_ORDER(o, default_root_dir);
  EXPECT_DECLARED_IN_ORDER(o, seed);
  EXPECT_DECLARED_IN_ORDER(o, distributed);
  EXPECT_DECLARED_IN_ORDER(o, dist_context);
  EXPECT_DECLARED_IN_ORDER(o, collective_timeout);
  EXPECT_DECLARED_IN_ORDER(o, scale_lr);
  EXPECT_DECLARED_IN_ORDER(o, progress_every_n_steps);
  EXPECT_DECLARED_IN_ORDER(o, progress_style);
  EXPECT_DECLARED_IN_ORDER(o, progress_stream);
  EXPECT_DECLARED_IN_ORDER(o, log_model_artifact_path);
  EXPECT_DECLARED_IN_ORDER(o, tracker);
}

TEST(KeywordOrderTest, EarlyStoppingOptionsFollowLightningsEarlyStopping) {
  // EarlyStopping(monitor, min_delta, patience, verbose, mode, strict, check_finite, stopping_threshold,
  //               divergence_threshold, check_on_train_epoch_end)
  EarlyStoppingOptions o;
  o.monitor = "val_loss";
  o.min_delta = 0.01;
  o.patience = 10;
  o.verbose = false;
  o.mode = MonitorMode::kMin;
  o.strict = true;
  o.check_finite = true;
  o.stopping_threshold = 0.55;
  o.divergence_threshold = 5.0;
  o.check_on_train_epoch_end = true;
  const EarlyStopping stop(o);
  EXPECT_EQ(stop.monitor(), "val_loss");

  auto& [monitor, min_delta, patience, verbose, mode, strict, check_finite, stopping_threshold, divergence_threshold,
         check_on_train_epoch_end] = o;
  EXPECT_DECLARED_IN_ORDER(o, monitor);
  EXPECT_DECLARED_IN_ORDER(o, min_delta);
  EXPECT_DECLARED_IN_ORDER(o, patience);
  EXPECT_DECLARED_IN_ORDER(o, verbose);
  EXPECT_DECLARED_IN_ORDER(o, mode);
  EXPECT_DECLARED_IN_ORDER(o, strict);
  EXPECT_DECLARED_IN_ORDER(o, check_finite);
  EXPECT_DECLARED_IN_ORDER(o, stopping_threshold);
  EXPECT_DECLARED_IN_ORDER(o, divergence_threshold);
  EXPECT_DECLARED_IN_ORDER(o, check_on_train_epoch_end);
}

TEST(KeywordOrderTest, ModelCheckpointOptionsFollowLightningsModelCheckpoint) {
  // ModelCheckpoint(dirpath, filename, monitor, verbose, save_last, save_top_k, mode, auto_insert_metric_name,
  //                 every_n_train_steps, every_n_epochs, save_on_train_epoch_end, enable_version_counter)
  ModelCheckpointOptions o;
  o.dirpath = "ckpt";
  o.filename = "{epoch}-{val_loss:.2f}";
  o.monitor = "val_loss";
  o.verbose = false;
  o.save_last = true;
  o.save_top_k = 3;
  o.mode = MonitorMode::kMin;
  o.auto_insert_metric_name = true;
  o.every_n_train_steps = std::nullopt;
  o.every_n_epochs = 1;
  o.save_on_train_epoch_end = std::nullopt;
  o.enable_version_counter = true;
  const ModelCheckpoint checkpoint(o);
  EXPECT_EQ(checkpoint.mode(), MonitorMode::kMin);

  // Lightning's keywords, then lakerun's own (log_checkpoints_to_run).
  auto& [dirpath, filename, monitor, verbose, save_last, save_top_k, mode, auto_insert_metric_name,
         every_n_train_steps, every_n_epochs, save_on_train_epoch_end, enable_version_counter,
         log_checkpoints_to_run] = o;
  EXPECT_DECLARED_IN_ORDER(o, dirpath);
  EXPECT_DECLARED_IN_ORDER(o, filename);
  EXPECT_DECLARED_IN_ORDER(o, monitor);
  EXPECT_DECLARED_IN_ORDER(o, verbose);
  EXPECT_DECLARED_IN_ORDER(o, save_last);
  EXPECT_DECLARED_IN_ORDER(o, save_top_k);
  EXPECT_DECLARED_IN_ORDER(o, mode);
  EXPECT_DECLARED_IN_ORDER(o, auto_insert_metric_name);
  EXPECT_DECLARED_IN_ORDER(o, every_n_train_steps);
  EXPECT_DECLARED_IN_ORDER(o, every_n_epochs);
  EXPECT_DECLARED_IN_ORDER(o, save_on_train_epoch_end);
  EXPECT_DECLARED_IN_ORDER(o, enable_version_counter);
  EXPECT_DECLARED_IN_ORDER(o, log_checkpoints_to_run);
}

TEST(KeywordOrderTest, LearningRateMonitorAndLogOptionsFollowLightning) {
  // LearningRateMonitor(logging_interval, log_momentum, log_weight_decay)
  LearningRateMonitorOptions m;
  m.logging_interval = Interval::kStep;
  m.log_momentum = true;
  m.log_weight_decay = false;
  const LearningRateMonitor lr(m);
  EXPECT_EQ(lr.state_key(), "LearningRateMonitor");
  auto& [logging_interval, log_momentum, log_weight_decay] = m;
  EXPECT_DECLARED_IN_ORDER(m, logging_interval);
  EXPECT_DECLARED_IN_ORDER(m, log_momentum);
  EXPECT_DECLARED_IN_ORDER(m, log_weight_decay);

  // self.log(name, value, prog_bar, logger, on_step, on_epoch, reduce_fx, sync_dist, batch_size)
  LogOptions log;
  log.prog_bar = true;
  log.logger = true;
  log.on_step = false;
  log.on_epoch = true;
  log.reduce_fx = ReduceFx::kMean;
  log.sync_dist = true;
  log.batch_size = 32;
  EXPECT_TRUE(log.sync_dist);
  auto& [prog_bar, logger, on_step, on_epoch, reduce_fx, sync_dist, batch_size] = log;
  EXPECT_DECLARED_IN_ORDER(log, prog_bar);
  EXPECT_DECLARED_IN_ORDER(log, logger);
  EXPECT_DECLARED_IN_ORDER(log, on_step);
  EXPECT_DECLARED_IN_ORDER(log, on_epoch);
  EXPECT_DECLARED_IN_ORDER(log, reduce_fx);
  EXPECT_DECLARED_IN_ORDER(log, sync_dist);
  EXPECT_DECLARED_IN_ORDER(log, batch_size);
}

TEST(KeywordOrderTest, ReduceLROnPlateauOptionsFollowPyTorch) {
  // ReduceLROnPlateau(optimizer, mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps)
  ReduceLROnPlateauOptions o;
  o.mode = MonitorMode::kMax;
  o.factor = 0.5;
  o.patience = 2;
  o.threshold = 1e-3;
  o.threshold_mode = ThresholdMode::kAbs;
  o.cooldown = 1;
  o.min_lr = 1e-5;
  o.eps = 1e-8;
  EXPECT_EQ(o.threshold_mode, ThresholdMode::kAbs);

  auto& [mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps] = o;
  EXPECT_DECLARED_IN_ORDER(o, mode);
  EXPECT_DECLARED_IN_ORDER(o, factor);
  EXPECT_DECLARED_IN_ORDER(o, patience);
  EXPECT_DECLARED_IN_ORDER(o, threshold);
  EXPECT_DECLARED_IN_ORDER(o, threshold_mode);
  EXPECT_DECLARED_IN_ORDER(o, cooldown);
  EXPECT_DECLARED_IN_ORDER(o, min_lr);
  EXPECT_DECLARED_IN_ORDER(o, eps);
}

TEST(KeywordOrderTest, OneCycleLROptionsFollowPyTorch) {
  // OneCycleLR(optimizer, max_lr, total_steps, epochs, steps_per_epoch, pct_start, anneal_strategy, cycle_momentum,
  //            base_momentum, max_momentum, div_factor, final_div_factor, three_phase)
  OneCycleLROptions o;
  o.max_lr = 0.1;
  o.total_steps = 100;
  o.epochs = 0;
  o.steps_per_epoch = 0;
  o.pct_start = 0.3;
  o.anneal_strategy = AnnealStrategy::kLinear;
  EXPECT_EQ(o.anneal_strategy, AnnealStrategy::kLinear);

  auto& [max_lr, total_steps, epochs, steps_per_epoch, pct_start, anneal_strategy, cycle_momentum, base_momentum,
         max_momentum, div_factor, final_div_factor, three_phase] = o;
  EXPECT_DECLARED_IN_ORDER(o, max_lr);
  EXPECT_DECLARED_IN_ORDER(o, total_steps);
  EXPECT_DECLARED_IN_ORDER(o, epochs);
  EXPECT_DECLARED_IN_ORDER(o, steps_per_epoch);
  EXPECT_DECLARED_IN_ORDER(o, pct_start);
  EXPECT_DECLARED_IN_ORDER(o, anneal_strategy);
  EXPECT_DECLARED_IN_ORDER(o, cycle_momentum);
  EXPECT_DECLARED_IN_ORDER(o, base_momentum);
  EXPECT_DECLARED_IN_ORDER(o, max_momentum);
  EXPECT_DECLARED_IN_ORDER(o, div_factor);
  EXPECT_DECLARED_IN_ORDER(o, final_div_factor);
  EXPECT_DECLARED_IN_ORDER(o, three_phase);
}

TEST(KeywordOrderTest, LRSchedulerConfigFollowsLightningsSchedulerDict) {
  // Lightning's scheduler dict: {"scheduler", "interval", "frequency", "monitor", "strict", "name"}
  LRSchedulerConfig config;
  config.scheduler = nullptr;
  config.interval = Interval::kStep;
  config.frequency = 1;
  config.monitor = "val_loss";
  config.strict = true;
  config.name = "lr";
  EXPECT_EQ(config.interval, Interval::kStep);

  auto& [scheduler, interval, frequency, monitor, strict, name] = config;
  EXPECT_DECLARED_IN_ORDER(config, scheduler);
  EXPECT_DECLARED_IN_ORDER(config, interval);
  EXPECT_DECLARED_IN_ORDER(config, frequency);
  EXPECT_DECLARED_IN_ORDER(config, monitor);
  EXPECT_DECLARED_IN_ORDER(config, strict);
  EXPECT_DECLARED_IN_ORDER(config, name);
}

}  // namespace
}  // namespace lakerun::train
