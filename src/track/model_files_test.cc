// Torch-free parts of model logging: the safetensors format and the MLmodel file.
#include <cstring>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/track/mlmodel.h"
#include "lakerun/track/safetensors.h"
#include "lakerun_testing/matchers.h"
#include "track/yaml.h"

namespace lakerun::track {
namespace {

TEST(SafetensorsTest, EncodesHeaderLengthJsonAndRawData) {
  const float w[6] = {1, 2, 3, 4, 5, 6};
  const int64_t step[1] = {42};
  const std::string bytes = EncodeSafetensors({{"w", "F32", {2, 3}, w, sizeof(w)}, {"a.step", "I64", {1}, step, 8}},
                                              {{"format", "pt"}});
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);  // little-endian host
  EXPECT_EQ((8 + n) % 8, 0u);
  const std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(' ') + 1),
            R"({"__metadata__":{"format":"pt"},"a.step":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
            R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[8,32]}})");
  EXPECT_EQ(bytes.size(), 8 + n + 32);
  const SafetensorsFile parsed = ParseSafetensors(bytes, "model.safetensors");
  EXPECT_EQ(parsed.metadata.at("format"), "pt");
  const auto& e = parsed.tensors.at("w");
  EXPECT_EQ(e.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(bytes.data() + e.begin, w, sizeof(w)), 0);
  int64_t read_step = 0;
  std::memcpy(&read_step, bytes.data() + parsed.tensors.at("a.step").begin, 8);
  EXPECT_EQ(read_step, 42);
}

TEST(SafetensorsTest, RejectsInconsistentTensorsAndCorruptFiles) {
  const float w[2] = {1, 2};
  EXPECT_THROW_WITH(EncodeSafetensors({{"w", "F32", {3}, w, sizeof(w)}}), InvalidArgument, "'w'", "8 bytes", "12");
  EXPECT_THROW_WITH(EncodeSafetensors({{"w", "F128", {2}, w, sizeof(w)}}), InvalidArgument, "'F128'");
  EXPECT_THROW_WITH(EncodeSafetensors({{"w", "F32", {2}, w, 8}, {"w", "F32", {2}, w, 8}}), InvalidArgument,
                    "appears twice");
  std::string bytes = EncodeSafetensors({{"w", "F32", {2}, w, sizeof(w)}});
  EXPECT_THROW_WITH(ParseSafetensors(bytes.substr(0, bytes.size() - 1), "m.st"), CorruptDataError, "m.st",
                    "'w' ends past the end");
  EXPECT_THROW_WITH(ParseSafetensors("\xff\xff\xff\xff\xff\xff\xff\x7f{}", "m.st"), CorruptDataError,
                    "header length");
  EXPECT_THROW_WITH(ParseSafetensors(std::string("\x02\0\0\0\0\0\0\0{x", 10), "m.st"), CorruptDataError,
                    "not JSON");
}

TEST(MLmodelTest, TorchScriptModelsCarryThePytorchFlavor) {
  MLmodelSpec spec;
  spec.run_id = "0cde1e1d213549d19200307b3f387c17";
  spec.model_uuid = "3e26665dcd754f15ba5adaee4f381411";
  spec.utc_time_created = "2026-11-22 08:33:52.239386";
  spec.model_size_bytes = 2543;
  spec.torchscript = true;
  EXPECT_EQ(FormatMLmodel(spec),
            "artifact_path: model\n"
            "flavors:\n"
            "  lakerun:\n"
            "    archive: data/model.pth\n"
            "    archive_format: torchscript\n"
            "    data: data\n"
            "    lakerun_version: 0.1.0\n"
            "    safetensors: data/model.safetensors\n"
            "    torch_version: 1.13.1\n"
            "  python_function:\n"
            "    config:\n"
            "      device: null\n"
            "    data: data\n"
            "    env:\n"
            "      conda: conda.yaml\n"
            "      virtualenv: python_env.yaml\n"
            "    loader_module: mlflow.pytorch\n"
            "    pickle_module_name: mlflow.pytorch.pickle_module\n"
            "    python_version: 3.11.2\n"
            "  pytorch:\n"
            "    code: null\n"
            "    model_data: data\n"
            "    pytorch_version: 1.13.1\n"
            "mlflow_version: 2.17.2\n"
            "model_size_bytes: 2543\n"
            "model_uuid: 3e26665dcd754f15ba5adaee4f381411\n"
            "run_id: 0cde1e1d213549d19200307b3f387c17\n"
            "utc_time_created: '2026-11-22 08:33:52.239386'\n");
  spec.torchscript = false;
  const std::string plain = FormatMLmodel(spec);
  EXPECT_EQ(plain.find("pytorch:"), std::string::npos);
  EXPECT_NE(plain.find("    archive: data/model.pt\n    archive_format: libtorch\n"), std::string::npos);
}

