#include "track/http_client.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "track/libcurl.h"

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

bool IsRetryableStatus(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

size_t WriteToString(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

struct ReadState {
  const std::string* text = nullptr;
  size_t offset = 0;
  FILE* file = nullptr;
};

size_t ReadBody(char* out, size_t size, size_t n, void* user) {
  auto* state = static_cast<ReadState*>(user);
  const size_t room = size * n;
  if (state->file != nullptr) return std::fread(out, 1, room, state->file);
  const size_t left = state->text->size() - state->offset;
  const size_t take = std::min(left, room);
  std::memcpy(out, state->text->data() + state->offset, take);
  state->offset += take;
  return take;
}

}  // namespace

struct HttpClient::Body {
  std::string text;
  std::string file;  // when non-empty, the body is this file's bytes
};

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
  curl_ = LoadLibcurl().easy_init();
  LAKERUN_CHECK_AS(IoError, curl_ != nullptr, "cannot initialise libcurl for ", base_url_);
}

HttpClient::~HttpClient() {
  if (curl_ != nullptr) LoadLibcurl().easy_cleanup(static_cast<CURL*>(curl_));
}

std::string HttpClient::Escape(const std::string& s) {
  const Libcurl& api = LoadLibcurl();
  char* escaped = api.escape(s.c_str(), static_cast<int>(s.size()));
  LAKERUN_CHECK_AS(IoError, escaped != nullptr, "libcurl could not escape a URL component of ", s.size(), " bytes");
  std::string out(escaped);
  api.free(escaped);
  return out;
}

HttpResponse HttpClient::Send(const std::string& method, const std::string& path, const std::string& body,
                              const std::string& content_type) {
  Body b;
  b.text = body;
  return SendWithRetries(method, path, b, content_type);
}

HttpResponse HttpClient::PutFile(const std::string& path, const std::string& local_file) {
  Body b;
  b.file = local_file;
  return SendWithRetries("PUT", path, b, "application/octet-stream");
}

bool HttpClient::Perform(const std::string& method, const std::string& url, const Body& body,
                         const std::string& content_type, std::chrono::milliseconds timeout, HttpResponse* response,
                         std::string* error) {
  const Libcurl& api = LoadLibcurl();
  CURL* curl = static_cast<CURL*>(curl_);
  api.easy_reset(curl);
  ReadState read;
  read.text = &body.text;
  std::unique_ptr<FILE, int (*)(FILE*)> file(nullptr, &std::fclose);
  curl_off_t length = static_cast<curl_off_t>(body.text.size());
  if (!body.file.empty()) {
    file.reset(std::fopen(body.file.c_str(), "rb"));
    LAKERUN_CHECK_AS(IoError, file != nullptr, "cannot open artifact ", body.file, " for upload");
    std::fseek(file.get(), 0, SEEK_END);
    length = static_cast<curl_off_t>(std::ftell(file.get()));
    std::fseek(file.get(), 0, SEEK_SET);
    read.file = file.get();
  }
  response->body.clear();
  response->status = 0;
  api.easy_setopt(curl, CURLOPT_URL, url.c_str());
  api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                  static_cast<long>(std::min(options_.connect_timeout, timeout).count()));
  api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteToString);
  api.easy_setopt(curl, CURLOPT_WRITEDATA, &response->body);
  curl_slist* headers = nullptr;
  if (method == "GET") {
    api.easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else if (body.file.empty()) {
    // In-memory bodies go out with the headers in one send.
    api.easy_setopt(curl, CURLOPT_POSTFIELDS, body.text.data());
    api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, length);
    api.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
    headers = api.slist_append(headers, ("Content-Type: " + content_type).c_str());
    headers = api.slist_append(headers, "Expect:");  // no 100-continue round trip
  } else {
    api.easy_setopt(curl, CURLOPT_UPLOAD, 1L);  // streams the file through ReadBody
    api.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
    api.easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
    api.easy_setopt(curl, CURLOPT_READDATA, &read);
    api.easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, length);
    headers = api.slist_append(headers, ("Content-Type: " + content_type).c_str());
    headers = api.slist_append(headers, "Expect:");  // no 100-continue round trip
  }
  if (!options_.token.empty()) {
    headers = api.slist_append(headers, ("Authorization: Bearer " + options_.token).c_str());
  } else if (!options_.username.empty()) {
    api.easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    api.easy_setopt(curl, CURLOPT_USERNAME, options_.username.c_str());
    api.easy_setopt(curl, CURLOPT_PASSWORD, options_.password.c_str());
  }
  headers = api.slist_append(headers, "User-Agent: lakerun-track");
  api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (options_.insecure_tls) {
    api.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    api.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!options_.ca_cert_path.empty()) api.easy_setopt(curl, CURLOPT_CAINFO, options_.ca_cert_path.c_str());
  const CURLcode rc = api.easy_perform(curl);
  api.slist_free_all(headers);
  if (rc != CURLE_OK) {
    *error = api.easy_strerror(rc);
    return false;
  }
  api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response->status);
  return true;
}

HttpResponse HttpClient::SendWithRetries(const std::string& method, const std::string& path, const Body& body,
                                         const std::string& content_type) {
  const std::string url = base_url_ + path;
  std::lock_guard<std::mutex> lock(mu_);
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(std::random_device{}());
  std::string last_failure;
  int attempt = 0;
  for (;; ++attempt) {
    HttpResponse response;
    std::string error;
    // Each attempt gets what is left of the call's budget, at most request_timeout (and at least a moment).
    const auto left = options_.max_retry_time - std::chrono::duration_cast<std::chrono::milliseconds>(
                                                    std::chrono::steady_clock::now() - start);
    const auto timeout = std::max(std::chrono::milliseconds(100), std::min(options_.request_timeout, left));
    const bool sent = Perform(method, url, body, content_type, timeout, &response, &error);
    if (sent && !IsRetryableStatus(response.status)) return response;
    last_failure = sent ? StrCat("HTTP ", response.status, ": ", response.body.substr(0, 300)) : error;
    if (attempt >= options_.max_retries) break;
    auto sleep = options_.backoff_base * (1LL << std::min(attempt, 30));
    if (sleep > options_.backoff_max) sleep = options_.backoff_max;
    if (options_.jitter.count() > 0) {
      sleep += std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, options_.jitter.count())(rng));
    }
    const auto elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed + sleep > options_.max_retry_time) {
      last_failure += StrCat(" (retry time budget of ", options_.max_retry_time.count(), " ms spent)");
      break;
    }
    LAKERUN_LOG(Debug) << method << " " << url << " failed (" << last_failure << "); retry " << attempt + 1
                       << " in " << std::chrono::duration_cast<std::chrono::milliseconds>(sleep).count() << " ms";
    std::this_thread::sleep_for(sleep);
  }
  LAKERUN_THROW(IoError, method, " ", url, " failed after ", attempt + 1, " attempt(s): ", last_failure);
}

}  // namespace lakerun::track
