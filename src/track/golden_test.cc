// Golden tests: the client's file store output, with injected clock, ids and user, compared file by file and line by
// line with the hand-written MLflow tree in testdata/golden_mlruns/ (its directory list in golden_mlruns.manifest,
// since git keeps no empty directories); and the reader side over that same tree.
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/track/report.h"
#include "lakerun/track/runs_cli.h"
#include "lakerun/track/tracker.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/paths.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::track {
namespace {

const char kGoldenRoot[] = "/golden/mlruns";

std::string GoldenDir() { return testing::SourceDir() + "/src/track/testdata/golden_mlruns"; }

std::vector<std::string> Manifest() {
  std::ifstream in(testing::SourceDir() + "/src/track/testdata/golden_mlruns.manifest");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// Every entry under `dir`, relative, directories with a trailing '/'.
void ListTree(const std::string& dir, const std::string& prefix, std::set<std::string>* out) {
  for (const auto& entry : LocalFileSystem().List(dir)) {
    const std::string rel = prefix + entry.name;
    if (entry.is_directory) {
      out->insert(rel + "/");
      ListTree(JoinPath(dir, entry.name), rel + "/", out);
    } else {
      out->insert(rel);
    }
  }
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  if (!text.empty() && text.back() != '\n') lines.back() += "<no newline at end>";
  return lines;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

// Writes the golden scenario with the public API.
void WriteScenario(const std::string& root, const std::string& scratch) {
  int64_t now = 1795336210725;
  std::vector<std::string> run_ids = {"0cde1e1d213549d19200307b3f387c17", "5b1f0c7a9e2d4c8b8f3a6d2e1c0b9a87"};
  size_t next_run = 0;
  TrackerOptions options;
  options.experiment_name = "demo-exp";
  options.handle_signals = false;
  options.user = "alice";
  options.source_name = "/opt/train/train";
  options.git_commit = "3f786850e387550fdab836ed7e6dc881de23001b";
  options.record_process = false;  // host and pid vary; MLflow's own tags only
  options.store.clock_ms = [&now] { return now++; };
  options.store.new_run_id = [&] { return run_ids.at(next_run++); };
  options.store.new_experiment_id = [] { return std::string("947448973651377922"); };
  Tracker tracker("file:" + root, options);
  ASSERT_EQ(tracker.experiment_id(), "947448973651377922");

  LocalFileSystem().CreateDirs(scratch + "/model");
  LocalFileSystem().WriteAtomically(scratch + "/notes.txt", "trained on 3 shards\n");
  LocalFileSystem().WriteAtomically(scratch + "/model/MLmodel", "artifact_path: model\nflavors: {}\n");

  StartRunOptions start;
  start.run_name = "run-a";
  track::Run run = tracker.StartRun(start);
  run.LogParam("lr", "0.001");
  run.LogParam("batch_size", "32");
  run.LogParam("optimizer/name", "adam");
  run.LogMetric("val_loss", 0.9, 0);
  run.LogMetric("val_loss", 0.5, 1);
  run.LogMetric("val_loss", std::nan(""), 2);
  run.LogMetric("train/loss", 1.25, 0);
  run.LogMetric("train/loss", 0.75, 1);
  run.LogMetric("lr_scale", INFINITY, 0, 1795336210000);
  run.SetTag("mlflow.note.content", "baseline: lr=0.001");
  run.LogArtifact(scratch + "/notes.txt");
  run.LogArtifact(scratch + "/model", "model");
  {
    StartRunOptions child;
    child.run_name = "run-b";
    track::Run nested = tracker.StartNestedRun(run, child);
    nested.LogParam("fold", "1");
    nested.LogMetric("acc", 0.875, 0);
  }  // ends FINISHED
  run.End();
  tracker.RegisterModel(run.run_id(), "model", "demo-model");
}

TEST(GoldenTest, FileStoreOutputMatchesTheGoldenTreeFileByFile) {
  testing::TempDir dir;
  const std::string root = dir.Join("mlruns");
  WriteScenario(root, dir.Join("scratch"));

  std::set<std::string> written;
  ListTree(root, "", &written);
  const std::vector<std::string> manifest = Manifest();
  ASSERT_FALSE(manifest.empty());
  EXPECT_EQ(std::vector<std::string>(written.begin(), written.end()), manifest) << "the set of files and directories";

  for (const std::string& rel : manifest) {
    if (rel.back() == '/') continue;
    ASSERT_TRUE(LocalFileSystem().Exists(GoldenDir() + "/" + rel)) << "golden tree lacks " << rel;
    if (!written.count(rel)) continue;
    const auto golden = Lines(LocalFileSystem().ReadFile(GoldenDir() + "/" + rel));
    const auto actual = Lines(Replace(LocalFileSystem().ReadFile(root + "/" + rel), "file://" + root,
                                      std::string("file://") + kGoldenRoot));
    for (size_t i = 0; i < std::max(golden.size(), actual.size()); ++i) {
      EXPECT_EQ(i < actual.size() ? actual[i] : "<missing line>", i < golden.size() ? golden[i] : "<extra line>")
          << rel << " line " << i + 1;
    }
  }
}

// The golden tree with the empty directories git does not keep.
std::string CopyGolden(const testing::TempDir& dir) {
  const std::string root = dir.Join("mlruns");
  for (const std::string& rel : Manifest()) {
    if (rel.back() == '/') {
      LocalFileSystem().CreateDirs(root + "/" + rel);
    } else {
      LocalFileSystem().WriteAtomically(root + "/" + rel, LocalFileSystem().ReadFile(GoldenDir() + "/" + rel));
    }
  }
  return root;
}

TEST(GoldenReaderTest, ReadsExperimentsRunsAndHistories) {
  testing::TempDir dir;
  auto store = OpenStore(CopyGolden(dir));
  auto experiment = store->GetExperimentByName("demo-exp");
  ASSERT_TRUE(experiment.has_value());
  EXPECT_EQ(experiment->experiment_id, "947448973651377922");
  EXPECT_EQ(experiment->creation_time_ms, 1795336210726);

  const auto runs = store->SearchRuns({"947448973651377922"});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].info.run_name, "run-b");  // newest first
  const RunRecord& a = runs[1];
  EXPECT_EQ(a.info.run_id, "0cde1e1d213549d19200307b3f387c17");
  EXPECT_EQ(a.info.status, RunStatus::kFinished);
  EXPECT_EQ(a.info.user_id, "alice");
  EXPECT_EQ(a.info.start_time_ms, 1795336210727);
  EXPECT_EQ(a.info.end_time_ms, 1795336210736);
  EXPECT_EQ(a.params.at("optimizer/name"), "adam");
  EXPECT_EQ(a.tags.at("mlflow.note.content"), "baseline: lr=0.001");
  EXPECT_TRUE(std::isnan(a.latest_metrics.at("val_loss").value));  // step 2 is the latest, and it is NaN
  EXPECT_EQ(a.latest_metrics.at("train/loss").value, 0.75);
  EXPECT_EQ(a.latest_metrics.at("lr_scale").value, INFINITY);
  const auto history = store->GetMetricHistory(a.info.run_id, "val_loss");
  ASSERT_EQ(history.size(), 3u);
  EXPECT_DOUBLE_EQ(history[0].value, 0.9);
  EXPECT_EQ(runs[0].tags.at("mlflow.parentRunId"), a.info.run_id);
  const auto artifacts = store->ListArtifacts(a.info.run_id, "");
  ASSERT_EQ(artifacts.size(), 2u);
  EXPECT_EQ(artifacts[0].path, "model");
  EXPECT_TRUE(artifacts[0].is_dir);
}

TEST(GoldenReaderTest, ReportsListShowAndCompareTheGoldenRuns) {
  testing::TempDir dir;
  auto store = OpenStore("file:" + CopyGolden(dir));
  const auto runs = store->SearchRuns({"947448973651377922"});
  const std::string table = FormatRunsTable(runs);
  EXPECT_THAT(table, ::testing::HasSubstr("RUN NAME"));
  EXPECT_THAT(table, ::testing::HasSubstr("run-a     0cde1e1d  FINISHED  2026-11-22 "));
  EXPECT_THAT(table, ::testing::HasSubstr("batch_size=32 lr=0.001 optimizer/name=adam"));
  EXPECT_THAT(table, ::testing::HasSubstr("lr_scale=inf train/loss=0.75 val_loss=nan"));
  EXPECT_THAT(table, ::testing::HasSubstr("fold=1"));

  const RunRecord a = FindRun(*store, "run-a");
  EXPECT_EQ(a.info.run_id, "0cde1e1d213549d19200307b3f387c17");
  EXPECT_EQ(FindRun(*store, "5b1f0c7a").info.run_name, "run-b");
  EXPECT_THROW_WITH(FindRun(*store, "nope"), InvalidArgument, "no run with id or name 'nope'");
  const std::string details = FormatRunDetails(a, ReadHistories(*store, a));
  EXPECT_THAT(details, ::testing::HasSubstr("status:     FINISHED"));
  EXPECT_THAT(details, ::testing::HasSubstr("mlflow.source.git.commit  3f786850e387550fdab836ed7e6dc881de23001b"));
  EXPECT_THAT(details, ::testing::HasSubstr("val_loss    nan   step 2  3 pts  min 0.5  max 0.9    █▁\n"));
  EXPECT_THAT(details, ::testing::HasSubstr("train/loss  0.75  step 1  2 pts  min 0.75  max 1.25  █▁"));

  const RunRecord b = FindRun(*store, "run-b");
  const std::string compare = FormatRunsComparison({a, b}, {ReadHistories(*store, a), ReadHistories(*store, b)});
  EXPECT_THAT(compare, ::testing::HasSubstr("run-a"));
  EXPECT_THAT(compare, ::testing::HasSubstr("* lr"));
  EXPECT_THAT(compare, ::testing::HasSubstr("  acc"));
}

}  // namespace
}  // namespace lakerun::track

