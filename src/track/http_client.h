// HttpClient: libcurl behind a small interface, with MLflow's retry policy and auth (private to lakerun::track).
//
// Retries: HTTP 408/429/500/502/503/504 and transport failures (refused, reset, timed out) are retried up to
// HttpOptions::max_retries times, sleeping backoff_base * 2^(n-1) (capped at backoff_max) plus a uniform jitter,
// never past max_retry_time in total. Every request has connect and total timeouts. Thread-safety: calls are
// serialized on one connection (keep-alive).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lakerun/track/store.h"

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
  struct Body;
  HttpResponse SendWithRetries(const std::string& method, const std::string& path, const Body& body,
                               const std::string& content_type);
  // One attempt, ending within `timeout`; false with *error when nothing came back.
  bool Perform(const std::string& method, const std::string& url, const Body& body, const std::string& content_type,
               std::chrono::milliseconds timeout, HttpResponse* response, std::string* error);

  std::string base_url_;
  HttpOptions options_;
  std::mutex mu_;
  void* curl_ = nullptr;  // CURL*, guarded by mu_
};

}  // namespace lakerun::track
