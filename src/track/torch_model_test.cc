// Model logging with libtorch: the model directory, safetensors weights that match the module, archives that load
// back, logging into a run, and registration.
#include "lakerun/track/torch_model.h"

#include <cstdlib>
#include <cstring>

#include <torch/csrc/jit/serialization/import.h>
#include <torch/serialize/input-archive.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "lakerun/base/file_system.h"
#include "lakerun/track/mlmodel.h"
#include "lakerun/track/safetensors.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::track {
namespace {

struct NetImpl : torch::nn::Module {
  NetImpl() {
    fc = register_module("fc", torch::nn::Linear(4, 3));
    bn = register_module("bn", torch::nn::BatchNorm1d(3));
  }
  torch::Tensor forward(const torch::Tensor& x) { return bn->forward(fc->forward(x)); }
  torch::nn::Linear fc{nullptr};
  torch::nn::BatchNorm1d bn{nullptr};
};
TORCH_MODULE(Net);

torch::jit::Module Scripted() {
  torch::jit::Module m("Scale");
  m.register_parameter("w", torch::tensor({2.0f, 3.0f}), false);
  m.define("def forward(self, x):\n  return x * self.w\n");
  return m;
}

void ExpectSafetensorsMatch(const std::string& path, const std::string& name, const at::Tensor& tensor) {
  const std::string bytes = LocalFileSystem().ReadFile(path);
  const SafetensorsFile file = ParseSafetensors(bytes, path);
  ASSERT_TRUE(file.tensors.count(name)) << name;
  const auto& e = file.tensors.at(name);
  const at::Tensor t = tensor.detach().contiguous();
  EXPECT_EQ(e.shape, t.sizes().vec()) << name;
  ASSERT_EQ(e.end - e.begin, static_cast<uint64_t>(t.numel() * t.element_size())) << name;
  EXPECT_EQ(std::memcmp(bytes.data() + e.begin, t.data_ptr(), e.end - e.begin), 0) << name;
}

TEST(TorchModelTest, SavesSafetensorsAndALibtorchArchive) {
  lakerun::testing::TempDir dir;
  torch::manual_seed(0);
  Net net;
  SaveModel(*net, dir.Join("model"), "run1");
  const std::string st = dir.Join("model/data/model.safetensors");
  ExpectSafetensorsMatch(st, "fc.weight", net->fc->weight);
  ExpectSafetensorsMatch(st, "fc.bias", net->fc->bias);
  ExpectSafetensorsMatch(st, "bn.running_mean", net->bn->running_mean);
  EXPECT_EQ(ParseSafetensors(LocalFileSystem().ReadFile(st), st).tensors.at("bn.num_batches_tracked").dtype, "I64");

  Net loaded;
  torch::serialize::InputArchive archive;
  archive.load_from(dir.Join("model/data/model.pt"));
  loaded->load(archive);
  EXPECT_TRUE(torch::equal(loaded->fc->weight, net->fc->weight));
  const std::string mlmodel = LocalFileSystem().ReadFile(dir.Join("model/MLmodel"));
  EXPECT_NE(mlmodel.find("run_id: run1\n"), std::string::npos);
  EXPECT_EQ(mlmodel.find("pytorch:"), std::string::npos);
}

// A tensor of an archive by its dotted name ("fc.weight"): as stored, with its requires_grad flag.
at::Tensor ReadArchived(const std::string& path, const std::string& dotted) {
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  std::string rest = dotted;
  for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1)) {
    torch::serialize::InputArchive child;
    archive.read(rest.substr(0, dot), child);
    archive = std::move(child);
  }
  at::Tensor t;
  archive.read(rest, t);
  return t;
}

