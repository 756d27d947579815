// FileStore: layout, immutability, histories, artifacts, registry, and errors, on memory and local file systems.
#include "track/file_store.h"

#include <algorithm>
#include <cmath>

#include "lakerun/base/error.h"
#include "lakerun/base/fault_injection.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::track {
namespace {

class FileStoreTest : public ::testing::Test {
 protected:
  FileStoreTest() : fs_(NewMemoryFileSystem()) {
    options_.file_system = fs_.get();
    options_.clock_ms = [this] { return now_++; };
    int next = 0;
    options_.new_run_id = [next]() mutable { return "run" + std::to_string(next++) + "0000000000000000000000000000"; };
    options_.new_experiment_id = [] { return std::string("123456789012345678"); };
    store_ = std::make_unique<FileStore>("file:/mem/mlruns", "/mem/mlruns", options_);
  }

  RunInfo NewRun() {
    const std::string exp = store_->CreateExperiment("exp");
    CreateRunRequest request;
    request.experiment_id = exp;
    request.run_name = "r";
    request.user_id = "bob";
    request.start_time_ms = 5;
    return store_->CreateRun(request);
  }

  std::unique_ptr<FileSystem> fs_;
  StoreOptions options_;
  int64_t now_ = 1000;
  std::unique_ptr<FileStore> store_;
};

TEST_F(FileStoreTest, ReadsCreateNothing) {
  EXPECT_FALSE(store_->GetExperimentByName("Default").has_value());
  EXPECT_TRUE(store_->ListExperiments().empty());
  EXPECT_FALSE(fs_->Exists("/mem/mlruns"));
}

TEST_F(FileStoreTest, FirstWriteCreatesDefaultAndTrash) {
  NewRun();
  EXPECT_TRUE(fs_->Exists("/mem/mlruns/.trash"));
  auto def = store_->GetExperiment("0");
  ASSERT_TRUE(def.has_value());
  EXPECT_EQ(def->name, "Default");
  EXPECT_EQ(def->artifact_location, "file:///mem/mlruns/0");
  EXPECT_EQ(store_->ListExperiments().size(), 2u);
  EXPECT_THROW_WITH(store_->CreateExperiment("exp"), InvalidArgument, "experiment 'exp' already exists");
}

TEST_F(FileStoreTest, EveryRunHasTheFourSubdirectories) {
  const RunInfo info = NewRun();
  const std::string dir = "/mem/mlruns/123456789012345678/" + info.run_id;
  for (const char* sub : {"metrics", "params", "tags", "artifacts"}) {
    auto stat = fs_->Stat(dir + "/" + sub);
    ASSERT_TRUE(stat.has_value()) << sub;
    EXPECT_TRUE(stat->is_directory) << sub;
  }
  EXPECT_EQ(info.artifact_uri, "file://" + dir + "/artifacts");
  EXPECT_EQ(info.status, RunStatus::kRunning);
  const std::string meta = fs_->ReadFile(dir + "/meta.yaml");
  EXPECT_NE(meta.find("end_time: null\n"), std::string::npos);
  EXPECT_NE(meta.find("status: 1\n"), std::string::npos);
}

TEST_F(FileStoreTest, ParamsAreImmutableTagsAreNot) {
  const RunInfo run = NewRun();
  store_->LogBatch(run.run_id, {}, {{"lr", "0.1"}}, {{"t", "a"}});
  store_->LogBatch(run.run_id, {}, {{"lr", "0.1"}}, {{"t", "b"}});  // same value: fine
  EXPECT_THROW_WITH(store_->LogBatch(run.run_id, {}, {{"lr", "0.2"}}, {}), InvalidArgument,
                    "Changing param values is not allowed", "key='lr'", "value='0.1'", "'0.2'", run.run_id);
  const RunRecord record = store_->GetRun(run.run_id);
  EXPECT_EQ(record.params.at("lr"), "0.1");
  EXPECT_EQ(record.tags.at("t"), "b");
  EXPECT_EQ(fs_->ReadFile("/mem/mlruns/123456789012345678/" + run.run_id + "/params/lr"), "0.1");
}

TEST_F(FileStoreTest, MetricHistoryAppendsAndLatestIsMaxByStepTimestampValue) {
  const RunInfo run = NewRun();
  store_->LogBatch(run.run_id, {{"loss", 3.0, 10, 2}, {"loss", 1.0, 20, 1}, {"train/acc", 0.5, 1, 0}}, {}, {});
  store_->LogBatch(run.run_id, {{"loss", 2.0, 5, 2}, {"loss", std::nan(""), 30, 0}}, {}, {});
  const auto history = store_->GetMetricHistory(run.run_id, "loss");
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[1].value, 1.0);
  EXPECT_TRUE(std::isnan(history[3].value));
  const RunRecord record = store_->GetRun(run.run_id);
  // Step 2 wins over later lines; between the two step-2 points the later timestamp (10) wins.
  EXPECT_EQ(record.latest_metrics.at("loss").value, 3.0);
  EXPECT_EQ(record.latest_metrics.at("train/acc").value, 0.5);
  EXPECT_EQ(fs_->ReadFile("/mem/mlruns/123456789012345678/" + run.run_id + "/metrics/loss"),
            "10 3 2\n20 1 1\n5 2 2\n30 nan 0\n");
}

