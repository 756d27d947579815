// The REST client against a loopback server: recorded MLflow exchanges replayed in order (the requests the client
// sends are checked field by field), then batch limits, NaN encoding, retries, auth and artifact uploads.
#include "track/rest_store.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/objstore/uri_file_system.h"
#include "lakerun/track/runs_cli.h"
#include "lakerun/track/tracker.h"
#include "lakerun_testing/emulators.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/paths.h"
#include "lakerun_testing/temp_dir.h"
#include "track/test_http_server.h"

namespace lakerun::track {
namespace {

using nlohmann::json;
using testing::CannedResponse;
using testing::RecordedRequest;
using testing::TestHttpServer;

// Replays recorded exchanges: each incoming request must match the next one's method, path, query and body.
// Consecutive log-batch requests are merged into one logical call (the client may split its batches anywhere).
class Replayer {
 public:
  explicit Replayer(const std::string& file) {
    std::ifstream in(file);
    exchanges_ = json::parse(in).at("exchanges");
  }

  CannedResponse Handle(const RecordedRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (next_ >= exchanges_.size()) return Fail("unexpected extra request " + r.method + " " + r.path);
    const json& expected = exchanges_[next_].at("request");
    const json& response = exchanges_[next_].at("response");
    const std::string where = "exchange " + std::to_string(next_) + " (" + expected.at("method").get<std::string>() +
                              " " + expected.at("path").get<std::string>() + ")";
    if (r.method != expected.at("method") || r.path != expected.at("path")) {
      return Fail(where + ": got " + r.method + " " + r.path);
    }
    json query = json::object();
    for (const auto& [k, v] : r.query) query[k] = v;
    if (query != expected.value("query", json::object())) return Fail(where + ": query " + query.dump());
    if (expected.contains("body_text") && r.body != expected.at("body_text").get<std::string>()) {
      return Fail(where + ": body bytes '" + r.body + "'");
    }
    if (expected.contains("body")) {
      json actual;
      try {
        actual = json::parse(r.body);
      } catch (const json::exception&) {
        return Fail(where + ": body is not JSON: " + r.body);
      }
      if (r.path.size() > 9 && r.path.substr(r.path.size() - 9) == "log-batch") {
        if (pending_.is_null()) pending_ = {{"run_id", actual.at("run_id")}, {"params", json::array()},
                                            {"tags", json::array()}, {"metrics", json::array()}};
        for (const char* kind : {"params", "tags", "metrics"}) {
          for (const auto& e : actual.value(kind, json::array())) pending_[kind].push_back(e);
        }
        const json& want = expected.at("body");
        bool prefix = pending_["run_id"] == want["run_id"];
        bool complete = prefix;
        for (const char* kind : {"params", "tags", "metrics"}) {
          const json& got = pending_[kind];
          const json& exp = want.value(kind, json::array());
          if (got.size() > exp.size()) prefix = false;
          for (size_t i = 0; prefix && i < got.size(); ++i) prefix = got[i] == exp[i];
          complete = complete && got == exp;
        }
        if (!prefix) return Fail(where + ": log-batch entities so far " + pending_.dump());
        if (complete) {
          pending_ = nullptr;
          ++next_;
        }
        return {200, "{}"};
      }
      if (actual != expected.at("body")) return Fail(where + ": body " + actual.dump());
    }
    ++next_;
    return {response.at("status").get<int>(), response.at("body").dump()};
  }

  size_t consumed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return next_;
  }
  size_t size() const { return exchanges_.size(); }
  std::vector<std::string> mismatches() const {
    std::lock_guard<std::mutex> lock(mu_);
    return mismatches_;
  }

 private:
  CannedResponse Fail(const std::string& what) {
    mismatches_.push_back(what);
    return {400, json{{"error_code", "INVALID_PARAMETER_VALUE"}, {"message", "replay mismatch: " + what}}.dump()};
  }

