#include "lakerun/train/model_checkpoint.h"

#include <cmath>
#include <limits>
#include <set>

#include "lakerun/base/error.h"
#include "lakerun/base/fault_injection.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::train {
namespace {

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> out;
  if (!LocalFileSystem().Exists(dir)) return out;
  for (const auto& f : LocalFileSystem().List(dir)) out.insert(f.name);
  return out;
}

// A fitting run that writes "epoch=E step=S" as each checkpoint's contents.
struct FitRun {
  explicit FitRun(ModelCheckpointOptions o) : ckpt(std::move(o)) {
    state.default_root_dir = dir.path();
    state.dump_checkpoint = [this] { return StrCat("epoch=", state.current_epoch, " step=", state.global_step); };
    ckpt.Setup(state);
  }
  // One epoch of `steps` optimizer steps, then the epoch-end hook with `metrics`.
  void Epoch(MetricMap metrics, int steps = 10) {
    for (int i = 0; i < steps; ++i) {
      ++state.global_step;
      ckpt.OnTrainBatchEnd(state);
    }
    state.callback_metrics = std::move(metrics);
    ckpt.OnTrainEpochEnd(state);
    ++state.current_epoch;
  }
  std::string Read(const std::string& name) { return LocalFileSystem().ReadFile(JoinPath(ckpt.dirpath(), name)); }
  testing::TempDir dir;
  TrainerState state;
  ModelCheckpoint ckpt;
};

ModelCheckpointOptions Monitored(int64_t k) {
  ModelCheckpointOptions o;
  o.monitor = "val_loss";
  o.filename = "{epoch:02d}-{val_loss:.2f}";
  o.save_top_k = k;
  return o;
}

TEST(ModelCheckpointTest, FormatsTemplatesLikeLightning) {
  ModelCheckpoint c(Monitored(1));
  EXPECT_EQ(c.FormatCheckpointName({{"val_loss", 0.3249f}}, 2, 30), "epoch=02-val_loss=0.32.ckpt");
  EXPECT_EQ(c.FormatCheckpointName({{"val_loss", 0.3249f}}, 2, 30, "", 1), "epoch=02-val_loss=0.32-v1.ckpt");
  EXPECT_EQ(c.FormatCheckpointName({}, 12, 30), "epoch=12-val_loss=0.00.ckpt");  // a missing key formats as 0

  ModelCheckpoint plain(ModelCheckpointOptions{});
  EXPECT_EQ(plain.FormatCheckpointName({}, 0, 100), "epoch=0-step=100.ckpt");
  EXPECT_EQ(plain.FormatCheckpointName({}, 0, 100, ModelCheckpoint::kNameLast), "last.ckpt");
  EXPECT_EQ(plain.FormatCheckpointName({}, 0, 100, ModelCheckpoint::kNameLast, 2), "last-v2.ckpt");

  ModelCheckpointOptions o;
  o.filename = "model-{epoch:03d}_{acc:.3f}_{lr:.1e}_{missing}";
  o.auto_insert_metric_name = false;
  ModelCheckpoint raw(o);
  EXPECT_EQ(raw.FormatCheckpointName({{"acc", 0.91251f}, {"lr", 0.00025f}}, 7, 1), "model-007_0.913_2.5e-04_0.ckpt");
  ModelCheckpointOptions n;
  n.filename = "{val_loss}";
  EXPECT_EQ(ModelCheckpoint(n).FormatCheckpointName({{"val_loss", 0.5f}}, 0, 0), "val_loss=0.5000.ckpt");

  ModelCheckpointOptions bad;
  bad.filename = "{epoch:>5s}";
  EXPECT_THROW_WITH(ModelCheckpoint(bad).FormatCheckpointName({}, 0, 0), ConfigError, "'>5s'", "epoch");
  bad.filename = "{epoch";
  EXPECT_THROW_WITH(ModelCheckpoint(bad).FormatCheckpointName({}, 0, 0), ConfigError, "unclosed");
}