TEST_F(FileStoreTest, UpdateRunSetsStatusAndEndTime) {
  const RunInfo run = NewRun();
  store_->UpdateRun(run.run_id, RunStatus::kKilled, 99);
  const RunRecord record = store_->GetRun(run.run_id);
  EXPECT_EQ(record.info.status, RunStatus::kKilled);
  EXPECT_EQ(record.info.end_time_ms, 99);
  EXPECT_EQ(record.info.user_id, "bob");
  EXPECT_EQ(store_->SearchRuns({run.experiment_id}).size(), 1u);
}

TEST_F(FileStoreTest, UnknownRunsAndExperimentsAreNamed) {
  NewRun();
  EXPECT_THROW_WITH(store_->GetRun("nosuchrun"), InvalidArgument, "run 'nosuchrun' not found", "/mem/mlruns");
  CreateRunRequest request;
  request.experiment_id = "42";
  EXPECT_THROW_WITH(store_->CreateRun(request), InvalidArgument, "experiment '42' not found");
  EXPECT_THROW_WITH(store_->GetRun("../../etc"), InvalidArgument, "invalid run id");
}

TEST_F(FileStoreTest, ArtifactsCopyFilesAndDirectories) {
  const RunInfo run = NewRun();
  fs_->CreateDirs("/src/ckpt/sub");
  fs_->WriteAtomically("/src/notes.txt", "hello");
  fs_->WriteAtomically("/src/ckpt/a.bin", std::string("\0\1\2", 3));
  fs_->WriteAtomically("/src/ckpt/sub/b.txt", "b");
  store_->LogArtifact(run.run_id, "/src/notes.txt", "");
  store_->LogArtifact(run.run_id, "/src/ckpt", "checkpoints/last");
  const std::string root = store_->ArtifactDir(run.run_id);
  EXPECT_EQ(fs_->ReadFile(root + "/notes.txt"), "hello");
  EXPECT_EQ(fs_->ReadFile(root + "/checkpoints/last/a.bin"), std::string("\0\1\2", 3));
  EXPECT_EQ(fs_->ReadFile(root + "/checkpoints/last/sub/b.txt"), "b");
  const auto listing = store_->ListArtifacts(run.run_id, "checkpoints/last");
  ASSERT_EQ(listing.size(), 2u);
  EXPECT_EQ(listing[0].path, "checkpoints/last/a.bin");
  EXPECT_EQ(listing[0].file_size, 3);
  EXPECT_TRUE(listing[1].is_dir);
  EXPECT_THROW_WITH(store_->LogArtifact(run.run_id, "/src/missing", ""), InvalidArgument, "/src/missing",
                    "does not exist");
  EXPECT_THROW_WITH(store_->LogArtifact(run.run_id, "/src/notes.txt", "../up"), InvalidArgument, "'../up'");
}

TEST_F(FileStoreTest, RegistryVersionsCount) {
  const RunInfo run = NewRun();
  ModelVersion v1 = store_->CreateModelVersion("m", run.artifact_uri + "/model", run.run_id);
  ModelVersion v2 = store_->CreateModelVersion("m", run.artifact_uri + "/model", run.run_id);
  EXPECT_EQ(v1.version, 1);
  EXPECT_EQ(v2.version, 2);
  EXPECT_TRUE(fs_->Exists("/mem/mlruns/models/m/version-2/meta.yaml"));
  EXPECT_EQ(store_->GetOrCreateRegisteredModel("m").name, "m");
  EXPECT_THROW_WITH(store_->CreateModelVersion("a/b", "x", ""), InvalidArgument, "'a/b'");
}

