#include "objstore/azure_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

#include "lakerun/base/error.h"
#include "lakerun/base/crypto.h"
#include "objstore/signing.h"
#include "objstore/xml.h"

namespace lakerun::objstore {
namespace {

constexpr const char* kApiVersion = "2021-08-06";
constexpr int kMaxBlocks = 50000;  // the service's limit on blocks in one block blob

/// "Thu, 26 Nov 2026 12:00:00 GMT" (RFC 1123, as Last-Modified is written) to Unix milliseconds; 0 when unparsable.
int64_t ParseHttpDate(const std::string& text) {
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char month[4] = {};
  std::tm tm{};
  if (std::sscanf(text.c_str(), "%*3s, %d %3s %d %d:%d:%d", &tm.tm_mday, month, &tm.tm_year, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6) {
    return 0;
  }
  const auto* found = std::find_if(std::begin(kMonths), std::end(kMonths),
                                   [&](const char* m) { return std::strcmp(m, month) == 0; });
  if (found == std::end(kMonths)) return 0;
  tm.tm_mon = static_cast<int>(found - std::begin(kMonths));
  tm.tm_year -= 1900;
  return static_cast<int64_t>(::timegm(&tm)) * 1000;
}

uint64_t ParseSize(const std::string& text) { return text.empty() ? 0 : std::stoull(text); }

std::string Unquote(std::string text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') return text.substr(1, text.size() - 2);
  return text;
}

/// The first line of the service's <Message> (Azure appends RequestId and Time lines).
std::string FirstLine(std::string text) {
  const size_t eol = text.find_first_of("\r\n");
  return eol == std::string::npos ? text : text.substr(0, eol);
}

void Redact(std::string* text, const std::string& secret) {
  if (secret.size() < 8) return;
  for (size_t at = text->find(secret); at != std::string::npos; at = text->find(secret, at)) {
    text->replace(at, secret.size(), "<redacted>");
  }
}

}  // namespace

struct AzureBlobStore::Request {
  std::string method;
  std::string path;   // percent-encoded, from the origin: base_path_ + "/container[/key]"
  std::string query;  // percent-encoded, without '?' and without the SAS
  std::vector<HttpHeader> headers{};
  std::string_view body{};
  std::string body_file{};
  uint64_t body_size = 0;  // the Content-Length libcurl will send (signed with Shared Key)
  char* sink = nullptr;
  size_t sink_capacity = 0;
};

AzureBlobStore::AzureBlobStore(AzureSettings settings, std::string container, std::string root_uri,
                               AzureStoreOptions options)
    : settings_(std::move(settings)),
      container_(std::move(container)),
      root_uri_(root_uri.empty() ? "az://" + container_ : std::move(root_uri)),
      options_(std::move(options)) {
  LAKERUN_CHECK_AS(ConfigError, !settings_.account.empty(), root_uri_,
                   ": no Azure storage account (set AZURE_STORAGE_ACCOUNT, or name it in the URI as "
                   "abfss://container@ACCOUNT.dfs.core.windows.net)");
  LAKERUN_CHECK_AS(ConfigError, !container_.empty(), root_uri_, ": no container named");
  LAKERUN_CHECK_AS(ConfigError, options_.block_size > 0 && options_.max_results >= 0, root_uri_,
                   ": AzureStoreOptions::block_size must be positive and max_results not negative");
  if (!settings_.account_key_base64.empty()) {
    Base64Decode(settings_.account_key_base64, "AZURE_STORAGE_KEY");  // a ConfigError that does not show it
  }
  if (!settings_.sas_token.empty() && settings_.sas_token.front() == '?') settings_.sas_token.erase(0, 1);
  std::string endpoint = settings_.blob_endpoint.empty()
                             ? "https://" + settings_.account + ".blob.core.windows.net"
                             : settings_.blob_endpoint;
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  const size_t scheme_end = endpoint.find("://");
  LAKERUN_CHECK_AS(ConfigError, scheme_end != std::string::npos && scheme_end > 0, root_uri_,
                   ": the blob endpoint '", endpoint,
                   "' (AZURE_STORAGE_BLOB_ENDPOINT or the connection string's BlobEndpoint) is not an http(s) URL");
  const size_t path_start = std::min(endpoint.find('/', scheme_end + 3), endpoint.size());
  origin_ = endpoint.substr(0, path_start);
  host_ = endpoint.substr(scheme_end + 3, path_start - scheme_end - 3);
  base_path_ = endpoint.substr(path_start);
}

std::string AzureBlobStore::BlobPath(const std::string& key) const {
  LAKERUN_CHECK(!key.empty() && key.front() != '/', root_uri_, ": object key '", key,
                "' must not be empty or start with '/'");
  return base_path_ + "/" + container_ + "/" + UriEncode(key, /*keep_slash=*/true);
}

HttpReply AzureBlobStore::Send(const Request& request, const std::string& what, int* attempts) {
  const bool shared_key = !settings_.account_key_base64.empty();
  std::string query = request.query;
  if (!shared_key && !settings_.sas_token.empty()) query += (query.empty() ? "" : "&") + settings_.sas_token;
  HttpRequest http;
  http.method = request.method;
  http.url = origin_ + request.path + (query.empty() ? "" : "?" + query);
  http.headers = request.headers;
  http.headers.push_back({"x-ms-version", kApiVersion});
  http.body = request.body;
  http.body_file = request.body_file;
  http.sink = request.sink;
  http.sink_capacity = request.sink_capacity;
  const RequestSigner sign = [&](HttpRequest& attempt) {
    if (attempts != nullptr) ++*attempts;
    attempt.headers.push_back({"x-ms-date", HttpDateNow()});
    if (!shared_key) return;
    SignableRequest signable{attempt.method, host_, request.path, request.query, attempt.headers, ""};
    if (request.body_size > 0) signable.headers.push_back({"Content-Length", std::to_string(request.body_size)});
    attempt.headers.push_back(SignAzureSharedKey(signable, settings_.account, settings_.account_key_base64));
  };
  HttpConnectionPool::Lease connection = pool_.Acquire();
  return SendWithRetries(*connection, http, options_.retry, sign, what);
}

void AzureBlobStore::Fail(const std::string& what, const HttpReply& reply) const {
  std::string code = reply.Header("x-ms-error-code");
  if (code.empty()) code = XmlText(reply.body, "Code");
  std::string message = FirstLine(XmlText(reply.body, "Message"));
  Redact(&message, settings_.account_key_base64);
  Redact(&message, settings_.sas_token);
  std::string hint;
  if (code == "ContainerNotFound") {
    hint = StrCat("container '", container_, "' does not exist in storage account '", settings_.account, "'");
  } else if (code == "BlobNotFound" || code == "CannotVerifyCopySource" || (reply.status == 404 && code.empty())) {
    hint = "no such blob";
  } else if (code == "InvalidRange" || reply.status == 416) {
    hint = "the range starts past the end of the blob";
  } else if (reply.status == 403 || code.rfind("Authentication", 0) == 0 || code.rfind("Authorization", 0) == 0) {
    if (!settings_.account_key_base64.empty()) {
      hint = StrCat("check AZURE_STORAGE_KEY (or the connection string's AccountKey) for storage account '",
                    settings_.account, "'");
    } else if (!settings_.sas_token.empty()) {
      hint = "check AZURE_STORAGE_SAS_TOKEN: its services, resource types, permissions and expiry";
    } else {
      hint = "the request was anonymous: set AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN";
    }
  }
  LAKERUN_THROW(IoError, what, " failed: HTTP ", reply.status, code.empty() ? "" : " " + code,
                message.empty() ? "" : ": " + message, hint.empty() ? "" : " (" + hint + ")");
}

std::optional<ObjectInfo> AzureBlobStore::Head(const std::string& key) {
  const std::string what = "HEAD " + Uri(key);
  const HttpReply reply = Send({"HEAD", BlobPath(key), ""}, what);
  // A HEAD reply has no body: the error code comes in x-ms-error-code alone.
  if (reply.status == 404 && reply.Header("x-ms-error-code") != "ContainerNotFound") return std::nullopt;
  if (reply.status != 200) Fail(what, reply);
  ObjectInfo info;
  info.key = key;
  info.size = ParseSize(reply.Header("content-length"));
  info.mtime_ms = ParseHttpDate(reply.Header("last-modified"));
  info.etag = Unquote(reply.Header("etag"));
  return info;
}

void AzureBlobStore::GetRange(const std::string& key, uint64_t offset, size_t n, char* out) {
  if (n == 0) return;
  const uint64_t last = offset + n - 1;
  const std::string what = StrCat("GET ", Uri(key), " bytes ", offset, "-", last);
  Request request{"GET", BlobPath(key), ""};
  request.headers.push_back({"x-ms-range", StrCat("bytes=", offset, "-", last)});
  request.sink = out;
  request.sink_capacity = n;
  const HttpReply reply = Send(request, what);
  if (reply.status != 206 && reply.status != 200) Fail(what, reply);
  LAKERUN_CHECK_AS(IoError, reply.sink_bytes == n, what, " failed: short read of ", reply.sink_bytes, " of ", n,
                   " bytes (the blob ends inside the range)");
}

bool AzureBlobStore::Put(const std::string& key, std::string_view data, bool if_absent) {
  const std::string what = "PUT " + Uri(key);
  Request request{"PUT", BlobPath(key), ""};
  request.headers.push_back({"x-ms-blob-type", "BlockBlob"});
  if (if_absent) request.headers.push_back({"If-None-Match", "*"});
  request.body = data;
  request.body_size = data.size();
  int attempts = 0;
  const HttpReply reply = Send(request, what, &attempts);
  if (reply.status == 201) return true;
  const std::string code = reply.Header("x-ms-error-code");
  const bool exists = (reply.status == 409 || reply.status == 412) &&
                      (code.empty() || code == "BlobAlreadyExists" || code == "ConditionNotMet");
  if (if_absent && exists) {
    // After a retry, the blob that is there may be ours: an earlier attempt wrote it and its reply was lost.
    if (attempts > 1) {
      const std::optional<ObjectInfo> info = Head(key);
      if (info.has_value() && info->size == data.size()) {
        std::string there(data.size(), '\0');
        GetRange(key, 0, there.size(), there.data());
        if (there == data) return true;
      }
    }
    return false;
  }
  Fail(what, reply);
}

void AzureBlobStore::PutFile(const std::string& key, const std::string& local_path) {
  struct stat st {};
  LAKERUN_CHECK_AS(IoError, ::stat(local_path.c_str(), &st) == 0, "cannot upload ", local_path, " to ", Uri(key),
                   ": ", std::strerror(errno));
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > options_.block_upload_threshold) {
    PutBlocks(key, local_path, size);
    return;
  }
  const std::string what = "PUT " + Uri(key);
  Request request{"PUT", BlobPath(key), ""};
  request.headers.push_back({"x-ms-blob-type", "BlockBlob"});
  request.body_file = local_path;
  request.body_size = size;
  const HttpReply reply = Send(request, what);
  if (reply.status != 201) Fail(what, reply);
}

// Put Block for each block_size slice of the file (read into memory one at a time), then Put Block List.
void AzureBlobStore::PutBlocks(const std::string& key, const std::string& local_path, uint64_t size) {
  const uint64_t blocks = (size + options_.block_size - 1) / options_.block_size;
  LAKERUN_CHECK_AS(ConfigError, blocks <= kMaxBlocks, "cannot upload ", local_path, " (", size, " bytes) to ",
                   Uri(key), ": it needs ", blocks, " blocks of AzureStoreOptions::block_size ", options_.block_size,
                   " bytes, more than the ", kMaxBlocks, " a blob can hold");
  std::ifstream in(local_path, std::ios::binary);
  LAKERUN_CHECK_AS(IoError, in.good(), "cannot open ", local_path, " to upload it to ", Uri(key));
  std::string block_list = "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>";
  std::string buffer;
  for (uint64_t i = 0; i < blocks; ++i) {
    const uint64_t length = std::min<uint64_t>(options_.block_size, size - i * options_.block_size);
    buffer.resize(length);
    in.read(buffer.data(), static_cast<std::streamsize>(length));
    LAKERUN_CHECK_AS(IoError, static_cast<uint64_t>(in.gcount()) == length, "cannot read ", local_path,
                     " at offset ", i * options_.block_size, " to upload it to ", Uri(key),
                     " (did it shrink while uploading?)");
    char name[32];
    std::snprintf(name, sizeof(name), "lakerun-%010llu", static_cast<unsigned long long>(i));  // ids: equal length
    const std::string id = Base64Encode(name);
    const std::string what = StrCat("PUT ", Uri(key), " block ", i, " of ", blocks);
    Request request{"PUT", BlobPath(key), "comp=block&blockid=" + UriEncode(id, false)};
    request.body = buffer;
    request.body_size = length;
    const HttpReply reply = Send(request, what);
    if (reply.status != 201) Fail(what, reply);
    block_list += "<Latest>" + id + "</Latest>";
  }
  block_list += "</BlockList>";
  const std::string what = StrCat("PUT ", Uri(key), " block list of ", blocks, " blocks");
  Request request{"PUT", BlobPath(key), "comp=blocklist"};
  request.body = block_list;
  request.body_size = block_list.size();
  const HttpReply reply = Send(request, what);
  if (reply.status != 201) Fail(what, reply);
}

ObjectListing AzureBlobStore::List(const std::string& prefix, bool delimited) {
  const std::string what = StrCat("LIST ", Uri(prefix), delimited ? " (delimited)" : "");
  ObjectListing listing;
  std::string marker;
  do {
    std::string query = "restype=container&comp=list";
    if (!prefix.empty()) query += "&prefix=" + UriEncode(prefix, false);
    if (delimited) query += "&delimiter=%2F";
    if (!marker.empty()) query += "&marker=" + UriEncode(marker, false);
    if (options_.max_results > 0) query += StrCat("&maxresults=", options_.max_results);
    const HttpReply reply = Send({"GET", base_path_ + "/" + container_, query}, what);
    if (reply.status != 200) Fail(what, reply);
    for (const std::string_view blob : XmlElements(reply.body, "Blob")) {
      ObjectInfo info;
      info.key = XmlText(blob, "Name");
      info.size = ParseSize(XmlText(blob, "Content-Length"));
      info.mtime_ms = ParseHttpDate(XmlText(blob, "Last-Modified"));
      info.etag = Unquote(XmlText(blob, "Etag"));
      listing.objects.push_back(std::move(info));
    }
    for (const std::string_view blob_prefix : XmlElements(reply.body, "BlobPrefix")) {
      listing.subprefixes.push_back(XmlText(blob_prefix, "Name"));
    }
    marker = XmlText(reply.body, "NextMarker");
  } while (!marker.empty());
  std::sort(listing.objects.begin(), listing.objects.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  std::sort(listing.subprefixes.begin(), listing.subprefixes.end());
  return listing;
}

bool AzureBlobStore::AnyUnder(const std::string& prefix) {
  const std::string what = StrCat("LIST ", Uri(prefix), " (one blob)");
  std::string query = "restype=container&comp=list&maxresults=1";
  if (!prefix.empty()) query += "&prefix=" + UriEncode(prefix, false);
  const HttpReply reply = Send({"GET", base_path_ + "/" + container_, query}, what);
  if (reply.status != 200) Fail(what, reply);
  return !XmlElements(reply.body, "Blob").empty();
}

void AzureBlobStore::Delete(const std::string& key) {
  const std::string what = "DELETE " + Uri(key);
  const HttpReply reply = Send({"DELETE", BlobPath(key), ""}, what);
  if (reply.status == 202 || (reply.status == 404 && reply.Header("x-ms-error-code") != "ContainerNotFound")) return;
  Fail(what, reply);
}

std::optional<std::string> AzureBlobStore::CopyStatus(const std::string& to) {
  const std::string what = "HEAD " + Uri(to);
  const HttpReply reply = Send({"HEAD", BlobPath(to), ""}, what);
  if (reply.status == 404) return std::nullopt;
  if (reply.status != 200) Fail(what, reply);
  return reply.Header("x-ms-copy-status");
}

void AzureBlobStore::Copy(const std::string& from, const std::string& to) {
  const std::string what = StrCat("COPY ", Uri(from), " to ", Uri(to));
  Request request{"PUT", BlobPath(to), ""};
  // The source is named by URL; with a SAS it carries the SAS too (a header, never printed).
  const bool sas = settings_.account_key_base64.empty() && !settings_.sas_token.empty();
  request.headers.push_back({"x-ms-copy-source", origin_ + BlobPath(from) + (sas ? "?" + settings_.sas_token : "")});
  const HttpReply reply = Send(request, what);
  if (reply.status != 202 && reply.status != 201) Fail(what, reply);
  std::optional<std::string> status = reply.Header("x-ms-copy-status");
  // Copies within an account are usually synchronous; a pending one is polled, bounded by copy_timeout.
  const auto deadline = std::chrono::steady_clock::now() + options_.copy_timeout;
  auto pause = std::chrono::milliseconds(50);
  while (status == "pending") {
    LAKERUN_CHECK_AS(IoError, std::chrono::steady_clock::now() < deadline, what, " failed: still pending after ",
                     options_.copy_timeout.count(), " ms");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(1000));
    status = CopyStatus(to);
  }
  LAKERUN_CHECK_AS(IoError, status.has_value(), what, " failed: the copy disappeared while pending");
  LAKERUN_CHECK_AS(IoError, status->empty() || *status == "success", what, " failed: copy status '", *status, "'");
}

void AzureBlobStore::CreateContainer() {
  const std::string what = "CREATE CONTAINER " + root_uri_;
  const HttpReply reply = Send({"PUT", base_path_ + "/" + container_, "restype=container"}, what);
  if (reply.status == 201) return;
  if (reply.status == 409 && reply.Header("x-ms-error-code") == "ContainerAlreadyExists") return;
  Fail(what, reply);
}

}  // namespace lakerun::objstore
