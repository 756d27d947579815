#include "track/validation.h"

#include <cctype>

#include "lakerun/base/error.h"

namespace lakerun::track {
namespace {

bool IsWordChar(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }

// posixpath.normpath(key) == key for a relative key: no empty, "." or ".." components and no trailing slash.
bool IsNormalized(const std::string& key) {
  size_t start = 0;
  while (true) {
    const size_t slash = key.find('/', start);
    const std::string part = key.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

void ValidateId(const std::string& id, size_t max_tail, const char* kind) {
  bool ok = !id.empty() && id.size() <= max_tail + 1 && std::isalnum(static_cast<unsigned char>(id[0]));
  for (size_t i = 1; ok && i < id.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(id[i]);
    ok = std::isalnum(c) || c == '_' || c == '-';
  }
  LAKERUN_CHECK(ok, "invalid ", kind, " id '", id, "': expected 1 to ", max_tail + 1,
                " characters of [a-zA-Z0-9_-] starting with a letter or digit");
}

}  // namespace

void ValidateKey(const std::string& key, const char* kind) {
  LAKERUN_CHECK(!key.empty(), "invalid ", kind, " name: the name is empty");
  LAKERUN_CHECK(key.size() <= kMaxKeyLength, "invalid ", kind, " name '", key.substr(0, 40), "...': ", key.size(),
                " characters, at most ", kMaxKeyLength, " allowed");
  for (unsigned char c : key) {
    LAKERUN_CHECK(IsWordChar(c) || c == '/' || c == '.' || c == '-' || c == ' ' || c == ':', "invalid ", kind,
                  " name '", key, "': character '", static_cast<char>(c),
                  "' not allowed; names may contain only alphanumerics, underscores (_), dashes (-), periods (.), "
                  "spaces ( ), colons (:) and slashes (/)");
  }
  LAKERUN_CHECK(key.find("..") == std::string::npos, "invalid ", kind, " name '", key, "': '..' is not allowed");
  LAKERUN_CHECK(key.front() != '/', "invalid ", kind, " name '", key, "': it must not start with '/'");
  LAKERUN_CHECK(IsNormalized(key), "invalid ", kind, " name '", key,
                "': it must be a normalized path (no '//', './' or trailing '/')");
}

void ValidateParamValue(const std::string& key, const std::string& value) {
  LAKERUN_CHECK(value.size() <= kMaxParamValueLength, "param '", key, "': value of ", value.size(),
                " characters exceeds the limit of ", kMaxParamValueLength);
}

void ValidateTagValue(const std::string& key, const std::string& value) {
  LAKERUN_CHECK(value.size() <= kMaxTagValueLength, "tag '", key, "': value of ", value.size(),
                " characters exceeds the limit of ", kMaxTagValueLength);
}

void ValidateRunId(const std::string& run_id) { ValidateId(run_id, 255, "run"); }
void ValidateExperimentId(const std::string& experiment_id) { ValidateId(experiment_id, 63, "experiment"); }

void ValidateArtifactPath(const std::string& path) {
  if (path.empty()) return;
  LAKERUN_CHECK(path.front() != '/', "invalid artifact path '", path, "': it must be relative");
  LAKERUN_CHECK(IsNormalized(path), "invalid artifact path '", path,
                "': no empty, '.' or '..' components and no trailing '/'");
}

}  // namespace lakerun::track
