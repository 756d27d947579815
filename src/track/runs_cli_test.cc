// `lakerun runs list` columns and order, the monitored metric always shown, `runs show` with several matches, and
// deleted runs.
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/track/report.h"
#include "lakerun/track/runs_cli.h"
#include "lakerun/track/store.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::track {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Three finished runs of experiment "sweep": lr 0.1 / 0.05 / 0.01 with val_loss 0.347 / 0.312 / 0.402, each with five
// other metrics that sort before val_loss, and the Trainer's monitor tags; two of them are named "dup".
class RunsListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uri_ = "file:" + dir_.Join("mlruns");
    auto store = OpenStore(uri_);
    experiment_ = store->CreateExperiment("sweep");
    const std::string& experiment = experiment_;
    struct Spec {
      std::string name, lr;
      double val_loss;
    };
    int64_t start = 1795336210000;
    for (const Spec& spec : {Spec{"lr-0.1", "0.1", 0.347}, Spec{"dup", "0.05", 0.312}, Spec{"dup", "0.01", 0.402}}) {
      CreateRunRequest request;
      request.experiment_id = experiment;
      request.run_name = spec.name;
      request.start_time_ms = start;
      const RunInfo info = store->CreateRun(request);
      ids_.push_back(info.run_id);
      std::vector<Metric> metrics = {{"val_loss", spec.val_loss, start, 10}};
      for (const char* key : {"a_metric", "b_metric", "epoch", "lr-SGD", "train_loss"}) {
        metrics.push_back({key, 1.0, start, 10});
      }
      store->LogBatch(info.run_id, metrics, {{"lr", spec.lr}, {"batch_size", "32"}},
                      {{kMonitorTag, "val_loss"}, {kMonitorModeTag, "min"}});
      store->UpdateRun(info.run_id, RunStatus::kFinished, start + 60000);
      start += 1000;
    }
  }
  std::string List(std::vector<std::string> args) {
    args.insert(args.end(), {"--tracking-uri", uri_});
    std::ostringstream out;
    EXPECT_EQ(RunsListMain(args, out), 0);
    return out.str();
  }

  testing::TempDir dir_;
  std::string uri_;
  std::string experiment_;
  std::vector<std::string> ids_;
};

// What MLflow's file store does to a meta.yaml it deletes (mlflow runs delete, and every run of a deleted
// experiment): lifecycle_stage deleted, and for a run the time.
void MarkDeleted(const std::string& meta_path, std::optional<int64_t> deleted_time_ms) {
  std::string text = LocalFileSystem().ReadFile(meta_path);
  const std::string active = "lifecycle_stage: active\n";
  const size_t at = text.find(active);
  ASSERT_NE(at, std::string::npos) << meta_path;
  text.replace(at, active.size(), "lifecycle_stage: deleted\n");
  // Readers take the keys in any order.
  if (deleted_time_ms) text = "deleted_time: " + std::to_string(*deleted_time_ms) + "\n" + text;
  LocalFileSystem().WriteAtomically(meta_path, text);
}

TEST_F(RunsListTest, TheMonitoredMetricIsAlwaysShownFirst) {
  const std::string table = List({});
  // Five metrics sort before val_loss, and only three fit the cell: the monitored one still leads it.
  EXPECT_THAT(table, HasSubstr("val_loss=0.347 a_metric=1 b_metric=1 …"));
}

TEST_F(RunsListTest, SortsByAMetricAndChoosesColumns) {
  const std::string table = List({"--sort", "metrics.val_loss", "--columns", "name,metrics.val_loss,params.lr"});
  EXPECT_THAT(table, HasSubstr("RUN NAME  metrics.val_loss  params.lr\n"
                               "dup       0.312             0.05\n"
                               "lr-0.1    0.347             0.1\n"
                               "dup       0.402             0.01\n"));
  const std::string descending = List({"--sort=params.lr:desc", "--columns=params.lr"});
  EXPECT_THAT(descending, HasSubstr("params.lr\n0.1\n0.05\n0.01\n"));  // numbers as numbers
  const std::string oldest_first = List({"--sort", "start:asc", "--columns", "params.lr"});
  EXPECT_THAT(oldest_first, HasSubstr("params.lr\n0.1\n0.05\n0.01\n"));
  const std::string newest_first = List({"--columns", "params.lr"});  // the default order
  EXPECT_THAT(newest_first, HasSubstr("params.lr\n0.01\n0.05\n0.1\n"));
}