  json exchanges_;
  json pending_;
  size_t next_ = 0;
  mutable std::mutex mu_;
  std::vector<std::string> mismatches_;
};

HttpOptions FastRetries(int max_retries = 3) {
  HttpOptions http;
  http.max_retries = max_retries;
  http.backoff_base = std::chrono::milliseconds(1);
  http.backoff_max = std::chrono::milliseconds(5);
  http.jitter = std::chrono::milliseconds(1);
  http.max_retry_time = std::chrono::milliseconds(5000);
  http.request_timeout = std::chrono::milliseconds(10000);
  http.connect_timeout = std::chrono::milliseconds(2000);
  http.token = "";
  http.username = "";
  return http;
}

TEST(RestReplayTest, TrackingSessionSendsTheRecordedRequests) {
  Replayer replayer(lakerun::testing::SourceDir() + "/src/track/testdata/rest/tracking_session.json");
  TestHttpServer server([&](const RecordedRequest& r) { return replayer.Handle(r); });
  lakerun::testing::TempDir dir;
  LocalFileSystem().WriteAtomically(dir.Join("notes.txt"), "trained on 3 shards\n");

  int64_t now = 1795336210725;
  TrackerOptions options;
  options.experiment_name = "demo-exp";
  options.handle_signals = false;
  options.user = "alice";
  options.source_name = "/opt/train/train";
  options.git_commit = "3f786850e387550fdab836ed7e6dc881de23001b";
  options.record_process = false;  // host and pid vary; MLflow's own tags only
  options.store.clock_ms = [&now] { return now++; };
  options.store.http = FastRetries(0);
  Tracker tracker(server.url(), options);
  StartRunOptions start;
  start.run_name = "run-a";
  track::Run run = tracker.StartRun(start);
  EXPECT_EQ(run.run_id(), "0cde1e1d213549d19200307b3f387c17");
  run.LogParam("lr", "0.001");
  run.LogMetric("val_loss", 0.9, 0);
  run.LogMetric("val_loss", std::nan(""), 1);
  run.LogMetric("train/loss", INFINITY, 0);
  run.SetTag("mlflow.note.content", "baseline");
  run.LogArtifact(dir.Join("notes.txt"));
  run.Flush();
  const auto history = tracker.store().GetMetricHistory(run.run_id(), "val_loss");
  ASSERT_EQ(history.size(), 2u);
  EXPECT_DOUBLE_EQ(history[0].value, 0.9);
  EXPECT_TRUE(std::isnan(history[1].value));
  run.End();
  const ModelVersion version = tracker.RegisterModel(run.run_id(), "model", "demo-model");
  EXPECT_EQ(version.version, 1);
  EXPECT_EQ(version.status, "READY");

  EXPECT_TRUE(replayer.mismatches().empty()) << replayer.mismatches().front();
  EXPECT_EQ(replayer.consumed(), replayer.size());
}

class RestStoreTest : public ::testing::Test {
 protected:
  RestStoreTest()
      : server_([](const RecordedRequest&) { return CannedResponse{}; }) {
    options_.http = FastRetries();
  }
  std::unique_ptr<RestStore> Store() { return std::make_unique<RestStore>(server_.url(), options_); }