TEST(ModelCheckpointTest, TopKKeepsExactlyTheKBestFilesOnDisk) {
  FitRun run(Monitored(2));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float v : {0.50f, 0.40f, 0.60f, 0.30f, nan, 0.35f}) run.Epoch({{"val_loss", v}});
  EXPECT_EQ(Files(run.ckpt.dirpath()),
            (std::set<std::string>{"epoch=03-val_loss=0.30.ckpt", "epoch=05-val_loss=0.35.ckpt"}));
  EXPECT_EQ(run.ckpt.best_model_path(), JoinPath(run.ckpt.dirpath(), "epoch=03-val_loss=0.30.ckpt"));
  EXPECT_EQ(run.ckpt.best_model_score(), 0.30f);
  EXPECT_EQ(run.ckpt.kth_value(), 0.35f);
  EXPECT_EQ(run.ckpt.kth_best_model_path(), JoinPath(run.ckpt.dirpath(), "epoch=05-val_loss=0.35.ckpt"));
  EXPECT_EQ(run.Read("epoch=03-val_loss=0.30.ckpt"), "epoch=3 step=40");
}

TEST(ModelCheckpointTest, NanScoreIsStoredAsWorstAndDisplacedFirst) {
  ModelCheckpointOptions o = Monitored(2);
  o.mode = MonitorMode::kMax;
  FitRun run(o);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  run.Epoch({{"val_loss", nan}});  // enters (fewer than k) as -inf
  EXPECT_EQ(run.ckpt.best_k_models().begin()->second, -std::numeric_limits<float>::infinity());
  run.Epoch({{"val_loss", 0.1f}});
  run.Epoch({{"val_loss", 0.2f}});  // displaces the NaN one
  EXPECT_EQ(Files(run.ckpt.dirpath()),
            (std::set<std::string>{"epoch=01-val_loss=0.10.ckpt", "epoch=02-val_loss=0.20.ckpt"}));
  EXPECT_EQ(run.ckpt.best_model_score(), 0.2f);
}

TEST(ModelCheckpointTest, SaveTopKMinusOneKeepsAllAndZeroKeepsNone) {
  FitRun all(Monitored(-1));
  for (float v : {0.5f, 0.6f, 0.4f}) all.Epoch({{"val_loss", v}});
  EXPECT_EQ(Files(all.ckpt.dirpath()).size(), 3u);
  EXPECT_EQ(all.ckpt.best_model_score(), 0.4f);

  ModelCheckpointOptions o = Monitored(0);
  o.save_last = true;
  FitRun none(o);
  for (float v : {0.5f, 0.6f}) none.Epoch({{"val_loss", v}});
  EXPECT_EQ(Files(none.ckpt.dirpath()), (std::set<std::string>{"last.ckpt"}));
  EXPECT_EQ(none.Read("last.ckpt"), "epoch=1 step=20");
}

TEST(ModelCheckpointTest, WithoutMonitorKeepsTheLatestAndSaveLastFollows) {
  ModelCheckpointOptions o;
  o.save_last = true;
  FitRun run(o);
  run.Epoch({});
  run.Epoch({});
  run.Epoch({});
  EXPECT_EQ(Files(run.ckpt.dirpath()), (std::set<std::string>{"epoch=2-step=30.ckpt", "last.ckpt"}));
  EXPECT_EQ(run.Read("last.ckpt"), "epoch=2 step=30");
  EXPECT_EQ(run.ckpt.last_model_path(), JoinPath(run.ckpt.dirpath(), "last.ckpt"));
  EXPECT_EQ(run.ckpt.dirpath(), JoinPath(run.dir.path(), "checkpoints"));
}

// Lightning names the new file in best_model_path before it saves, so the checkpoint's own state names it: a run
// resumed from that file (the newest, without save_last) knows it as its latest and replaces it at the next save.
TEST(ModelCheckpointTest, WithoutMonitorTheCheckpointsOwnStateNamesIt) {
  FitRun run(ModelCheckpointOptions{});
  run.state.dump_checkpoint = [&run] { return run.ckpt.state_dict().GetString("best_model_path"); };
  run.Epoch({});
  run.Epoch({});
  EXPECT_EQ(run.Read("epoch=1-step=20.ckpt"), JoinPath(run.ckpt.dirpath(), "epoch=1-step=20.ckpt"));
}

