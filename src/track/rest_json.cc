#include "track/rest_json.h"

#include <cmath>

#include "lakerun/base/error.h"

namespace lakerun::track {

int64_t JsonInt(const nlohmann::json& j, const char* key, int64_t fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (it->is_number()) return it->get<int64_t>();
  if (it->is_string()) {
    try {
      return std::stoll(it->get<std::string>());
    } catch (const std::exception&) {
    }
  }
  LAKERUN_THROW(CorruptDataError, "MLflow response: field '", key, "' is ", it->dump(), ", expected an integer");
}

std::string JsonStr(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

double MetricValueFromJson(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (s == "NaN") return std::nan("");
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
    try {
      return std::stod(s);
    } catch (const std::exception&) {
    }
  }
  LAKERUN_THROW(CorruptDataError, "MLflow response: metric value ", value.dump(), " is not a number");
}

Metric MetricFromJson(const nlohmann::json& j) {
  Metric m;
  m.key = JsonStr(j, "key");
  m.value = j.contains("value") ? MetricValueFromJson(j.at("value")) : 0.0;
  m.timestamp_ms = JsonInt(j, "timestamp");
  m.step = JsonInt(j, "step");
  return m;
}

Experiment ExperimentFromJson(const nlohmann::json& j) {
  Experiment e;
  e.experiment_id = JsonStr(j, "experiment_id");
  e.name = JsonStr(j, "name");
  e.artifact_location = JsonStr(j, "artifact_location");
  e.lifecycle_stage = JsonStr(j, "lifecycle_stage");
  e.creation_time_ms = JsonInt(j, "creation_time");
  e.last_update_time_ms = JsonInt(j, "last_update_time");
  if (j.contains("tags")) {
    for (const auto& t : j.at("tags")) e.tags[JsonStr(t, "key")] = JsonStr(t, "value");
  }
  return e;
}

RunInfo RunInfoFromJson(const nlohmann::json& j) {
  RunInfo info;
  info.run_id = JsonStr(j, "run_id");
  if (info.run_id.empty()) info.run_id = JsonStr(j, "run_uuid");
  info.experiment_id = JsonStr(j, "experiment_id");
  info.run_name = JsonStr(j, "run_name");
  info.user_id = JsonStr(j, "user_id");
  const std::string status = JsonStr(j, "status");
  if (auto s = ParseRunStatusName(status)) info.status = *s;
  info.start_time_ms = JsonInt(j, "start_time");
  if (j.contains("end_time") && !j.at("end_time").is_null()) info.end_time_ms = JsonInt(j, "end_time");
  info.artifact_uri = JsonStr(j, "artifact_uri");
  info.lifecycle_stage = JsonStr(j, "lifecycle_stage");
  return info;
}

RunRecord RunFromJson(const nlohmann::json& j) {
  RunRecord record;
  record.info = RunInfoFromJson(j.value("info", nlohmann::json::object()));
  const nlohmann::json data = j.value("data", nlohmann::json::object());
  if (data.contains("metrics")) {
    for (const auto& m : data.at("metrics")) {
      Metric metric = MetricFromJson(m);
      record.latest_metrics[metric.key] = metric;
    }
  }
  if (data.contains("params")) {
    for (const auto& p : data.at("params")) record.params[JsonStr(p, "key")] = JsonStr(p, "value");
  }
  if (data.contains("tags")) {
    for (const auto& t : data.at("tags")) record.tags[JsonStr(t, "key")] = JsonStr(t, "value");
  }
  if (record.info.run_name.empty() && record.tags.count("mlflow.runName")) {
    record.info.run_name = record.tags.at("mlflow.runName");
  }
  return record;
}

ModelVersion ModelVersionFromJson(const nlohmann::json& j) {
  ModelVersion mv;
  mv.name = JsonStr(j, "name");
  mv.version = JsonInt(j, "version");
  mv.source = JsonStr(j, "source");
  mv.run_id = JsonStr(j, "run_id");
  mv.status = JsonStr(j, "status");
  mv.current_stage = JsonStr(j, "current_stage");
  mv.creation_timestamp_ms = JsonInt(j, "creation_timestamp");
  return mv;
}

}  // namespace lakerun::track