  TestHttpServer server_;
  StoreOptions options_;
};

TEST_F(RestStoreTest, SplitsBatchesAtMlflowLimits) {
  std::vector<Metric> metrics;
  for (int i = 0; i < 2500; ++i) metrics.push_back({"loss", i * 0.5, 1000 + i, i});
  Store()->LogBatch("r1", metrics, {}, {});
  auto calls = server_.requests_to("/runs/log-batch");
  ASSERT_EQ(calls.size(), 3u);
  int64_t next_step = 0;
  for (const auto& call : calls) {
    const json body = json::parse(call.body);
    EXPECT_LE(body["metrics"].size(), 1000u);
    for (const auto& m : body["metrics"]) EXPECT_EQ(m["step"].get<int64_t>(), next_step++);
  }
  EXPECT_EQ(next_step, 2500);

  std::vector<KeyValue> params;
  for (int i = 0; i < 250; ++i) params.push_back({"p" + std::to_string(i), std::to_string(i)});
  Store()->LogBatch("r1", {}, params, {});
  calls = server_.requests_to("/runs/log-batch");
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(json::parse(calls[3].body)["params"].size(), 100u);
  EXPECT_EQ(json::parse(calls[5].body)["params"].size(), 50u);
  EXPECT_EQ(calls[3].headers.at("Content-Type"), "application/json");
}

TEST_F(RestStoreTest, AsyncRunSendsEveryPointWithinLimits) {
  TrackerOptions options;
  options.handle_signals = false;
  options.store = options_;
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    if (r.path.find("get-by-name") != std::string::npos) return {200, R"({"experiment":{"experiment_id":"7"}})"};
    if (r.path.find("runs/create") != std::string::npos) {
      return {200, R"({"run":{"info":{"run_id":"abc","experiment_id":"7","status":"RUNNING"}}})"};
    }
    return {200, "{}"};
  });
  Tracker tracker(server_.url(), options);
  track::Run run = tracker.StartRun();
  for (int i = 0; i < 3000; ++i) run.LogMetric(i % 2 ? "a" : "b", i, i);
  run.End();
  size_t points = 0;
  for (const auto& call : server_.requests_to("/runs/log-batch")) {
    const json body = json::parse(call.body);
    EXPECT_LE(body["metrics"].size(), 1000u);
    EXPECT_EQ(body["run_id"], "abc");
    points += body["metrics"].size();
  }
  EXPECT_EQ(points, 3000u);
  const auto updates = server_.requests_to("/runs/update");
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(json::parse(updates[0].body)["status"], "FINISHED");
}

TEST_F(RestStoreTest, FlushGivesUpAfterItsTimeoutOnASlowServer) {
  TrackerOptions options;
  options.handle_signals = false;
  options.store = options_;
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    if (r.path.find("get-by-name") != std::string::npos) return {200, R"({"experiment":{"experiment_id":"7"}})"};
    if (r.path.find("runs/create") != std::string::npos) {
      return {200, R"({"run":{"info":{"run_id":"abc","experiment_id":"7","status":"RUNNING"}}})"};
    }
    if (r.path.find("log-batch") != std::string::npos) std::this_thread::sleep_for(std::chrono::seconds(2));
    return {200, "{}"};
  });
  Tracker tracker(server_.url(), options);
  track::Run run = tracker.StartRun();
  run.LogMetric("loss", 1.0, 0);
  EXPECT_THROW_WITH(run.Flush(std::chrono::milliseconds(50)), IoError, "flush did not finish within 50 ms",
                    server_.url());
  run.End();  // waits for the slow call (within the default timeout), then ends the run
  EXPECT_EQ(server_.requests_to("/runs/log-batch").size(), 1u);
  EXPECT_EQ(json::parse(server_.requests_to("/runs/update").at(0).body)["status"], "FINISHED");
}

TEST_F(RestStoreTest, RetriesOn503And429ThenSucceeds) {
  std::atomic<int> calls{0};
  server_.set_handler([&](const RecordedRequest&) -> CannedResponse {
    const int n = calls++;
    if (n == 0) return {503, R"({"error_code":"TEMPORARILY_UNAVAILABLE"})"};
    if (n == 1) return {429, R"({"error_code":"REQUEST_LIMIT_EXCEEDED"})"};
    return {200, R"({"experiment_id":"5"})"};
  });
  EXPECT_EQ(Store()->CreateExperiment("e"), "5");
  EXPECT_EQ(calls.load(), 3);
  const auto requests = server_.requests();
  for (const auto& r : requests) EXPECT_EQ(json::parse(r.body)["name"], "e");  // the same body each time
}

