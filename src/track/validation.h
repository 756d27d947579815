// MLflow's rules for names and values (mlflow/utils/validation.py), checked on the caller's thread so a bad key
// fails where it was logged, not later in the background.
#pragma once

#include <string>

namespace lakerun::track {

constexpr size_t kMaxKeyLength = 250;
constexpr size_t kMaxParamValueLength = 6000;
constexpr size_t kMaxTagValueLength = 8000;

/// Throws InvalidArgument naming `kind` ("metric", "param", "tag") and the key unless it matches ^[/\w.\- :]*$, is
/// non-empty, at most 250 chars, has no "..", no leading "/", and equals its posixpath.normpath.
void ValidateKey(const std::string& key, const char* kind);
void ValidateParamValue(const std::string& key, const std::string& value);
void ValidateTagValue(const std::string& key, const std::string& value);
/// Run ids: ^[a-zA-Z0-9][\w\-]{0,255}$; experiment ids: ^[a-zA-Z0-9][\w\-]{0,63}$.
void ValidateRunId(const std::string& run_id);
void ValidateExperimentId(const std::string& experiment_id);
/// Artifact paths: relative, no "..", no empty components.
void ValidateArtifactPath(const std::string& path);

}  // namespace lakerun::track
