// MLflow model directories: the MLmodel file and its environment files (torch-free; the tensors and archives come
// from track_torch, see torch_model.h).
//
// A lakerun model directory:
//   MLmodel                      flavors: lakerun (always), pytorch + python_function (TorchScript models only)
//   data/model.safetensors       weights (lakerun flavor)
//   data/model.pt                libtorch archive of the module (lakerun flavor; TorchScript: data/model.pth)
//   data/model.pth               TorchScript archive (pytorch flavor: mlflow.pytorch.load_model reads it)
//   data/pickle_module_info.txt  "mlflow.pytorch.pickle_module" (pytorch flavor)
//   conda.yaml, python_env.yaml, requirements.txt
#pragma once

#include <cstdint>
#include <string>

namespace lakerun {
class FileSystem;
}

namespace lakerun::track {

struct MLmodelSpec {
  std::string artifact_path = "model";
  std::string run_id;
  std::string model_uuid;          ///< empty: a new uuid4 hex
  std::string utc_time_created;    ///< empty: now, as "YYYY-MM-DD HH:MM:SS.ffffff"
  int64_t model_size_bytes = -1;   ///< < 0: omitted
  std::string torch_version = "1.13.1";
  std::string mlflow_version = "2.17.2";
  std::string python_version = "3.11.2";
  /// TorchScript model: also the pytorch and python_function flavors, over data/model.pth.
  bool torchscript = false;
  std::string safetensors_path = "data/model.safetensors";
  std::string archive_path = "data/model.pt";
};

/// The MLmodel YAML, keys sorted as PyYAML writes them.
std::string FormatMLmodel(const MLmodelSpec& spec);

/// Writes MLmodel, conda.yaml, python_env.yaml, requirements.txt (and data/pickle_module_info.txt for TorchScript)
/// into `dir`, creating it. The data files are the caller's.
void WriteModelMetadataFiles(FileSystem& fs, const std::string& dir, const MLmodelSpec& spec);

}  // namespace lakerun::track
