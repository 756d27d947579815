// Splitting logged entities into MLflow log-batch request bodies within the server's limits (private).
#pragma once

#include <string>
#include <vector>

#include "lakerun/track/store.h"

namespace lakerun::track {

/// A metric value as protobuf JSON wants it: a number, or the strings "NaN", "Infinity", "-Infinity".
std::string JsonMetricValue(double value);

/// JSON bodies for POST /api/2.0/mlflow/runs/log-batch carrying every entity, in order params, tags, metrics (as
/// MLflow's client sends them), each body within `limits` (per-kind counts, total entities, bytes). An entity larger
/// than max_body_bytes on its own is InvalidArgument naming its key.
std::vector<std::string> BuildLogBatchBodies(const std::string& run_id, const std::vector<Metric>& metrics,
                                             const std::vector<KeyValue>& params, const std::vector<KeyValue>& tags,
                                             const LogBatchLimits& limits = {});

}  // namespace lakerun::track