// The entry as MLflow writes it: json.dumps(Model.get_tags_dict()) for the MLmodel above (keys run_id, artifact_path,
// utc_time_created, model_uuid, then flavors without their "config"), printed by Python 3.
TEST(MLmodelTest, TheLogModelHistoryEntryIsMlflowsJson) {
  MLmodelSpec spec;
  spec.run_id = "0cde1e1d213549d19200307b3f387c17";
  spec.model_uuid = "3e26665dcd754f15ba5adaee4f381411";
  spec.utc_time_created = "2026-11-22 08:33:52.239386";
  spec.model_size_bytes = 2543;
  spec.torchscript = true;
  EXPECT_EQ(FormatLogModelHistoryEntry(spec),
            R"({"run_id": "0cde1e1d213549d19200307b3f387c17", "artifact_path": "model", )"
            R"("utc_time_created": "2026-11-22 08:33:52.239386", "model_uuid": "3e26665dcd754f15ba5adaee4f381411", )"
            R"("flavors": {"lakerun": {"archive": "data/model.pth", "archive_format": "torchscript", "data": "data", )"
            R"("lakerun_version": "0.1.0", "safetensors": "data/model.safetensors", "torch_version": "1.13.1"}, )"
            R"("python_function": {"data": "data", "env": {"conda": "conda.yaml", "virtualenv": "python_env.yaml"}, )"
            R"("loader_module": "mlflow.pytorch", "pickle_module_name": "mlflow.pytorch.pickle_module", )"
            R"("python_version": "3.11.2"}, "pytorch": {"code": null, "model_data": "data", "pytorch_version": )"
            R"("1.13.1"}}})");
  // Python's escaping (ensure_ascii): json.dumps('models/"best" é😀\n\x01').
  spec.artifact_path = "models/\"best\" \xc3\xa9\xf0\x9f\x98\x80\n\x01";
  spec.torchscript = false;
  EXPECT_THAT(FormatLogModelHistoryEntry(spec),
              ::testing::HasSubstr(R"("artifact_path": "models/\"best\" \u00e9\ud83d\ude00\n\u0001", )"));
  spec.model_uuid.clear();  // the entry must name the model its MLmodel names
  EXPECT_THROW_WITH(FormatLogModelHistoryEntry(spec), InvalidArgument, "ResolveMLmodelSpec");
  const MLmodelSpec resolved = ResolveMLmodelSpec(spec);
  EXPECT_EQ(resolved.model_uuid.size(), 32u);
  EXPECT_EQ(resolved.utc_time_created, spec.utc_time_created);  // set already: kept
}

TEST(MLmodelTest, WritesEnvironmentFiles) {
  auto fs = NewMemoryFileSystem();
  MLmodelSpec spec;
  spec.torchscript = true;
  WriteModelMetadataFiles(*fs, "/m", spec);
  EXPECT_EQ(fs->ReadFile("/m/data/pickle_module_info.txt"), "mlflow.pytorch.pickle_module");
  EXPECT_EQ(fs->ReadFile("/m/requirements.txt"), "mlflow==2.17.2\ntorch==1.13.1\n");
  EXPECT_NE(fs->ReadFile("/m/conda.yaml").find("  - torch==1.13.1\n"), std::string::npos);
  const auto top = ParseFlatYaml(fs->ReadFile("/m/MLmodel"), "MLmodel");
  EXPECT_EQ(top.at("artifact_path").text, "model");
  EXPECT_EQ(top.at("model_uuid").text.size(), 32u);
}

}  // namespace
}  // namespace lakerun::track