namespace lakerun::track {
namespace {

TEST(RunsCliTest, ListShowAndCompareReadTheGoldenTree) {
  testing::TempDir dir;
  const std::string root = CopyGolden(dir);
  std::ostringstream list;
  EXPECT_EQ(RunsListMain({"--tracking-uri", "file:" + root, "--experiment", "demo-exp"}, list), 0);
  EXPECT_THAT(list.str(), ::testing::HasSubstr("Experiment demo-exp (947448973651377922): 2 runs"));
  EXPECT_THAT(list.str(), ::testing::HasSubstr("run-b"));
  std::ostringstream all;
  RunsListMain({"--tracking-uri=" + root}, all);
  EXPECT_THAT(all.str(), ::testing::Not(::testing::HasSubstr("Default")));  // an experiment without runs is skipped
  std::ostringstream show;
  EXPECT_EQ(RunsShowMain({"run-a", "--tracking-uri", root}, show), 0);
  EXPECT_THAT(show.str(), ::testing::HasSubstr("Run 0cde1e1d213549d19200307b3f387c17 (run-a)"));
  std::ostringstream compare;
  EXPECT_EQ(RunsCompareMain({"run-a", "5b1f0c7a", "--tracking-uri", root}, compare), 0);
  EXPECT_THAT(compare.str(), ::testing::HasSubstr("* fold"));

  std::ostringstream ignored;
  EXPECT_THROW_WITH(RunsListMain({"--tracking-uri", root, "--experiment", "nope"}, ignored), InvalidArgument,
                    "no experiment named 'nope'");
  EXPECT_THROW_WITH(RunsListMain({"--bogus"}, ignored), ConfigError, "unknown option '--bogus'");
  EXPECT_THROW_WITH(RunsCompareMain({"run-a", "--tracking-uri", root}, ignored), ConfigError, "at least two");
  EXPECT_THROW_WITH(RunsShowMain({"--tracking-uri"}, ignored), ConfigError, "--tracking-uri needs a value");
}

}  // namespace
}  // namespace lakerun::track
