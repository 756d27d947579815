#include "objstore/http.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "objstore/libcurl.h"

namespace lakerun::objstore {
namespace {

bool IsRetryableStatus(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool HasHeader(const std::vector<HttpHeader>& headers, std::string_view lower_case_name) {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const HttpHeader& h) { return Lower(h.name) == lower_case_name; });
}

// Where one attempt's response goes: the sink for a successful ranged GET, else the reply's body.
struct ResponseState {
  CURL* curl = nullptr;
  const Libcurl* api = nullptr;
  HttpReply* reply = nullptr;
  char* sink = nullptr;
  size_t sink_capacity = 0;
  bool overflow = false;
};

size_t WriteBody(char* data, size_t size, size_t n, void* user) {
  auto* state = static_cast<ResponseState*>(user);
  const size_t bytes = size * n;
  long status = 0;
  state->api->easy_getinfo(state->curl, CURLINFO_RESPONSE_CODE, &status);
  if (state->sink == nullptr || status < 200 || status >= 300) {  // errors come back as text, never into the sink
    state->reply->body.append(data, bytes);
    return bytes;
  }
  if (state->reply->sink_bytes + bytes > state->sink_capacity) {
    state->overflow = true;
    return 0;  // aborts the transfer
  }
  std::memcpy(state->sink + state->reply->sink_bytes, data, bytes);
  state->reply->sink_bytes += bytes;
  return bytes;
}

size_t CollectHeader(char* data, size_t size, size_t n, void* user) {
  auto* reply = static_cast<HttpReply*>(user);
  const std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    reply->headers.clear();  // a new response (after a 100 Continue or a redirect)
    return size * n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  reply->headers.push_back({Lower(line.substr(0, colon)), std::string(value)});
  return size * n;
}

struct UploadState {
  std::string_view text;
  size_t offset = 0;
  FILE* file = nullptr;
};

size_t ReadBody(char* out, size_t size, size_t n, void* user) {
  auto* state = static_cast<UploadState*>(user);
  const size_t room = size * n;
  if (state->file != nullptr) return std::fread(out, 1, room, state->file);
  const size_t take = std::min(state->text.size() - state->offset, room);
  std::memcpy(out, state->text.data() + state->offset, take);
  state->offset += take;
  return take;
}

// Sets the method and body of `request` on `curl`; returns the body's length.
curl_off_t SetMethodAndBody(const Libcurl& api, CURL* curl, const HttpRequest& request, UploadState* upload,
                            std::unique_ptr<FILE, int (*)(FILE*)>* file) {
  if (request.method == "GET") {
    api.easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    return 0;
  }
  if (request.method == "HEAD") {
    api.easy_setopt(curl, CURLOPT_NOBODY, 1L);
    return 0;
  }
  api.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.body_file.empty()) {
    // In-memory bodies go out with the headers in one send.
    api.easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    api.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    return static_cast<curl_off_t>(request.body.size());
  }
  file->reset(std::fopen(request.body_file.c_str(), "rb"));
  LAKERUN_CHECK_AS(IoError, *file != nullptr, "cannot open ", request.body_file, " for upload: ", std::strerror(errno));
  std::fseek(file->get(), 0, SEEK_END);
  const auto length = static_cast<curl_off_t>(std::ftell(file->get()));
  std::fseek(file->get(), 0, SEEK_SET);
  upload->file = file->get();
  api.easy_setopt(curl, CURLOPT_UPLOAD, 1L);  // streams the file through ReadBody
  api.easy_setopt(curl, CURLOPT_READFUNCTION, ReadBody);
  api.easy_setopt(curl, CURLOPT_READDATA, upload);
  api.easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, length);
  return length;
}

}  // namespace

std::string HttpReply::Header(std::string_view lower_case_name) const {
  for (const HttpHeader& h : headers) {
    if (h.name == lower_case_name) return h.value;
  }
  return {};
}

HttpConnection::HttpConnection() {
  curl_ = LoadLibcurl().easy_init();
  LAKERUN_CHECK_AS(IoError, curl_ != nullptr, "cannot initialise a libcurl handle");
}

HttpConnection::~HttpConnection() {
  if (curl_ != nullptr) LoadLibcurl().easy_cleanup(static_cast<CURL*>(curl_));
}