TEST_F(RestStoreTest, GivesUpAfterTheRetryLimitWithAClearError) {
  server_.set_handler([](const RecordedRequest&) { return CannedResponse{503, "overloaded"}; });
  options_.http.max_retries = 2;
  EXPECT_THROW_WITH(Store()->UpdateRun("r1", RunStatus::kFinished, 5), IoError, "POST " + server_.url(),
                    "/runs/update", "after 3 attempt(s)", "HTTP 503", "overloaded");
  EXPECT_EQ(server_.requests().size(), 3u);
}

TEST_F(RestStoreTest, StopsRetryingWhenTheTimeBudgetIsSpent) {
  server_.set_handler([](const RecordedRequest&) { return CannedResponse{429, "slow down"}; });
  options_.http.max_retries = 1000;
  options_.http.backoff_base = std::chrono::milliseconds(20);
  options_.http.backoff_max = std::chrono::milliseconds(20);
  options_.http.max_retry_time = std::chrono::milliseconds(200);
  EXPECT_THROW_WITH(Store()->UpdateRun("r1", RunStatus::kFinished, 5), IoError, "HTTP 429",
                    "retry time budget of 200 ms spent");
  EXPECT_LT(server_.requests().size(), 1000u);  // the budget, not the count, ended it
}

TEST_F(RestStoreTest, ConnectionRefusedIsRetriedThenReported) {
  std::string url;
  {
    TestHttpServer gone([](const RecordedRequest&) { return CannedResponse{}; });
    url = gone.url();
  }
  options_.http.max_retries = 1;
  RestStore store(url, options_);
  EXPECT_THROW_WITH(store.GetRun("r1"), IoError, "GET " + url, "after 2 attempt(s)");
}

TEST_F(RestStoreTest, AServerThatNeverAnswersEndsTheCallWithinItsBudgetNamingTheServer) {
  server_.set_handler([](const RecordedRequest&) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return CannedResponse{};
  });
  options_.http.max_retry_time = std::chrono::milliseconds(800);  // request_timeout stays at its default
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW_WITH(Store()->GetRun("r1"), IoError, "GET " + server_.url(), "/runs/get");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
}

TEST_F(RestStoreTest, TheEnvironmentSetsRetriesAndTimeoutsAsMlflowsClientReadsThem) {
  std::string url;
  {
    TestHttpServer gone([](const RecordedRequest&) { return CannedResponse{}; });
    url = gone.url();
  }
  ::setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0", 1);
  EXPECT_THROW_WITH(RestStore(url, options_).GetRun("r1"), IoError, "GET " + url, "after 1 attempt(s)");
  ::setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "lots", 1);
  EXPECT_THROW_WITH(RestStore(url, options_).GetRun("r1"), ConfigError, "MLFLOW_HTTP_REQUEST_MAX_RETRIES='lots'");
  ::unsetenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES");
}

TEST_F(RestStoreTest, ServerErrorsMapToLakerunErrors) {
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    if (r.path.find("log-batch") != std::string::npos) {
      return {400, R"({"error_code":"INVALID_PARAMETER_VALUE","message":"Invalid metric name: 'x'"})"};
    }
    if (r.path.find("runs/get") != std::string::npos) {
      return {404, R"({"error_code":"RESOURCE_DOES_NOT_EXIST","message":"Run 'r9' not found"})"};
    }
    if (r.path.find("experiments/create") != std::string::npos) return {401, "unauthorized"};
    return {200, "{}"};
  });
  EXPECT_THROW_WITH(Store()->LogBatch("r1", {{"x", 1, 1, 1}}, {}, {}), InvalidArgument, "HTTP 400",
                    "INVALID_PARAMETER_VALUE", "Invalid metric name");
  EXPECT_THROW_WITH(Store()->GetRun("r9"), InvalidArgument, "Run 'r9' not found");
  EXPECT_THROW_WITH(Store()->CreateExperiment("e"), ConfigError, "HTTP 401", "MLFLOW_TRACKING_TOKEN");
  EXPECT_THROW_WITH(Store()->GetExperimentByName("missing"), CorruptDataError, "experiments/get-by-name",
                    "lacks 'experiment'");
}