// The archive SaveModel writes for a module on a GPU holds what Module::save writes (checked here on the CPU): every
// parameter and buffer, with its requires_grad flag, and it loads back into the module.
TEST(TorchModelTest, CpuCopyArchiveHoldsWhatTheModulesOwnArchiveHolds) {
  lakerun::testing::TempDir dir;
  torch::manual_seed(1);
  Net net;
  net->fc->bias.set_requires_grad(false);
  net->train();
  net->forward(torch::randn({5, 4}));  // moves the batch norm's running statistics and counter off their defaults
  torch::serialize::OutputArchive own, copied;
  net->save(own);
  SaveModuleOnCpu(*net, copied);
  own.save_to(dir.Join("own.pt"));
  copied.save_to(dir.Join("copied.pt"));

  auto expect_same = [&](const std::string& name, const at::Tensor& want) {
    const at::Tensor mine = ReadArchived(dir.Join("copied.pt"), name);
    const at::Tensor theirs = ReadArchived(dir.Join("own.pt"), name);
    EXPECT_TRUE(torch::equal(mine, want)) << name;
    EXPECT_TRUE(torch::equal(theirs, want)) << name;
    EXPECT_EQ(mine.requires_grad(), want.requires_grad()) << name;
    EXPECT_EQ(mine.requires_grad(), theirs.requires_grad()) << name;
  };
  for (const auto& item : net->named_parameters()) expect_same(item.key(), item.value());
  for (const auto& item : net->named_buffers()) expect_same(item.key(), item.value());
  EXPECT_FALSE(ReadArchived(dir.Join("copied.pt"), "fc.bias").requires_grad());

  Net loaded;
  torch::serialize::InputArchive archive;
  archive.load_from(dir.Join("copied.pt"));
  loaded->load(archive);
  for (const auto& item : net->named_parameters()) {
    EXPECT_TRUE(torch::equal(loaded->named_parameters()[item.key()], item.value())) << item.key();
  }
  for (const auto& item : net->named_buffers()) {
    EXPECT_TRUE(torch::equal(loaded->named_buffers()[item.key()], item.value())) << item.key();
  }
}

TEST(TorchModelTest, ModelsOnAGpuAreSavedAsCpuTensorsAndStayOnTheGpu) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  lakerun::testing::TempDir dir;
  torch::manual_seed(2);
  Net net;
  net->to(torch::Device(torch::kCUDA, 0));
  net->train();
  net->forward(torch::randn({5, 4}, torch::Device(torch::kCUDA, 0)));
  SaveModel(*net, dir.Join("model"), "run1");
  EXPECT_TRUE(net->fc->weight.is_cuda());  // the user's module is left where it was

  const std::string st = dir.Join("model/data/model.safetensors");
  ExpectSafetensorsMatch(st, "fc.weight", net->fc->weight.cpu());
  ExpectSafetensorsMatch(st, "bn.running_var", net->bn->running_var.cpu());
  // The archive loads on a machine without a GPU: every tensor in it is a CPU tensor.
  for (const char* name : {"fc.weight", "fc.bias", "bn.running_mean", "bn.num_batches_tracked"}) {
    const at::Tensor t = ReadArchived(dir.Join("model/data/model.pt"), name);
    EXPECT_TRUE(t.device().is_cpu()) << name;
  }
  Net loaded;
  torch::serialize::InputArchive archive;
  archive.load_from(dir.Join("model/data/model.pt"));
  loaded->load(archive);
  EXPECT_TRUE(torch::equal(loaded->fc->weight, net->fc->weight.cpu()));
  EXPECT_TRUE(torch::equal(loaded->bn->running_mean, net->bn->running_mean.cpu()));

  torch::jit::Module scripted = Scripted();
  scripted.to(torch::Device(torch::kCUDA, 0));
  SaveModel(scripted, dir.Join("scripted"), "run1");
  torch::jit::Module back = torch::jit::load(dir.Join("scripted/data/model.pth"));
  for (const auto& p : back.parameters()) EXPECT_TRUE(p.device().is_cpu());
  for (const auto& p : scripted.parameters()) EXPECT_TRUE(p.is_cuda());
}

TEST(TorchModelTest, TorchScriptModelsGetThePytorchFlavor) {
  lakerun::testing::TempDir dir;
  torch::jit::Module m = Scripted();
  SaveModel(m, dir.Join("model"));
  ExpectSafetensorsMatch(dir.Join("model/data/model.safetensors"), "w", torch::tensor({2.0f, 3.0f}));
  torch::jit::Module loaded = torch::jit::load(dir.Join("model/data/model.pth"));
  const at::Tensor out = loaded.forward({torch::ones({2})}).toTensor();
  EXPECT_TRUE(torch::equal(out, torch::tensor({2.0f, 3.0f})));
  const std::string mlmodel = LocalFileSystem().ReadFile(dir.Join("model/MLmodel"));
  EXPECT_NE(mlmodel.find("  pytorch:\n    code: null\n    model_data: data\n"), std::string::npos);
  EXPECT_TRUE(LocalFileSystem().Exists(dir.Join("model/data/pickle_module_info.txt")));
}

