#include <cstdlib>

#include "lakerun/base/error.h"
#include "lakerun/track/store.h"
#include "track/file_store.h"
#include "track/rest_store.h"

namespace lakerun::track {

std::string DefaultTrackingUri() {
  const char* env = std::getenv("MLFLOW_TRACKING_URI");
  return env != nullptr && *env ? std::string(env) : std::string("./mlruns");
}

std::unique_ptr<Store> OpenStore(const std::string& uri_in, const StoreOptions& options) {
  const std::string uri = uri_in.empty() ? DefaultTrackingUri() : uri_in;
  if (uri.rfind("http://", 0) == 0 || uri.rfind("https://", 0) == 0) {
    return std::make_unique<RestStore>(uri, options);
  }
  const size_t colon = uri.find(':');
  const size_t slash = uri.find('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon < slash) && uri.rfind("file:", 0) != 0) {
    LAKERUN_THROW(ConfigError, "tracking URI '", uri, "': scheme '", uri.substr(0, colon),
                  "' is not supported; use a path, file:PATH, http:// or https://");
  }
  const std::string path = FileStorePath(uri);
  LAKERUN_CHECK_AS(ConfigError, !path.empty(), "tracking URI '", uri, "' names no directory");
  return std::make_unique<FileStore>(uri, path, options);
}

}  // namespace lakerun::track
