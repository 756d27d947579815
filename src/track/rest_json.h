// JSON <-> lakerun::track types for MLflow's REST API (private; the only place nlohmann types appear for REST).
#pragma once

#include <nlohmann/json.hpp>

#include "lakerun/track/types.h"

namespace lakerun::track {

/// Reads a metric value: a number, or "NaN" / "Infinity" / "-Infinity".
double MetricValueFromJson(const nlohmann::json& value);
Metric MetricFromJson(const nlohmann::json& j);
Experiment ExperimentFromJson(const nlohmann::json& j);
RunInfo RunInfoFromJson(const nlohmann::json& j);
RunRecord RunFromJson(const nlohmann::json& j);
ModelVersion ModelVersionFromJson(const nlohmann::json& j);
/// Integers the server may send as numbers or strings.
int64_t JsonInt(const nlohmann::json& j, const char* key, int64_t fallback = 0);
std::string JsonStr(const nlohmann::json& j, const char* key);

}  // namespace lakerun::track