// What a job `lakerun launch` restarted leaves: the resumed state's files are replaced in place (no -v1), and the
// checkpoint it resumed from, its own, is pruned like any other (a resume by hand keeps it, as Lightning).
TEST(ModelCheckpointTest, ARunResumedAfterARestartReplacesItsOwnFiles) {
  ModelCheckpointOptions o;
  o.save_last = true;
  FitRun first(o);
  first.Epoch({});
  first.Epoch({});  // epoch=1-step=20.ckpt and last.ckpt: what the restarted attempt resumes from
  ModelCheckpoint resumed(o);
  TrainerState& state = first.state;  // the same directory and progress, a new callback restored from the state
  resumed.Setup(state);
  resumed.load_state_dict(first.ckpt.state_dict());
  state.ckpt_path = JoinPath(first.ckpt.dirpath(), "epoch=1-step=20.ckpt");
  state.resumed_after_restart = true;
  for (int i = 0; i < 10; ++i) {
    ++state.global_step;
    resumed.OnTrainBatchEnd(state);
  }
  resumed.OnTrainEpochEnd(state);
  EXPECT_EQ(Files(first.ckpt.dirpath()), (std::set<std::string>{"epoch=2-step=30.ckpt", "last.ckpt"}));
  EXPECT_EQ(first.Read("last.ckpt"), "epoch=2 step=30");
}

TEST(ModelCheckpointTest, ExistingFilesGetVersionSuffixes) {
  ModelCheckpointOptions o;
  o.save_last = true;
  o.save_top_k = -1;
  FitRun run(o);
  LocalFileSystem().CreateDirs(run.ckpt.dirpath());
  LocalFileSystem().WriteAtomically(JoinPath(run.ckpt.dirpath(), "epoch=0-step=10.ckpt"), "old");
  LocalFileSystem().WriteAtomically(JoinPath(run.ckpt.dirpath(), "last.ckpt"), "old last");
  run.Epoch({});
  EXPECT_EQ(Files(run.ckpt.dirpath()), (std::set<std::string>{"epoch=0-step=10.ckpt", "epoch=0-step=10-v1.ckpt",
                                                               "last.ckpt", "last-v1.ckpt"}));
  EXPECT_EQ(run.Read("epoch=0-step=10.ckpt"), "old");
  EXPECT_EQ(run.Read("last-v1.ckpt"), "epoch=0 step=10");
  run.Epoch({});  // this run's last is replaced in place: its own last-v1, the other run's last.ckpt untouched
  EXPECT_EQ(run.Read("last-v1.ckpt"), "epoch=1 step=20");
  EXPECT_EQ(run.Read("last.ckpt"), "old last");
}

TEST(ModelCheckpointTest, NeverSavesTwiceAtTheSameGlobalStep) {
  ModelCheckpointOptions o;
  o.save_top_k = -1;
  o.every_n_train_steps = 5;
  o.save_on_train_epoch_end = true;
  FitRun run(o);
  run.Epoch({}, 10);  // saves at step 5 and 10; the epoch end at step 10 must not save again
  run.ckpt.OnValidationEnd(run.state);
  EXPECT_EQ(Files(run.ckpt.dirpath()),
            (std::set<std::string>{"epoch=0-step=5.ckpt", "epoch=0-step=10.ckpt"}));
}

TEST(ModelCheckpointTest, EveryNEpochsAndSkippedStates) {
  ModelCheckpointOptions o;
  o.save_top_k = -1;
  o.every_n_epochs = 2;
  FitRun run(o);
  for (int e = 0; e < 4; ++e) run.Epoch({});
  EXPECT_EQ(Files(run.ckpt.dirpath()), (std::set<std::string>{"epoch=1-step=20.ckpt", "epoch=3-step=40.ckpt"}));

  ModelCheckpointOptions every;
  every.save_top_k = -1;
  FitRun skipped(every);
  skipped.state.sanity_checking = true;
  skipped.Epoch({});
  skipped.state.sanity_checking = false;
  skipped.state.fast_dev_run = 1;
  skipped.Epoch({});
  skipped.state.fast_dev_run = 0;
  skipped.state.fn = TrainerFn::kValidating;
  skipped.Epoch({});
  EXPECT_TRUE(Files(skipped.ckpt.dirpath()).empty());
}