TEST_F(RestStoreTest, SendsBearerTokenOrBasicAuth) {
  options_.http.token = "s3cr3t-token";
  Store()->UpdateRun("r1", RunStatus::kFinished, 1);
  EXPECT_EQ(server_.requests().back().headers.at("Authorization"), "Bearer s3cr3t-token");
  options_.http.token = "";
  options_.http.username = "alice";
  options_.http.password = "s3cret";
  Store()->UpdateRun("r1", RunStatus::kFinished, 1);
  EXPECT_EQ(server_.requests().back().headers.at("Authorization"), "Basic YWxpY2U6czNjcmV0");
}

TEST_F(RestStoreTest, TakesTheTokenFromTheEnvironment) {
  ::setenv("MLFLOW_TRACKING_TOKEN", "env-token", 1);
  Store()->UpdateRun("r1", RunStatus::kFinished, 1);
  ::unsetenv("MLFLOW_TRACKING_TOKEN");
  EXPECT_EQ(server_.requests().back().headers.at("Authorization"), "Bearer env-token");
  Store()->UpdateRun("r1", RunStatus::kFinished, 1);
  EXPECT_EQ(server_.requests().back().headers.count("Authorization"), 0u);
}

TEST_F(RestStoreTest, UploadsArtifactsThroughTheProxy) {
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    if (r.path.find("runs/get") != std::string::npos) {
      return {200, R"({"run":{"info":{"run_id":"r1","artifact_uri":"mlflow-artifacts:/3/r1/artifacts"}}})"};
    }
    return {200, "{}"};
  });
  lakerun::testing::TempDir dir;
  FileSystem& fs = LocalFileSystem();
  std::string binary;
  for (int i = 0; i < 300000; ++i) binary.push_back(static_cast<char>(i * 7));
  fs.CreateDirs(dir.Join("ckpt/sub dir"));
  fs.WriteAtomically(dir.Join("ckpt/weights.bin"), binary);
  fs.WriteAtomically(dir.Join("ckpt/sub dir/meta.json"), "{}");
  auto store = Store();
  store->LogArtifact("r1", dir.Join("ckpt/weights.bin"), "single");
  store->LogArtifact("r1", dir.Join("ckpt"), "checkpoints");
  const auto puts = server_.requests_to("");
  std::map<std::string, std::string> uploaded;
  for (const auto& r : puts) {
    if (r.method == "PUT") uploaded[r.path] = r.body;
  }
  const std::string base = "/api/2.0/mlflow-artifacts/artifacts/3/r1/artifacts/";
  ASSERT_EQ(uploaded.size(), 3u);
  EXPECT_EQ(uploaded.at(base + "single/weights.bin"), binary);
  EXPECT_EQ(uploaded.at(base + "checkpoints/weights.bin"), binary);
  EXPECT_EQ(uploaded.at(base + "checkpoints/sub dir/meta.json"), "{}");
}

TEST_F(RestStoreTest, RefusesArtifactRootsItCannotWrite) {
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    return {200, R"({"run":{"info":{"run_id":"r1","artifact_uri":"hdfs://namenode/1/r1/artifacts"}}})"};
  });
  lakerun::testing::TempDir dir;
  LocalFileSystem().WriteAtomically(dir.Join("a.txt"), "a");
  EXPECT_THROW_WITH(Store()->LogArtifact("r1", dir.Join("a.txt"), ""), NotImplemented,
                    "hdfs://namenode/1/r1/artifacts", "--serve-artifacts");
}

