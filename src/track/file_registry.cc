// FileStore's model registry: <root>/models/<name>/meta.yaml and version-<n>/meta.yaml, in MLflow 2.x's layout
// (MLflow 3 reads it too).
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "track/file_store.h"
#include "track/yaml.h"

namespace lakerun::track {
namespace {

void ValidateModelName(const std::string& name) {
  LAKERUN_CHECK(!name.empty(), "registered model name must not be empty");
  LAKERUN_CHECK(name.find('/') == std::string::npos && name != "." && name != ".." && name.find('\n') == std::string::npos,
                "invalid registered model name '", name, "': no '/', newline, '.' or '..'");
}

}  // namespace

RegisteredModel FileStore::GetOrCreateRegisteredModel(const std::string& name) {
  ValidateModelName(name);
  EnsureRoot();
  const std::string dir = JoinPath(JoinPath(root_, "models"), name);
  const std::string meta_path = JoinPath(dir, "meta.yaml");
  if (fs_.Exists(meta_path)) {
    const auto yaml = ParseFlatYaml(fs_.ReadFile(meta_path), meta_path);
    RegisteredModel model;
    model.name = yaml.count("name") ? yaml.at("name").text : name;
    if (yaml.count("description")) model.description = yaml.at("description").text;
    if (yaml.count("creation_timestamp")) model.creation_timestamp_ms = std::stoll(yaml.at("creation_timestamp").text);
    if (yaml.count("last_updated_timestamp"))
      model.last_updated_timestamp_ms = std::stoll(yaml.at("last_updated_timestamp").text);
    return model;
  }
  RegisteredModel model;
  model.name = name;
  model.creation_timestamp_ms = model.last_updated_timestamp_ms = options_.clock_ms();
  fs_.CreateDirs(dir);
  fs_.WriteAtomically(meta_path, EmitFlatYaml({{"aliases", YamlValue::EmptyMap()},
                                               {"creation_timestamp", YamlValue::Int(model.creation_timestamp_ms)},
                                               {"description", YamlValue::Null()},
                                               {"last_updated_timestamp", YamlValue::Int(model.last_updated_timestamp_ms)},
                                               {"name", YamlValue::String(name)}}));
  return model;
}

ModelVersion FileStore::CreateModelVersion(const std::string& name, const std::string& source,
                                           const std::string& run_id) {
  RegisteredModel model = GetOrCreateRegisteredModel(name);
  const std::string dir = JoinPath(JoinPath(root_, "models"), name);
  int64_t version = 1;
  for (const auto& entry : fs_.List(dir)) {
    if (entry.is_directory && entry.name.rfind("version-", 0) == 0) {
      try {
        version = std::max<int64_t>(version, std::stoll(entry.name.substr(8)) + 1);
      } catch (const std::exception&) {
      }
    }
  }
  if (!run_id.empty()) RunDir(run_id);  // the run must exist
  ModelVersion mv;
  mv.name = name;
  mv.version = version;
  mv.source = source;
  mv.run_id = run_id;
  mv.creation_timestamp_ms = options_.clock_ms();
  const std::string version_dir = JoinPath(dir, StrCat("version-", version));
  fs_.CreateDirs(version_dir);
  fs_.WriteAtomically(JoinPath(version_dir, "meta.yaml"),
                      EmitFlatYaml({{"aliases", YamlValue::EmptyList()},
                                    {"creation_timestamp", YamlValue::Int(mv.creation_timestamp_ms)},
                                    {"current_stage", YamlValue::String("None")},
                                    {"description", YamlValue::Null()},
                                    {"last_updated_timestamp", YamlValue::Int(mv.creation_timestamp_ms)},
                                    {"name", YamlValue::String(name)},
                                    {"run_id", run_id.empty() ? YamlValue::Null() : YamlValue::String(run_id)},
                                    {"run_link", YamlValue::Null()},
                                    {"source", YamlValue::String(source)},
                                    {"status", YamlValue::String("READY")},
                                    {"status_message", YamlValue::Null()},
                                    {"storage_location", YamlValue::String(source)},
                                    {"user_id", YamlValue::Null()},
                                    {"version", YamlValue::Int(version)}}));
  // The registered model's last_updated_timestamp follows its newest version.
  fs_.WriteAtomically(JoinPath(dir, "meta.yaml"),
                      EmitFlatYaml({{"aliases", YamlValue::EmptyMap()},
                                    {"creation_timestamp", YamlValue::Int(model.creation_timestamp_ms)},
                                    {"description", model.description.empty() ? YamlValue::Null()
                                                                              : YamlValue::String(model.description)},
                                    {"last_updated_timestamp", YamlValue::Int(mv.creation_timestamp_ms)},
                                    {"name", YamlValue::String(name)}}));
  return mv;
}

}  // namespace lakerun::track
