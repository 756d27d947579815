// HttpClient: the MLflow server's base URL, auth and retry settings over lakerun's HTTP transport
// (objstore/http.h, which owns the retry policy), private to lakerun::track. Thread-safety: calls are serialized on
// one keep-alive connection.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lakerun/track/store.h"
#include "objstore/http.h"

namespace lakerun::track {

struct HttpResponse {
  long status = 0;
  std::string body;
};

class HttpClient {
 public:
  /// `base_url` like "http://host:5000" (no trailing slash needed). Auth from `options`, else the environment.
  HttpClient(std::string base_url, HttpOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Sends `method` to base_url + `path` (which includes any query string) with `body`. Returns the final response,
  /// whatever its status, once it is not retryable or retries are exhausted... except that exhausting retries on a
  /// retryable status or a transport error throws IoError naming the method, URL, attempts and last failure.
  HttpResponse Send(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& content_type = "application/json");
  /// PUT of a local file's bytes, streamed from disk (re-read from the start on each retry).
  HttpResponse PutFile(const std::string& path, const std::string& local_file);

  const std::string& base_url() const { return base_url_; }
  /// Percent-encodes one query or path component.
  static std::string Escape(const std::string& s);

 private:
  HttpResponse SendWithRetries(objstore::HttpRequest request, const std::string& content_type);

  std::string base_url_;
  HttpOptions options_;
  objstore::RetryPolicy policy_;
  std::mutex mu_;
  objstore::HttpConnection connection_;  // guarded by mu_
};

}  // namespace lakerun::track
