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

/// The run tag listing the models logged to a run, a JSON list with one entry per model (FormatLogModelHistoryEntry),
/// as MLflow 2.x's Model.log records it; the MLflow UI finds a run's models through it.
inline constexpr const char* kLogModelHistoryTag = "mlflow.log-model.history";

/// `spec` with an empty model_uuid (a new uuid4 hex) and utc_time_created (now) filled in, so that the MLmodel file
/// and the run's log-model history can name the same model.
MLmodelSpec ResolveMLmodelSpec(MLmodelSpec spec);

/// The MLmodel YAML, keys sorted as PyYAML writes them. An empty model_uuid or utc_time_created is made up
/// (ResolveMLmodelSpec).
std::string FormatMLmodel(const MLmodelSpec& spec);

/// One entry of kLogModelHistoryTag, exactly as MLflow writes json.dumps(Model.get_tags_dict()): the keys run_id,
/// artifact_path, utc_time_created, model_uuid in that order, then flavors, each as in the MLmodel file but without
/// its "config"; separators ", " and ": ", non-ASCII characters escaped (\uXXXX). InvalidArgument unless the spec's
/// model_uuid and utc_time_created are set (ResolveMLmodelSpec): the entry must name the model MLmodel describes.
std::string FormatLogModelHistoryEntry(const MLmodelSpec& spec);

/// Writes MLmodel, conda.yaml, python_env.yaml, requirements.txt (and data/pickle_module_info.txt for TorchScript)
/// into `dir`, creating it. The data files are the caller's.
void WriteModelMetadataFiles(FileSystem& fs, const std::string& dir, const MLmodelSpec& spec);

}  // namespace lakerun::track