TEST_F(RunsListTest, BadColumnsAndSortKeysAreConfigErrorsListingTheChoices) {
  std::ostringstream out;
  EXPECT_THROW_WITH(RunsListMain({"--columns", "name,stauts"}, out), ConfigError, "--columns: 'stauts' is not one of",
                    "metrics.<key>", "did you mean 'status'?");
  EXPECT_THROW_WITH(RunsListMain({"--sort", "metrics"}, out), ConfigError, "--sort metrics", "metrics.loss");
  EXPECT_THROW_WITH(RunsListMain({"--sort", "name:up"}, out), ConfigError, "asc or desc", "'up'");
  EXPECT_THROW_WITH(RunsListMain({"--sortt", "name"}, out), ConfigError, "unknown option '--sortt'",
                    "did you mean --sort?");
}

TEST_F(RunsListTest, ShowWithSeveralMatchesListsThemInsteadOfPickingOne) {
  std::ostringstream out;
  try {
    RunsShowMain({"dup", "--tracking-uri", uri_}, out);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("'dup' matches 2 runs"));
    EXPECT_THAT(message, HasSubstr(ids_[1]));
    EXPECT_THAT(message, HasSubstr(ids_[2]));
    EXPECT_THAT(message, Not(HasSubstr(ids_[0])));
  }
  EXPECT_EQ(out.str(), "");
  std::ostringstream one;
  EXPECT_EQ(RunsShowMain({ids_[2].substr(0, 12), "--tracking-uri", uri_}, one), 0);  // an id prefix is unique
  EXPECT_THAT(one.str(), HasSubstr("Run " + ids_[2] + " (dup)"));
}

TEST_F(RunsListTest, ADeletedRunIsShownAsDeletedAndLeftOutOfTheList) {
  const std::string exp_dir = dir_.Join("mlruns/" + experiment_);
  MarkDeleted(exp_dir + "/" + ids_[0] + "/meta.yaml", 1795336270000);
  std::ostringstream show;
  EXPECT_EQ(RunsShowMain({ids_[0], "--tracking-uri", uri_}, show), 0);
  EXPECT_THAT(show.str(), HasSubstr("  experiment: sweep (" + experiment_ + ")\n"
                                    "  status:     FINISHED\n"
                                    "  deleted:    2026-11-22 08:31:10 UTC\n"));
  EXPECT_THAT(List({}), Not(HasSubstr(ids_[0].substr(0, 8))));
  EXPECT_THAT(List({}), HasSubstr(ids_[1].substr(0, 8)));
  std::ostringstream active;
  RunsShowMain({ids_[1], "--tracking-uri", uri_}, active);
  EXPECT_THAT(active.str(), Not(HasSubstr("deleted")));
  // A rewrite of the run's meta.yaml (a status update) keeps its deletion.
  OpenStore(uri_)->UpdateRun(ids_[0], RunStatus::kFinished, 1795336280000);
  EXPECT_THAT(LocalFileSystem().ReadFile(exp_dir + "/" + ids_[0] + "/meta.yaml"),
              HasSubstr("deleted_time: 1795336270000\n"));
}

TEST_F(RunsListTest, TheRunsOfADeletedExperimentAreFoundInTheTrashAndShownAsDeleted) {
  // mlflow experiments delete: every run and the experiment marked deleted, the experiment moved into .trash.
  const std::string root = dir_.Join("mlruns");
  for (const std::string& id : ids_) MarkDeleted(root + "/" + experiment_ + "/" + id + "/meta.yaml", 1795336270000);
  MarkDeleted(root + "/" + experiment_ + "/meta.yaml", std::nullopt);
  ASSERT_EQ(std::rename((root + "/" + experiment_).c_str(), (root + "/.trash/" + experiment_).c_str()), 0);
  std::ostringstream show;
  EXPECT_EQ(RunsShowMain({ids_[2], "--tracking-uri", uri_}, show), 0);
  EXPECT_THAT(show.str(), HasSubstr("Run " + ids_[2] + " (dup)\n"));
  EXPECT_THAT(show.str(), HasSubstr("  deleted:    2026-11-22 08:31:10 UTC (with its experiment)\n"));
  EXPECT_THAT(show.str(), HasSubstr("val_loss"));  // its data is still there
  EXPECT_THAT(List({}), HasSubstr("no runs in "));
}

}  // namespace
}  // namespace lakerun::track
