#include "track/http_client.h"

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "lakerun/base/error.h"
#include "lakerun/base/crypto.h"

namespace lakerun::track {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// A whole number from the environment variable `name`; std::nullopt when unset. Anything else is a ConfigError.
std::optional<int64_t> EnvCount(const char* name) {
  const std::string text = Env(name);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  LAKERUN_CHECK_AS(ConfigError, end != nullptr && *end == '\0' && value >= 0 && value < (1LL << 31), name, "='", text,
                   "': expected a whole number");
  return value;
}

}  // namespace

HttpClient::HttpClient(std::string base_url, HttpOptions options)
    : base_url_(std::move(base_url)), options_(std::move(options)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  if (options_.token.empty() && options_.username.empty()) {
    options_.token = Env("MLFLOW_TRACKING_TOKEN");
    options_.username = Env("MLFLOW_TRACKING_USERNAME");
    options_.password = Env("MLFLOW_TRACKING_PASSWORD");
  }
  if (Env("MLFLOW_TRACKING_INSECURE_TLS") == "true") options_.insecure_tls = true;
  if (const std::optional<int64_t> s = EnvCount("MLFLOW_HTTP_REQUEST_TIMEOUT")) {
    options_.request_timeout = std::chrono::seconds(*s);
  }
  if (const std::optional<int64_t> n = EnvCount("MLFLOW_HTTP_REQUEST_MAX_RETRIES")) {
    options_.max_retries = static_cast<int>(*n);
  }
  if (const std::optional<int64_t> s = EnvCount("LAKERUN_TRACKING_TIMEOUT")) {
    options_.max_retry_time = std::chrono::seconds(*s);
  }
  if (options_.ca_cert_path.empty()) options_.ca_cert_path = Env("MLFLOW_TRACKING_SERVER_CERT_PATH");
  policy_.max_retries = options_.max_retries;
  policy_.backoff_base = options_.backoff_base;
  policy_.backoff_max = options_.backoff_max;
  policy_.jitter = options_.jitter;
  policy_.max_retry_time = options_.max_retry_time;
  policy_.request_timeout = options_.request_timeout;
  policy_.connect_timeout = options_.connect_timeout;
  policy_.insecure_tls = options_.insecure_tls;
  policy_.ca_cert_path = options_.ca_cert_path;
}

HttpClient::~HttpClient() = default;

std::string HttpClient::Escape(const std::string& s) { return objstore::UriEncode(s, /*keep_slash=*/false); }

HttpResponse HttpClient::Send(const std::string& method, const std::string& path, const std::string& body,
                              const std::string& content_type) {
  objstore::HttpRequest request;
  request.method = method;
  request.url = base_url_ + path;
  if (method != "GET") request.body = body;
  return SendWithRetries(std::move(request), content_type);
}

HttpResponse HttpClient::PutFile(const std::string& path, const std::string& local_file) {
  objstore::HttpRequest request;
  request.method = "PUT";
  request.url = base_url_ + path;
  request.body_file = local_file;
  return SendWithRetries(std::move(request), "application/octet-stream");
}

HttpResponse HttpClient::SendWithRetries(objstore::HttpRequest request, const std::string& content_type) {
  if (request.method != "GET") request.headers.push_back({"Content-Type", content_type});
  if (!options_.token.empty()) {
    request.headers.push_back({"Authorization", "Bearer " + options_.token});
  } else if (!options_.username.empty()) {
    request.headers.push_back(
        {"Authorization", "Basic " + Base64Encode(options_.username + ":" + options_.password)});
  }
  request.headers.push_back({"User-Agent", "lakerun-track"});
  const std::string what = request.method + " " + request.url;
  std::lock_guard<std::mutex> lock(mu_);
  objstore::HttpReply reply = objstore::SendWithRetries(connection_, request, policy_, nullptr, what);
  HttpResponse response;
  response.status = reply.status;
  response.body = std::move(reply.body);
  return response;
}

}  // namespace lakerun::track