// An artifact root in S3 is written directly, as MLflow's client does, here into s3rver on loopback.
TEST_F(RestStoreTest, WritesArtifactsStraightToAnObjectStoreRoot) {
  lakerun::testing::TempDir dir;
  const std::string bucket = "artifacts-" + std::to_string(::getpid());
  std::string why_not;
  auto s3 = lakerun::testing::StartS3Emulator(dir.Join("s3"), {bucket}, &why_not);
  if (!s3) GTEST_SKIP() << why_not;
  const std::map<std::string, std::string> env = {{"AWS_ENDPOINT_URL", s3->endpoint()},
                                                  {"AWS_ACCESS_KEY_ID", s3->access_key_id()},
                                                  {"AWS_SECRET_ACCESS_KEY", s3->secret_access_key()},
                                                  {"AWS_REGION", "us-east-1"}};
  for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
  const std::string root = "s3://" + bucket + "/1/r1/artifacts";
  server_.set_handler([&](const RecordedRequest&) -> CannedResponse {
    return {200, R"({"run":{"info":{"run_id":"r1","artifact_uri":")" + root + R"("}}})"};
  });
  LocalFileSystem().CreateDirs(dir.Join("ckpt/sub"));
  std::string binary;
  for (int i = 0; i < 300000; ++i) binary.push_back(static_cast<char>(i * 7));
  LocalFileSystem().WriteAtomically(dir.Join("ckpt/weights.bin"), binary);
  LocalFileSystem().WriteAtomically(dir.Join("ckpt/sub/meta.json"), "{}");
  Store()->LogArtifact("r1", dir.Join("ckpt"), "checkpoints");
  for (const auto& [name, value] : env) ::unsetenv(name.c_str());
  EXPECT_EQ(UriFileSystem().ReadFile(root + "/checkpoints/weights.bin"), binary);
  EXPECT_EQ(UriFileSystem().ReadFile(root + "/checkpoints/sub/meta.json"), "{}");
  for (const auto& r : server_.requests_to("")) EXPECT_NE(r.method, "PUT") << r.path;  // nothing via the server
}

// MLflow 3: create the LoggedModel, upload the model to its own location, mark it READY, record the run's output.
TEST_F(RestStoreTest, CreatesAnMlflow3LoggedModel) {
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    if (r.path.find("runs/get") != std::string::npos) {
      return {200, R"({"run":{"info":{"run_id":"r1","experiment_id":"3",)"
                   R"("artifact_uri":"mlflow-artifacts:/3/r1/artifacts"}}})"};
    }
    if (r.method == "POST" && r.path == "/api/2.0/mlflow/logged-models") {
      return {200, R"({"model":{"info":{"model_id":"m-0f1e","experiment_id":"3",)"
                   R"("artifact_uri":"mlflow-artifacts:/3/models/m-0f1e/artifacts","status":"LOGGED_MODEL_PENDING"}}})"};
    }
    return {200, "{}"};
  });
  lakerun::testing::TempDir dir;
  LocalFileSystem().CreateDirs(dir.Join("model/data"));
  LocalFileSystem().WriteAtomically(dir.Join("model/MLmodel"), "flavors: {}\n");
  LocalFileSystem().WriteAtomically(dir.Join("model/data/model.pth"), "weights");
  EXPECT_EQ(Store()->LogLoggedModel("r1", "model", dir.Join("model"), 7), "m-0f1e");
  const auto created = server_.requests_to("/logged-models");
  ASSERT_EQ(created.size(), 1u);
  const json request = json::parse(created[0].body);
  EXPECT_EQ(request["experiment_id"], "3");
  EXPECT_EQ(request["name"], "model");
  EXPECT_EQ(request["source_run_id"], "r1");
  std::map<std::string, std::string> uploaded;
  for (const auto& r : server_.requests_to("")) {
    if (r.method == "PUT") uploaded[r.path] = r.body;
  }
  const std::string base = "/api/2.0/mlflow-artifacts/artifacts/3/models/m-0f1e/artifacts/";
  EXPECT_EQ(uploaded.at(base + "MLmodel"), "flavors: {}\n");
  EXPECT_EQ(uploaded.at(base + "data/model.pth"), "weights");
  const auto ready = server_.requests_to("/logged-models/m-0f1e");
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].method, "PATCH");
  EXPECT_EQ(json::parse(ready[0].body)["status"], "LOGGED_MODEL_READY");
  const auto outputs = server_.requests_to("/runs/outputs");
  ASSERT_EQ(outputs.size(), 1u);
  const json output = json::parse(outputs[0].body);
  EXPECT_EQ(output["run_id"], "r1");
  EXPECT_EQ(output["models"][0]["model_id"], "m-0f1e");
  EXPECT_EQ(output["models"][0]["step"], 7);
}