TEST(ModelCheckpointTest, SavesAfterValidationWhenValidationIsNotEveryEpoch) {
  ModelCheckpointOptions o;
  FitRun run(o);
  run.state.check_val_every_n_epoch = 2;
  run.Epoch({});  // train-epoch end: deferred to validation end
  EXPECT_TRUE(Files(run.ckpt.dirpath()).empty());
  run.state.current_epoch = 1;
  run.ckpt.OnValidationEnd(run.state);
  EXPECT_EQ(Files(run.ckpt.dirpath()), (std::set<std::string>{"epoch=1-step=10.ckpt"}));
}

TEST(ModelCheckpointTest, SaveLastOnTrainEndWhenNothingWasSaved) {
  ModelCheckpointOptions o;
  o.save_last = true;
  o.every_n_epochs = 5;
  FitRun run(o);
  run.Epoch({});
  EXPECT_EQ(Files(run.ckpt.dirpath()), (std::set<std::string>{"last.ckpt"}));  // save_last ignores every_n_epochs

  ModelCheckpointOptions steps;
  steps.save_last = true;
  steps.every_n_train_steps = 100;
  FitRun quiet(steps);
  for (int i = 0; i < 3; ++i) {  // batches only: no step trigger reached, no epoch end yet
    ++quiet.state.global_step;
    quiet.ckpt.OnTrainBatchEnd(quiet.state);
  }
  EXPECT_TRUE(Files(quiet.ckpt.dirpath()).empty());
  quiet.ckpt.OnTrainEnd(quiet.state);
  EXPECT_EQ(quiet.Read("last.ckpt"), "epoch=0 step=3");
}

TEST(ModelCheckpointTest, MissingMonitorIsAnErrorOnceValidationHasRun) {
  FitRun run(Monitored(1));
  run.Epoch({{"train_loss", 1.0f}});  // a warning: validation has not run yet
  EXPECT_TRUE(Files(run.ckpt.dirpath()).empty());
  run.state.validation_has_run = true;
  run.state.global_step += 1;
  run.state.callback_metrics = {{"train_loss", 1.0f}};
  EXPECT_THROW_WITH(run.ckpt.OnTrainEpochEnd(run.state), ConfigError, "'val_loss'", "'train_loss'", "epoch 1");
}

TEST(ModelCheckpointTest, NeverDeletesOutsideDirpathNorTheResumedCheckpoint) {
  testing::TempDir outside;
  const std::string foreign = outside.Join("epoch=00-val_loss=0.90.ckpt");
  LocalFileSystem().WriteAtomically(foreign, "foreign");

  FitRun run(Monitored(1));
  StateDict s = run.ckpt.state_dict();
  s.Set("best_k_models", std::map<std::string, double>{{foreign, 0.9}});
  s.Set("kth_best_model_path", foreign);
  s.Set("kth_value", 0.9);
  s.Set("best_model_path", foreign);
  run.ckpt.load_state_dict(s);
  run.Epoch({{"val_loss", 0.5f}});
  EXPECT_TRUE(LocalFileSystem().Exists(foreign));
  EXPECT_EQ(run.ckpt.best_k_models().size(), 1u);

  // The checkpoint the run resumed from stays even when it is displaced.
  const std::string resumed = run.ckpt.best_model_path();
  run.state.ckpt_path = resumed;
  run.Epoch({{"val_loss", 0.4f}});
  EXPECT_TRUE(LocalFileSystem().Exists(resumed));
  EXPECT_EQ(run.ckpt.best_model_score(), 0.4f);

  // A path that climbs out of dirpath with ".." is outside too.
  FitRun climb(Monitored(1));
  const std::string sneaky = JoinPath(climb.ckpt.dirpath(), "../victim.ckpt");
  LocalFileSystem().WriteAtomically(climb.dir.Join("victim.ckpt"), "victim");
  StateDict c = climb.ckpt.state_dict();
  c.Set("best_k_models", std::map<std::string, double>{{sneaky, 0.9}});
  c.Set("kth_best_model_path", sneaky);
  climb.ckpt.load_state_dict(c);
  climb.Epoch({{"val_loss", 0.5f}});
  EXPECT_TRUE(LocalFileSystem().Exists(climb.dir.Join("victim.ckpt")));
}