TEST(TorchModelTest, PythonTorchLoadsTheTorchScriptArchiveAsMlflowDoes) {
  const char* python = std::getenv("LAKERUN_PYTHON");
  const std::string py = python && *python ? python : "/usr/bin/python3";
  if (!LocalFileSystem().Exists(py)) GTEST_SKIP() << py << " not found";
  lakerun::testing::TempDir dir;
  SaveModel(Scripted(), dir.Join("model"));
  // mlflow.pytorch.load_model(uri, **kwargs) ends in torch.load(data/model.pth, **kwargs); do the same. PyTorch 2.6
  // made weights_only=True torch.load's default, which refuses every TorchScript archive (and MLflow's own pickled
  // models), so MLflow users there pass weights_only=False; PyTorch 1.13 takes it too.
  const std::string cmd = "timeout 120 " + py + " -c \"import torch; m = torch.load('" +
                          dir.Join("model/data/model.pth") +
                          "', weights_only=False); assert m(torch.ones(2)).tolist() == [2.0, 3.0]\" 2>/dev/null";
  const int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 1 && !LocalFileSystem().Exists("/usr/lib/python3/dist-packages/torch")) {
    GTEST_SKIP() << "python3-torch is not installed";
  }
  EXPECT_EQ(rc, 0) << cmd;
}

TEST(TorchModelTest, LogModelStoresTheDirectoryAndRegistersAVersion) {
  lakerun::testing::TempDir dir;
  TrackerOptions options;
  options.handle_signals = false;
  Tracker tracker(dir.Join("mlruns"), options);
  track::Run run = tracker.StartRun();
  Net net;
  LogModelOptions log;
  log.registered_model_name = "tiny-net";
  const auto version = LogModel(tracker, run, *net, log);
  ASSERT_TRUE(version.has_value());
  EXPECT_EQ(version->version, 1);
  const RunRecord record = tracker.store().GetRun(run.run_id());
  const std::string artifacts = record.info.artifact_uri.substr(7);
  EXPECT_TRUE(LocalFileSystem().Exists(artifacts + "/model/MLmodel"));
  EXPECT_TRUE(LocalFileSystem().Exists(artifacts + "/model/data/model.safetensors"));
  EXPECT_TRUE(LocalFileSystem().Exists(artifacts + "/model/data/model.pt"));
  EXPECT_EQ(version->source, record.info.artifact_uri + "/model");
  const std::string meta = LocalFileSystem().ReadFile(dir.Join("mlruns/models/tiny-net/version-1/meta.yaml"));
  EXPECT_NE(meta.find("run_id: " + run.run_id() + "\n"), std::string::npos);
  EXPECT_NE(meta.find("source: " + record.info.artifact_uri + "/model\n"), std::string::npos);
  run.End();
}

// The run lists every model logged to it in mlflow.log-model.history, each entry naming the model its MLmodel file
// describes (uuid, time, path), as MLflow's Model.log records them.
TEST(TorchModelTest, LogModelAppendsToTheRunsLogModelHistory) {
  lakerun::testing::TempDir dir;
  TrackerOptions options;
  options.handle_signals = false;
  Tracker tracker(dir.Join("mlruns"), options);
  track::Run run = tracker.StartRun();
  Net net;
  LogModel(tracker, run, *net);
  LogModelOptions best;
  best.artifact_path = "checkpoints/best";
  LogModel(tracker, run, *net, best);
  const RunRecord record = tracker.store().GetRun(run.run_id());
  const auto history = nlohmann::json::parse(record.tags.at(kLogModelHistoryTag));
  ASSERT_TRUE(history.is_array());
  ASSERT_EQ(history.size(), 2u);
  const std::string artifacts = record.info.artifact_uri.substr(7);
  // MLflow's order of the keys (which nlohmann's objects, sorted, do not keep).
  EXPECT_THAT(record.tags.at(kLogModelHistoryTag),
              ::testing::StartsWith(R"([{"run_id": ")" + run.run_id() +
                                    R"(", "artifact_path": "model", "utc_time_created": ")"));
  const char* paths[] = {"model", "checkpoints/best"};
  for (size_t i = 0; i < 2; ++i) {
    const std::string mlmodel = LocalFileSystem().ReadFile(artifacts + "/" + paths[i] + "/MLmodel");
    const auto& entry = history[i];
    EXPECT_EQ(entry["run_id"], run.run_id());
    EXPECT_EQ(entry["artifact_path"], paths[i]);
    EXPECT_NE(mlmodel.find("artifact_path: " + std::string(paths[i]) + "\n"), std::string::npos) << mlmodel;
    EXPECT_NE(mlmodel.find("model_uuid: " + entry["model_uuid"].get<std::string>() + "\n"), std::string::npos);
    EXPECT_NE(mlmodel.find("utc_time_created: '" + entry["utc_time_created"].get<std::string>() + "'\n"),
              std::string::npos);
    EXPECT_EQ(entry["flavors"]["lakerun"]["archive_format"], "libtorch");
  }
  run.End();
}

}  // namespace
}  // namespace lakerun::track
