// `lakerun runs list` columns and order, the monitored metric always shown, and `runs show` with several matches.
#include <sstream>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
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
    const std::string experiment = store->CreateExperiment("sweep");
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
  std::vector<std::string> ids_;
};

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

}  // namespace
}  // namespace lakerun::track