TEST_F(FileStoreTest, LoggedModelsAreAppendedToTheRunsHistoryAsMlflowDoes) {
  const RunInfo run = NewRun();
  const std::string tag = "/mem/mlruns/123456789012345678/" + run.run_id + "/tags/mlflow.log-model.history";
  const std::string a = R"({"run_id": "r", "artifact_path": "model", "utc_time_created": "t1", "flavors": {}})";
  const std::string b = R"({"run_id": "r", "artifact_path": "best", "utc_time_created": "t2", "flavors": {}})";
  store_->RecordLoggedModel(run.run_id, a);
  EXPECT_EQ(fs_->ReadFile(tag), "[" + a + "]");
  store_->RecordLoggedModel(run.run_id, b);
  EXPECT_EQ(fs_->ReadFile(tag), "[" + a + ", " + b + "]");  // json.dumps(model_list + [model_dict])
  EXPECT_EQ(store_->GetRun(run.run_id).tags.at("mlflow.log-model.history"), "[" + a + ", " + b + "]");

  EXPECT_THROW_WITH(store_->RecordLoggedModel(run.run_id, R"({"run_id": "r", "flavors": {}})"), InvalidArgument,
                    "lacks 'artifact_path'");
  EXPECT_THROW_WITH(store_->RecordLoggedModel(run.run_id, "[1]"), InvalidArgument, "not a JSON object");
  store_->LogBatch(run.run_id, {}, {}, {{"mlflow.log-model.history", "{oops"}});
  EXPECT_THROW_WITH(store_->RecordLoggedModel(run.run_id, a), CorruptDataError, tag, "not a JSON list");
}

TEST_F(FileStoreTest, ADamagedRunOrExperimentIsSkippedAndTheRestListed) {
  const std::string exp = store_->CreateExperiment("exp");
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    CreateRunRequest request;
    request.experiment_id = exp;
    request.run_name = "r" + std::to_string(i);
    request.start_time_ms = 5 + i;
    ids.push_back(store_->CreateRun(request).run_id);
  }
  fs_->WriteAtomically("/mem/mlruns/" + exp + "/" + ids[1] + "/meta.yaml", "run_id: [broken\n");
  const std::vector<RunRecord> runs = store_->SearchRuns({exp});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].info.run_id, ids[2]);
  EXPECT_EQ(runs[1].info.run_id, ids[0]);
  // An experiment whose meta.yaml is damaged, or missing, is skipped; the others are listed.
  fs_->CreateDirs("/mem/mlruns/777");
  fs_->WriteAtomically("/mem/mlruns/777/meta.yaml", "experiment_id: '999'\n");
  fs_->CreateDirs("/mem/mlruns/888/somerun");
  std::vector<std::string> names;
  for (const Experiment& e : store_->ListExperiments()) names.push_back(e.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"Default", "exp"}));
}

TEST_F(FileStoreTest, WriteFailureIsAnIoErrorNamingTheFile) {
  const RunInfo run = NewRun();
  FaultInjectingFileSystem faulty(*fs_);
  StoreOptions options = options_;
  options.file_system = &faulty;
  FileStore store("file:/mem/mlruns", "/mem/mlruns", options);
  faulty.CrashWritesAfter(10);
  EXPECT_THROW_WITH(store.LogBatch(run.run_id, {{"loss", 1.0, 1, 0}, {"loss", 2.0, 2, 1}, {"loss", 3.0, 3, 2}}, {}, {}),
                    IoError, "metrics/loss");
}

TEST(FileStorePathTest, ParsesUris) {
  EXPECT_EQ(FileStorePath("file:///abs/mlruns"), "/abs/mlruns");
  EXPECT_EQ(FileStorePath("file:rel/mlruns"), "rel/mlruns");
  EXPECT_EQ(FileStorePath("file://localhost/abs"), "/abs");
  EXPECT_EQ(FileStorePath("./mlruns"), "./mlruns");
  EXPECT_THROW_WITH(FileStorePath("file://host"), ConfigError, "absolute path");
  EXPECT_THROW_WITH(OpenStore("s3://bucket/x"), ConfigError, "scheme 's3'");
}

TEST(FileStoreLocalTest, RelativeRootsResolveToAbsoluteArtifactUris) {
  testing::TempDir dir;
  FileStore store("file:" + dir.Join("mlruns"), dir.Join("mlruns"), {});
  const std::string exp = store.CreateExperiment("e");
  CreateRunRequest request;
  request.experiment_id = exp;
  const RunInfo run = store.CreateRun(request);
  EXPECT_EQ(run.artifact_uri.rfind("file://" + dir.path() + "/mlruns/" + exp + "/", 0), 0u) << run.artifact_uri;
  EXPECT_EQ(exp.size(), 18u);
  EXPECT_EQ(run.run_id.size(), 32u);
  EXPECT_EQ(run.user_id, "unknown");
}

}  // namespace
}  // namespace lakerun::track
