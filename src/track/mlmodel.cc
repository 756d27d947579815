#include "lakerun/track/mlmodel.h"

#include <sys/time.h>

#include <cstdio>
#include <ctime>

#include "lakerun/base/file_system.h"
#include "track/ids.h"
#include "track/yaml.h"

namespace lakerun::track {
namespace {

std::string NowUtc() {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  std::tm tm{};
  const std::time_t seconds = tv.tv_sec;
  gmtime_r(&seconds, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d.%06ld", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long>(tv.tv_usec));
  return buf;
}

std::string Line(int indent, const std::string& key, const std::string& value) {
  return std::string(static_cast<size_t>(indent), ' ') + key + ": " + value + "\n";
}

std::string S(const std::string& s) { return EmitYamlString(s); }

}  // namespace

std::string FormatMLmodel(const MLmodelSpec& spec) {
  std::string out;
  out += Line(0, "artifact_path", S(spec.artifact_path));
  out += "flavors:\n";
  out += "  lakerun:\n";
  out += Line(4, "archive", S(spec.torchscript ? "data/model.pth" : spec.archive_path));
  out += Line(4, "archive_format", spec.torchscript ? "torchscript" : "libtorch");
  out += Line(4, "data", "data");
  out += Line(4, "lakerun_version", S("0.1.0"));
  out += Line(4, "safetensors", S(spec.safetensors_path));
  out += Line(4, "torch_version", S(spec.torch_version));
  if (spec.torchscript) {
    out += "  python_function:\n";
    out += "    config:\n";
    out += Line(6, "device", "null");
    out += Line(4, "data", "data");
    out += "    env:\n";
    out += Line(6, "conda", "conda.yaml");
    out += Line(6, "virtualenv", "python_env.yaml");
    out += Line(4, "loader_module", "mlflow.pytorch");
    out += Line(4, "pickle_module_name", "mlflow.pytorch.pickle_module");
    out += Line(4, "python_version", S(spec.python_version));
    out += "  pytorch:\n";
    out += Line(4, "code", "null");
    out += Line(4, "model_data", "data");
    out += Line(4, "pytorch_version", S(spec.torch_version));
  }
  out += Line(0, "mlflow_version", S(spec.mlflow_version));
  if (spec.model_size_bytes >= 0) out += Line(0, "model_size_bytes", std::to_string(spec.model_size_bytes));
  out += Line(0, "model_uuid", S(spec.model_uuid.empty() ? NewUuidHex() : spec.model_uuid));
  if (!spec.run_id.empty()) out += Line(0, "run_id", S(spec.run_id));
  out += Line(0, "utc_time_created", S(spec.utc_time_created.empty() ? NowUtc() : spec.utc_time_created));
  return out;
}

void WriteModelMetadataFiles(FileSystem& fs, const std::string& dir, const MLmodelSpec& spec) {
  fs.CreateDirs(JoinPath(dir, "data"));
  fs.WriteAtomically(JoinPath(dir, "MLmodel"), FormatMLmodel(spec));
  fs.WriteAtomically(JoinPath(dir, "conda.yaml"),
                     "channels:\n- conda-forge\ndependencies:\n- python=" + spec.python_version +
                         "\n- pip<=24.0\n- pip:\n  - mlflow==" + spec.mlflow_version +
                         "\n  - torch==" + spec.torch_version + "\nname: mlflow-env\n");
  fs.WriteAtomically(JoinPath(dir, "python_env.yaml"),
                     "python: " + spec.python_version +
                         "\nbuild_dependencies:\n- pip\ndependencies:\n- -r requirements.txt\n");
  fs.WriteAtomically(JoinPath(dir, "requirements.txt"),
                     "mlflow==" + spec.mlflow_version + "\ntorch==" + spec.torch_version + "\n");
  if (spec.torchscript) {
    fs.WriteAtomically(JoinPath(dir, "data/pickle_module_info.txt"), "mlflow.pytorch.pickle_module");
  }
}

}  // namespace lakerun::track