// An MLflow 2 server has no logged models: nothing more is sent, now or for later models.
TEST_F(RestStoreTest, AnMlflow2ServerGetsNoLoggedModel) {
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    if (r.path.find("runs/get") != std::string::npos) {
      return {200, R"({"run":{"info":{"run_id":"r1","experiment_id":"3"}}})"};
    }
    if (r.path.find("logged-models") != std::string::npos) return {404, "Not Found"};
    return {200, "{}"};
  });
  lakerun::testing::TempDir dir;
  LocalFileSystem().WriteAtomically(dir.Join("MLmodel"), "flavors: {}\n");
  auto store = Store();
  EXPECT_EQ(store->LogLoggedModel("r1", "model", dir.path(), 0), std::nullopt);
  EXPECT_EQ(store->LogLoggedModel("r1", "model", dir.path(), 0), std::nullopt);
  EXPECT_EQ(server_.requests_to("/logged-models").size(), 1u);
  for (const auto& r : server_.requests_to("")) EXPECT_NE(r.method, "PUT") << r.path;
}

TEST_F(RestStoreTest, RecordsALoggedModelWithRunsLogModel) {
  const std::string entry = R"({"run_id": "abc", "artifact_path": "model", "utc_time_created": "t", "flavors": {}})";
  Store()->RecordLoggedModel("abc", entry);
  const auto calls = server_.requests_to("/runs/log-model");
  ASSERT_EQ(calls.size(), 1u);
  const json body = json::parse(calls[0].body);
  EXPECT_EQ(body["run_id"], "abc");
  EXPECT_EQ(body["model_json"], entry);  // a string: the server parses it and appends it to the run's history
}

TEST_F(RestStoreTest, PagesSearchAndReadsNonFiniteValues) {
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    const json body = json::parse(r.body);
    if (!body.contains("page_token")) {
      return {200, R"({"runs":[{"info":{"run_id":"a","status":"FINISHED","start_time":2},
                      "data":{"metrics":[{"key":"m","value":"-Infinity","timestamp":1,"step":3}]}}],
                      "next_page_token":"p2"})"};
    }
    return {200, R"({"runs":[{"info":{"run_id":"b","status":"KILLED","start_time":1},
                    "data":{"tags":[{"key":"mlflow.runName","value":"bee"}]}}]})"};
  });
  const auto runs = Store()->SearchRuns({"1", "2"});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].latest_metrics.at("m").value, -INFINITY);
  EXPECT_EQ(runs[1].info.status, RunStatus::kKilled);
  EXPECT_EQ(runs[1].info.run_name, "bee");
  const json first = json::parse(server_.requests()[0].body);
  EXPECT_EQ(first["experiment_ids"], json({"1", "2"}));
  EXPECT_EQ(json::parse(server_.requests()[1].body)["page_token"], "p2");
}