TEST(ModelCheckpointTest, CrashWhileWritingLeavesThePreviousCheckpointLoadable) {
  testing::TempDir dir;
  FaultInjectingFileSystem fs(LocalFileSystem());
  ModelCheckpointOptions o;
  o.save_last = true;
  o.dirpath = dir.Join("ckpts");
  ModelCheckpoint ckpt(o);
  TrainerState state;
  state.fs = &fs;
  state.dump_checkpoint = [&] { return std::string(1000, static_cast<char>('a' + state.current_epoch)); };
  ckpt.Setup(state);
  state.global_step = 10;
  ckpt.OnTrainEpochEnd(state);
  EXPECT_EQ(LocalFileSystem().ReadFile(dir.Join("ckpts/last.ckpt")), std::string(1000, 'a'));

  state.current_epoch = 1;
  state.global_step = 20;
  fs.CrashWritesAfter(1500);  // the top-k file of epoch 1 gets through, last.ckpt is torn mid-write
  EXPECT_THROW(ckpt.OnTrainEpochEnd(state), InjectedCrash);
  fs.Reset();
  EXPECT_EQ(LocalFileSystem().ReadFile(dir.Join("ckpts/last.ckpt")), std::string(1000, 'a'));
  EXPECT_EQ(Files(dir.Join("ckpts")), (std::set<std::string>{"epoch=1-step=20.ckpt", "last.ckpt"}));

  fs.FailRenames(true);  // the rename into place fails: same guarantee
  state.current_epoch = 2;
  state.global_step = 30;
  EXPECT_THROW(ckpt.OnTrainEpochEnd(state), IoError);
  EXPECT_EQ(LocalFileSystem().ReadFile(dir.Join("ckpts/last.ckpt")), std::string(1000, 'a'));
  EXPECT_EQ(Files(dir.Join("ckpts")), (std::set<std::string>{"epoch=1-step=20.ckpt", "last.ckpt"}));
}

TEST(ModelCheckpointTest, StateRoundTripsAndDirpathChangeRestoresOnlyBestPath) {
  FitRun run(Monitored(2));
  for (float v : {0.5f, 0.4f, 0.6f}) run.Epoch({{"val_loss", v}});
  const StateDict saved = StateDict::Decode(run.ckpt.state_dict().Encode());
  EXPECT_EQ(run.ckpt.state_key(),
            "ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min', 'every_n_train_steps': 0, 'every_n_epochs': 1, "
            "'train_time_interval': None}");

  ModelCheckpointOptions same = Monitored(2);
  same.dirpath = run.ckpt.dirpath();
  ModelCheckpoint restored(same);
  restored.load_state_dict(saved);
  EXPECT_EQ(restored.best_k_models(), run.ckpt.best_k_models());
  EXPECT_EQ(restored.kth_value(), 0.5f);
  EXPECT_EQ(restored.best_model_score(), 0.4f);
  EXPECT_EQ(restored.state_dict(), saved);

  ModelCheckpointOptions moved = Monitored(2);
  moved.dirpath = run.dir.Join("elsewhere");
  ModelCheckpoint other(moved);
  other.load_state_dict(saved);
  EXPECT_EQ(other.best_model_path(), run.ckpt.best_model_path());
  EXPECT_TRUE(other.best_k_models().empty());
}

TEST(ModelCheckpointTest, BadOptionsAreConfigErrors) {
  ModelCheckpointOptions o = Monitored(1);
  EXPECT_THROW_WITH(ParseMonitorMode("mode", "avg"), ConfigError, "mode: 'avg' is not one of min, max");
  o = Monitored(-2);
  EXPECT_THROW_WITH(ModelCheckpoint{o}, ConfigError, "save_top_k", "-2");
  o = ModelCheckpointOptions{};
  o.save_top_k = 3;
  EXPECT_THROW_WITH(ModelCheckpoint{o}, ConfigError, "save_top_k=3", "monitor");
  o = ModelCheckpointOptions{};
  o.every_n_epochs = 1;
  o.every_n_train_steps = 5;
  EXPECT_THROW_WITH(ModelCheckpoint{o}, ConfigError, "mutually exclusive");
  o = ModelCheckpointOptions{};
  o.every_n_epochs = -1;
  EXPECT_THROW_WITH(ModelCheckpoint{o}, ConfigError, "every_n_epochs", "-1");
}

}  // namespace
}  // namespace lakerun::train
