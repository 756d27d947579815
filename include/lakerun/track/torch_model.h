// Logging libtorch models to a run (library track_torch; the core track library has no torch).
//
//   lakerun::track::LogModel(tracker, run, *net);                       // torch::nn::Module: lakerun flavor
//   LogModelOptions options;
//   options.registered_model_name = "resnet";                          // also a new registry version
//   lakerun::track::LogModel(tracker, run, scripted, options);          // torch::jit::Module: + pytorch flavor
//
// The model directory (see mlmodel.h) holds the weights as safetensors (parameters and buffers by their dotted
// names), the libtorch archive (torch::serialize of the module, or the TorchScript archive), and an MLmodel whose
// `lakerun` flavor names both. A TorchScript module is also saved as data/model.pth under the `pytorch` and
// `python_function` flavors, which mlflow.pytorch.load_model and mlflow.pyfunc load. Every file holds CPU tensors,
// whatever device the module is on, so a model trained on a GPU loads on any machine.
#pragma once

#include <optional>
#include <string>

#include "lakerun/track/run.h"
#include "lakerun/track/tracker.h"
#include "lakerun/track/types.h"

// Declared, not included: the callers hold these types already, and torch's internal headers stay out of lakerun's
// public ones.
namespace torch {
namespace nn {
class Module;
}  // namespace nn
namespace jit {
struct Module;
}  // namespace jit
namespace serialize {
class OutputArchive;
}  // namespace serialize
}  // namespace torch

namespace lakerun::track {

struct LogModelOptions {
  std::string artifact_path = "model";
  /// When set, the logged model becomes a new version of this registered model.
  std::string registered_model_name;
};

/// Writes the model directory for `module` into `dir` (created). `run_id` goes into MLmodel.
void SaveModel(const torch::nn::Module& module, const std::string& dir, const std::string& run_id = "");
void SaveModel(const torch::jit::Module& module, const std::string& dir, const std::string& run_id = "");

/// Writes `module` into `archive` as torch::nn::Module::save does, from CPU copies of its tensors: the archive loads
/// with torch::load on a machine without the device the module lives on. SaveModel uses it for modules not on the
/// CPU.
void SaveModuleOnCpu(const torch::nn::Module& module, torch::serialize::OutputArchive& archive);

/// Saves to a temporary directory, logs it under `options.artifact_path`, waits until it is stored (Flush), and
/// registers it when asked. Returns the new model version, if any. No-op (std::nullopt) on an inactive run.
std::optional<ModelVersion> LogModel(Tracker& tracker, Run& run, const torch::nn::Module& module,
                                     const LogModelOptions& options = {});
std::optional<ModelVersion> LogModel(Tracker& tracker, Run& run, const torch::jit::Module& module,
                                     const LogModelOptions& options = {});

}  // namespace lakerun::track