TEST_F(RestStoreTest, SearchesRunsByTagWithMlflowsFilter) {
  server_.set_handler([](const RecordedRequest&) -> CannedResponse {
    // Both runs come back, as from a server that ignored the filter: the client keeps the one that matches.
    return {200, R"({"runs":[{"info":{"run_id":"a","status":"RUNNING","start_time":2},
                    "data":{"tags":[{"key":"lakerun.job_id","value":"0a1b"}]}},
                   {"info":{"run_id":"b","status":"FINISHED","start_time":1},
                    "data":{"tags":[{"key":"lakerun.job_id","value":"ffff"}]}}]})"};
  });
  const auto runs = Store()->SearchRunsByTag("7", "lakerun.job_id", "0a1b");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].info.run_id, "a");
  const json first = json::parse(server_.requests()[0].body);
  EXPECT_EQ(first["experiment_ids"], json({"7"}));
  EXPECT_EQ(first["filter"], "tags.`lakerun.job_id` = '0a1b'");
  // A value the filter cannot quote is matched by the client alone.
  EXPECT_TRUE(Store()->SearchRunsByTag("7", "lakerun.job_id", "it's").empty());
  EXPECT_FALSE(json::parse(server_.requests()[1].body).contains("filter"));
}

TEST_F(RestStoreTest, MalformedResponsesAreCorruptDataErrors) {
  server_.set_handler([](const RecordedRequest&) { return CannedResponse{200, R"({"run": [1, 2]})"}; });
  EXPECT_THROW_WITH(Store()->GetRun("r1"), CorruptDataError, "runs/get", "malformed");
  server_.set_handler([](const RecordedRequest&) { return CannedResponse{200, "not json"}; });
  EXPECT_THROW_WITH(Store()->SearchRuns({"1"}), CorruptDataError, "runs/search", "not JSON");
}

TEST_F(RestStoreTest, RunsCommandsReadFromAServer) {
  server_.set_handler([](const RecordedRequest& r) -> CannedResponse {
    if (r.path.find("experiments/search") != std::string::npos) {
      return {200, R"({"experiments":[{"experiment_id":"4","name":"resnet","lifecycle_stage":"active"}]})"};
    }
    if (r.path.find("runs/search") != std::string::npos) {
      return {200, R"({"runs":[{"info":{"run_id":"0123456789abcdef0123456789abcdef","experiment_id":"4",
                      "run_name":"lr3","status":"FINISHED","start_time":1795336210725,"end_time":1795336275725},
                      "data":{"params":[{"key":"lr","value":"0.001"}],
                              "metrics":[{"key":"loss","value":0.25,"timestamp":1,"step":9}]}}]})"};
    }
    if (r.path.find("runs/get") != std::string::npos) {
      return {200, R"({"run":{"info":{"run_id":"0123456789abcdef0123456789abcdef","run_name":"lr3",
                      "status":"FINISHED","start_time":1795336210725},
                      "data":{"metrics":[{"key":"loss","value":0.25,"timestamp":1,"step":9}]}}})"};
    }
    if (r.path.find("get-history") != std::string::npos) {
      return {200, R"({"metrics":[{"key":"loss","value":1.0,"timestamp":1,"step":0},
                                  {"key":"loss","value":0.25,"timestamp":2,"step":9}]})"};
    }
    return {404, R"({"error_code":"RESOURCE_DOES_NOT_EXIST"})"};
  });
  std::ostringstream list;
  EXPECT_EQ(RunsListMain({"--tracking-uri", server_.url()}, list), 0);
  EXPECT_THAT(list.str(), ::testing::HasSubstr("Experiment resnet (4): 1 run"));
  EXPECT_THAT(list.str(), ::testing::HasSubstr("lr3       01234567  FINISHED  "));
  EXPECT_THAT(list.str(), ::testing::HasSubstr("1m 05s"));
  EXPECT_THAT(list.str(), ::testing::HasSubstr("lr=0.001"));
  EXPECT_THAT(list.str(), ::testing::HasSubstr("loss=0.25"));
  std::ostringstream show;
  EXPECT_EQ(RunsShowMain({"0123456789abcdef0123456789abcdef", "--tracking-uri", server_.url()}, show), 0);
  EXPECT_THAT(show.str(), ::testing::HasSubstr("loss  0.25  step 9  2 pts  min 0.25  max 1"));
}

}  // namespace
}  // namespace lakerun::track
