// HTTP over libcurl for the object stores and the MLflow REST client (private to lakerun): one request type, one
// retry policy, keep-alive connections.
//
// Retries: HTTP 408/429/500/502/503/504 and transport failures (refused, reset, timed out) are retried up to
// RetryPolicy::max_retries times, sleeping backoff_base * 2^(n-1) (capped at backoff_max) plus a uniform jitter,
// never past max_retry_time in total. Every attempt is bounded by request_timeout (and by what is left of
// max_retry_time); connecting by connect_timeout. Nothing waits forever.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "objstore/signing.h"

namespace lakerun::objstore {

struct RetryPolicy {
  int max_retries = 7;
  std::chrono::milliseconds backoff_base{2000};  ///< sleep before retry n is backoff_base * 2^(n-1) + jitter
  std::chrono::milliseconds backoff_max{60000};  ///< cap on one sleep
  std::chrono::milliseconds jitter{1000};        ///< uniform random extra in [0, jitter]
  std::chrono::milliseconds max_retry_time{60000};
  std::chrono::milliseconds request_timeout{60000};
  std::chrono::milliseconds connect_timeout{10000};
  bool insecure_tls = false;
  std::string ca_cert_path;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;  ///< scheme://host[:port]/path?query, path and query already percent-encoded
  std::vector<HttpHeader> headers;
  std::string_view body;  ///< in-memory body (must outlive the call)
  std::string body_file;  ///< when non-empty, the body is this local file's bytes, streamed (re-read on retry)
  /// Where the response body goes: nullptr collects it in HttpReply::body; else written here (GET of a range into a
  /// caller's buffer): at most `sink_capacity` bytes, more is an error.
  char* sink = nullptr;
  size_t sink_capacity = 0;
};

struct HttpReply {
  long status = 0;
  std::vector<HttpHeader> headers;  ///< names lower-cased
  std::string body;                 ///< empty when the request had a sink
  size_t sink_bytes = 0;            ///< bytes written to the request's sink
  /// The value of header `lower_case_name`, or "" when absent.
  std::string Header(std::string_view lower_case_name) const;
};

/// One keep-alive libcurl handle. Not thread-safe: one request at a time (an HttpConnectionPool hands them out).
class HttpConnection {
 public:
  HttpConnection();
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  /// One attempt, ending within `timeout`. False with *error (libcurl's message) when no response came back.
  bool Perform(const HttpRequest& request, const RetryPolicy& policy, std::chrono::milliseconds timeout,
               HttpReply* reply, std::string* error);

 private:
  void* curl_ = nullptr;  // CURL*
};

/// Connections reused across calls and threads: Acquire() takes an idle one or makes one; the lease returns it.
class HttpConnectionPool {
 public:
  class Lease {
   public:
    Lease(HttpConnectionPool* pool, std::unique_ptr<HttpConnection> connection);
    Lease(Lease&&) = default;
    ~Lease();
    HttpConnection& operator*() { return *connection_; }
    HttpConnection* operator->() { return connection_.get(); }

   private:
    HttpConnectionPool* pool_;
    std::unique_ptr<HttpConnection> connection_;
  };
  Lease Acquire();

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<HttpConnection>> idle_;
};

/// Called before every attempt with a fresh copy of the request, so a signer can stamp the current time.
using RequestSigner = std::function<void(HttpRequest&)>;

/// Sends `request` with retries (see the file comment). Returns the final reply whatever its status once it is not
/// retryable. Throws IoError naming `what` (e.g. "GET s3://bucket/key"), the attempts and the last failure when
/// retries are exhausted on a retryable status or a transport error. `what` is used instead of the URL so that
/// a signed query string (a SAS) never appears in an error.
HttpReply SendWithRetries(HttpConnection& connection, const HttpRequest& request, const RetryPolicy& policy,
                          const RequestSigner& sign, std::string_view what);

/// Percent-encodes per RFC 3986 (unreserved characters kept); with keep_slash, '/' is kept too (object keys).
std::string UriEncode(std::string_view text, bool keep_slash);
/// Decodes %XX escapes (and nothing else).
std::string UriDecode(std::string_view text);

/// Milliseconds since the epoch of an RFC 1123 date ("Tue, 26 Nov 2026 12:00:00 GMT", as Last-Modified headers and
/// Azure listings write it) or of an ISO 8601 UTC time ("2026-11-26T12:00:00.000Z", as S3 listings write it);
/// 0 when `text` is neither.
int64_t ParseTimestampMs(std::string_view text);

}  // namespace lakerun::objstore