bool HttpConnection::Perform(const HttpRequest& request, const RetryPolicy& policy, std::chrono::milliseconds timeout,
                             HttpReply* reply, std::string* error) {
  const Libcurl& api = LoadLibcurl();
  CURL* curl = static_cast<CURL*>(curl_);
  api.easy_reset(curl);  // keeps the connection cache: the next request to the same host reuses the socket
  *reply = HttpReply();
  ResponseState response{curl, &api, reply, request.sink, request.sink_capacity, false};
  UploadState upload{request.body, 0, nullptr};
  std::unique_ptr<FILE, int (*)(FILE*)> file(nullptr, &std::fclose);
  api.easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  api.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  api.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(policy.connect_timeout, timeout).count()));
  api.easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  api.easy_setopt(curl, CURLOPT_WRITEFUNCTION, WriteBody);
  api.easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  api.easy_setopt(curl, CURLOPT_HEADERFUNCTION, CollectHeader);
  api.easy_setopt(curl, CURLOPT_HEADERDATA, reply);
  SetMethodAndBody(api, curl, request, &upload, &file);
  curl_slist* headers = nullptr;
  for (const HttpHeader& h : request.headers) {
    headers = api.slist_append(headers, (h.name + ": " + h.value).c_str());
  }
  // libcurl's own defaults would be sent unsigned: a form Content-Type on bodies and a 100-continue round trip.
  if (!HasHeader(request.headers, "content-type")) headers = api.slist_append(headers, "Content-Type:");
  headers = api.slist_append(headers, "Expect:");
  if (!HasHeader(request.headers, "user-agent")) headers = api.slist_append(headers, "User-Agent: lakerun");
  api.easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (policy.insecure_tls) {
    api.easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    api.easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!policy.ca_cert_path.empty()) api.easy_setopt(curl, CURLOPT_CAINFO, policy.ca_cert_path.c_str());
  const CURLcode rc = api.easy_perform(curl);
  api.slist_free_all(headers);
  if (response.overflow) {
    *error = StrCat("the response held more than the ", request.sink_capacity, " bytes asked for");
    return false;
  }
  if (rc != CURLE_OK) {
    *error = api.easy_strerror(rc);
    return false;
  }
  api.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply->status);
  return true;
}

HttpConnectionPool::Lease::Lease(HttpConnectionPool* pool, std::unique_ptr<HttpConnection> connection)
    : pool_(pool), connection_(std::move(connection)) {}

HttpConnectionPool::Lease::~Lease() {
  if (connection_ == nullptr) return;  // moved from
  std::lock_guard<std::mutex> lock(pool_->mu_);
  pool_->idle_.push_back(std::move(connection_));
}

HttpConnectionPool::Lease HttpConnectionPool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<HttpConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(connection));
    }
  }
  return Lease(this, std::make_unique<HttpConnection>());
}

HttpReply SendWithRetries(HttpConnection& connection, const HttpRequest& request, const RetryPolicy& policy,
                          const RequestSigner& sign, std::string_view what) {
  const auto start = std::chrono::steady_clock::now();
  thread_local std::mt19937_64 rng(std::random_device{}());
  std::string last_failure;
  int attempt = 0;
  for (;; ++attempt) {
    HttpRequest attempt_request = request;
    if (sign) sign(attempt_request);
    // Each attempt gets what is left of the call's budget, at most request_timeout (and at least a moment).
    const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    const auto timeout = std::max(std::chrono::milliseconds(100), std::min(policy.request_timeout,
                                                                           policy.max_retry_time - spent));
    HttpReply reply;
    std::string error;
    const bool sent = connection.Perform(attempt_request, policy, timeout, &reply, &error);
    if (sent && !IsRetryableStatus(reply.status)) return reply;
    last_failure = sent ? StrCat("HTTP ", reply.status, ": ", reply.body.substr(0, 300)) : error;
    if (attempt >= policy.max_retries) break;
    auto sleep = policy.backoff_base * (1LL << std::min(attempt, 30));
    if (sleep > policy.backoff_max) sleep = policy.backoff_max;
    if (policy.jitter.count() > 0) {
      sleep += std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, policy.jitter.count())(rng));
    }
    if (std::chrono::steady_clock::now() - start + sleep > policy.max_retry_time) {
      last_failure += StrCat(" (retry time budget of ", policy.max_retry_time.count(), " ms spent)");
      break;
    }
    LAKERUN_LOG(Debug) << what << " failed (" << last_failure << "); retry " << attempt + 1 << " in "
                       << std::chrono::duration_cast<std::chrono::milliseconds>(sleep).count() << " ms";
    std::this_thread::sleep_for(sleep);
  }
  LAKERUN_THROW(IoError, what, " failed after ", attempt + 1, " attempt(s): ", last_failure);
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string UriDecode(std::string_view text) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

int64_t ParseTimestampMs(std::string_view text) {
  const std::string copy(text);
  std::tm tm{};
  const char* end = ::strptime(copy.c_str(), "%a, %d %b %Y %H:%M:%S", &tm);
  int millis = 0;
  if (end == nullptr) {
    end = ::strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (end == nullptr) return 0;
    if (*end == '.') millis = std::atoi(std::string(end + 1, std::min<size_t>(3, std::strlen(end + 1))).c_str());
  }
  return static_cast<int64_t>(::timegm(&tm)) * 1000 + millis;
}

}  // namespace lakerun::objstore
