#include "lakerun/track/torch_model.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include <torch/csrc/jit/api/module.h>
#include <torch/nn/module.h>
#include <torch/serialize/output-archive.h>
#include <torch/version.h>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/track/mlmodel.h"
#include "lakerun/track/safetensors.h"

namespace lakerun::track {
namespace {

std::string SafetensorsDtype(c10::ScalarType type, const std::string& name) {
  switch (type) {
    case c10::ScalarType::Double: return "F64";
    case c10::ScalarType::Float: return "F32";
    case c10::ScalarType::Half: return "F16";
    case c10::ScalarType::BFloat16: return "BF16";
    case c10::ScalarType::Long: return "I64";
    case c10::ScalarType::Int: return "I32";
    case c10::ScalarType::Short: return "I16";
    case c10::ScalarType::Char: return "I8";
    case c10::ScalarType::Byte: return "U8";
    case c10::ScalarType::Bool: return "BOOL";
    default:
      LAKERUN_THROW(NotImplemented, "safetensors: tensor '", name, "' has dtype ", c10::toString(type),
                    ", which safetensors cannot hold");
  }
}

// Writes named tensors as safetensors; returns the file size.
int64_t WriteWeights(const std::vector<std::pair<std::string, at::Tensor>>& named, const std::string& path) {
  std::vector<at::Tensor> keep;  // contiguous CPU copies, alive until encoded
  std::vector<TensorView> views;
  for (const auto& [name, tensor] : named) {
    at::Tensor t = tensor.detach().to(at::kCPU).contiguous();
    keep.push_back(t);
    TensorView v;
    v.name = name;
    v.dtype = SafetensorsDtype(t.scalar_type(), name);
    for (int64_t d : t.sizes()) v.shape.push_back(d);
    v.data = t.data_ptr();
    v.nbytes = static_cast<size_t>(t.numel()) * t.element_size();
    views.push_back(v);
  }
  const std::string bytes = EncodeSafetensors(views, {{"format", "pt"}});
  LocalFileSystem().WriteAtomically(path, bytes);
  return static_cast<int64_t>(bytes.size());
}

int64_t SizeOf(const std::string& path) {
  auto info = LocalFileSystem().Stat(path);
  return info ? static_cast<int64_t>(info->size) : 0;
}

// The MLmodel of a model logged at `artifact_path` of run `run_id`, its uuid and time fixed (the run's log-model
// history names the same ones).
MLmodelSpec Spec(const std::string& run_id, const std::string& artifact_path, bool torchscript) {
  MLmodelSpec spec;
  spec.artifact_path = artifact_path;
  spec.run_id = run_id;
  spec.torchscript = torchscript;
  spec.torch_version = TORCH_VERSION;
  return ResolveMLmodelSpec(spec);
}

// A private scratch directory under $TMPDIR, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lakerun-model-XXXXXX";
    LAKERUN_CHECK_AS(IoError, ::mkdtemp(pattern.data()) != nullptr, "cannot create a temporary directory ",
                     pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    try {
      LocalFileSystem().RemoveAll(path_);
    } catch (...) {
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool AllOnCpu(const std::vector<std::pair<std::string, at::Tensor>>& named) {
  for (const auto& item : named) {
    if (item.second.defined() && !item.second.device().is_cpu()) return false;
  }
  return true;
}

}  // namespace

void SaveModuleOnCpu(const torch::nn::Module& module, torch::serialize::OutputArchive& archive) {
  // torch::nn::Module::save's layout (parameters, buffers, then a sub-archive per serializable child), with every
  // tensor copied to the CPU and keeping its requires_grad flag.
  auto on_cpu = [](const at::Tensor& t) {
    if (!t.defined()) return t;
    return t.detach().cpu().set_requires_grad(t.requires_grad());
  };
  for (const auto& item : module.named_parameters(/*recurse=*/false)) archive.write(item.key(), on_cpu(item.value()));
  for (const auto& item : module.named_buffers(/*recurse=*/false)) {
    archive.write(item.key(), on_cpu(item.value()), /*is_buffer=*/true);
  }
  for (const auto& child : module.named_children()) {
    if (!child.value()->is_serializable()) continue;
    torch::serialize::OutputArchive child_archive(archive.compilation_unit());
    SaveModuleOnCpu(*child.value(), child_archive);
    archive.write(child.key(), child_archive);
  }
}

namespace {

MLmodelSpec SaveModelDir(const torch::nn::Module& module, const std::string& dir, const std::string& run_id,
                         const std::string& artifact_path) {
  FileSystem& fs = LocalFileSystem();
  fs.CreateDirs(JoinPath(dir, "data"));
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) named.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers(/*recurse=*/true)) named.emplace_back(item.key(), item.value());
  MLmodelSpec spec = Spec(run_id, artifact_path, false);
  int64_t size = WriteWeights(named, JoinPath(dir, spec.safetensors_path));
  torch::serialize::OutputArchive archive;
  // A model trained on a GPU is saved from CPU copies, so that torch::load reads it on any machine.
  if (AllOnCpu(named)) {
    module.save(archive);
  } else {
    SaveModuleOnCpu(module, archive);
  }
  archive.save_to(JoinPath(dir, spec.archive_path));
  size += SizeOf(JoinPath(dir, spec.archive_path));
  spec.model_size_bytes = size;
  WriteModelMetadataFiles(fs, dir, spec);
  return spec;
}

MLmodelSpec SaveModelDir(const torch::jit::Module& module, const std::string& dir, const std::string& run_id,
                         const std::string& artifact_path) {
  FileSystem& fs = LocalFileSystem();
  fs.CreateDirs(JoinPath(dir, "data"));
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) named.emplace_back(item.name, item.value);
  for (const auto& item : module.named_buffers(/*recurse=*/true)) named.emplace_back(item.name, item.value);
  MLmodelSpec spec = Spec(run_id, artifact_path, true);
  int64_t size = WriteWeights(named, JoinPath(dir, spec.safetensors_path));
  // A model on a GPU is saved from a CPU copy, so that torch::jit::load and mlflow.pytorch read it anywhere.
  const std::string archive = JoinPath(dir, "data/model.pth");
  if (AllOnCpu(named)) {
    module.save(archive);
  } else {
    torch::jit::Module copy = module.deepcopy();
    copy.to(at::kCPU);
    copy.save(archive);
  }
  size += SizeOf(archive);
  spec.model_size_bytes = size;
  WriteModelMetadataFiles(fs, dir, spec);
  return spec;
}

template <typename M>
std::optional<ModelVersion> LogAny(Tracker& tracker, Run& run, const M& module, const LogModelOptions& options) {
  if (!run.active()) return std::nullopt;
  LAKERUN_CHECK(!options.artifact_path.empty(), "LogModel: artifact_path must not be empty");
  ScratchDir scratch;
  const std::string dir = JoinPath(scratch.path(), "model");
  const MLmodelSpec spec = SaveModelDir(module, dir, run.run_id(), options.artifact_path);
  run.LogArtifact(dir, options.artifact_path);
  run.Flush();  // the copy/upload happens in the background; the scratch directory goes away on return
  // As MLflow's Model.log, once the files are stored: the run's mlflow.log-model.history lists the model.
  tracker.store().RecordLoggedModel(run.run_id(), FormatLogModelHistoryEntry(spec));
  // On an MLflow 3 server, also the LoggedModel its model views list (the files uploaded once more, to its location).
  tracker.store().LogLoggedModel(run.run_id(), options.artifact_path, dir, 0);
  if (options.registered_model_name.empty()) return std::nullopt;
  return tracker.RegisterModel(run.run_id(), options.artifact_path, options.registered_model_name);
}

}  // namespace

void SaveModel(const torch::nn::Module& module, const std::string& dir, const std::string& run_id) {
  SaveModelDir(module, dir, run_id, "model");
}

void SaveModel(const torch::jit::Module& module, const std::string& dir, const std::string& run_id) {
  SaveModelDir(module, dir, run_id, "model");
}

std::optional<ModelVersion> LogModel(Tracker& tracker, Run& run, const torch::nn::Module& module,
                                     const LogModelOptions& options) {
  return LogAny(tracker, run, module, options);
}

std::optional<ModelVersion> LogModel(Tracker& tracker, Run& run, const torch::jit::Module& module,
                                     const LogModelOptions& options) {
  return LogAny(tracker, run, module, options);
}

}  // namespace lakerun::track
