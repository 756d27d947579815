#include "objstore/s3_store.h"

#include <algorithm>
#include <cstdio>

#include "lakerun/base/error.h"
#include "lakerun/base/crypto.h"
#include "objstore/xml.h"

namespace lakerun::objstore {
namespace {

const std::string kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// "https://host:port/anything" -> {"https://host:port", "host:port"}.
std::pair<std::string, std::string> SplitEndpoint(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  const size_t scheme = url.find("://");
  LAKERUN_CHECK_AS(ConfigError, scheme != std::string::npos, "object-store endpoint '", url,
                   "' is not a URL (expected http://HOST:PORT or https://HOST)");
  const size_t slash = url.find('/', scheme + 3);
  const std::string base = url.substr(0, slash);
  return {base, base.substr(scheme + 3)};
}

std::string Quoted(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return std::string(etag);
}

// Size, time and ETag of `key` from the headers of a HEAD or GET reply (a 206's size is its range's, not the
// object's: callers of partial answers set it themselves).
ObjectInfo InfoFromReply(const std::string& key, const HttpReply& reply) {
  ObjectInfo info;
  info.key = key;
  const std::string length = reply.Header("content-length");
  info.size = length.empty() ? reply.body.size() : std::stoull(length);
  info.mtime_ms = ParseTimestampMs(reply.Header("last-modified"));
  info.etag = Quoted(reply.Header("etag"));
  return info;
}

}  // namespace

S3Store::S3Store(S3StoreConfig config) : config_(std::move(config)) {
  if (config_.endpoint_url.empty()) {
    const std::string host = config_.gcs ? "storage.googleapis.com" : "s3." + config_.region + ".amazonaws.com";
    config_.endpoint_url = "https://" + host;
    if (config_.gcs) config_.path_style = true;
  }
  auto [base, host] = SplitEndpoint(config_.endpoint_url);
  if (!config_.path_style) {  // virtual-host addressing: the bucket is the first label of the host
    const size_t scheme = base.find("://");
    base = base.substr(0, scheme + 3) + config_.bucket + "." + host;
    host = config_.bucket + "." + host;
  }
  base_url_ = base;
  host_ = host;
}

std::string S3Store::ObjectPath(const std::string& key) const {
  std::string path = config_.path_style ? "/" + UriEncode(config_.bucket, false) : std::string();
  return path + "/" + UriEncode(key, /*keep_slash=*/true);
}

HttpReply S3Store::Send(HttpRequest request, const std::string& key, const std::string& query,
                        std::string_view what) {
  const std::string path = ObjectPath(key);
  request.url = base_url_ + path + (query.empty() ? "" : "?" + query);
  std::string payload_hash = kEmptySha256;
  if (!request.body_file.empty()) {
    payload_hash = "UNSIGNED-PAYLOAD";
  } else if (!request.body.empty()) {
    payload_hash = HexLower(Sha256(request.body));
  }
  RequestSigner sign = [&](HttpRequest& attempt) {
    if (config_.credentials) {
      SignableRequest signable{attempt.method, host_, path, query, attempt.headers, payload_hash};
      for (HttpHeader& h : SignAwsV4(signable, *config_.credentials, config_.region, "s3", AmzDateNow())) {
        attempt.headers.push_back(std::move(h));
      }
    } else if (!config_.bearer_token.empty()) {
      attempt.headers.push_back({"Authorization", "Bearer " + config_.bearer_token});
    }
  };
  HttpConnectionPool::Lease connection = pool_.Acquire();
  return SendWithRetries(*connection, request, config_.retry, sign, what);
}

void S3Store::Fail(std::string_view what, const HttpReply& reply) const {
  const std::string code = XmlText(reply.body, "Code");
  const std::string message = XmlText(reply.body, "Message");
  std::string hint;
  if (code == "NoSuchBucket") {
    hint = StrCat(" (bucket '", config_.bucket, "' does not exist at ", config_.endpoint_url, ")");
  } else if (reply.status == 403 || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch") {
    hint = config_.credentials ? StrCat(" (check the credentials from ", config_.credentials_source, ")")
                               : " (no credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                                 "or AWS_PROFILE)";
  }
  LAKERUN_THROW(IoError, what, ": HTTP ", reply.status, code.empty() ? "" : " ", code,
                message.empty() ? "" : ": ", message, hint);
}

std::optional<ObjectInfo> S3Store::Head(const std::string& key) {
  HttpRequest request;
  request.method = "HEAD";
  const std::string what = StrCat("HEAD ", config_.root_uri, "/", key);
  const HttpReply reply = Send(request, key, "", what);
  if (reply.status == 404) return std::nullopt;
  if (reply.status < 200 || reply.status >= 300) Fail(what, reply);
  return InfoFromReply(key, reply);
}

void S3Store::GetRange(const std::string& key, uint64_t offset, size_t n, char* out) {
  if (n == 0) return;
  HttpRequest request;
  request.headers.push_back({"Range", StrCat("bytes=", offset, "-", offset + n - 1)});
  request.sink = out;
  request.sink_capacity = n;
  const std::string what = StrCat("GET ", config_.root_uri, "/", key, " bytes ", offset, "-", offset + n - 1);
  const HttpReply reply = Send(request, key, "", what);
  if (reply.status < 200 || reply.status >= 300) Fail(what, reply);
  LAKERUN_CHECK_AS(IoError, reply.sink_bytes == n, what, ": the store sent ", reply.sink_bytes, " of the ", n,
                   " bytes asked for", reply.status == 200 ? " (it ignored the Range header)" : "");
}

std::optional<ObjectInfo> S3Store::HeadWithTail(const std::string& key, size_t n, std::string* tail) {
  if (n == 0 || !suffix_ranges_) return ObjectStore::HeadWithTail(key, n, tail);
  HttpRequest request;
  request.headers.push_back({"Range", StrCat("bytes=-", n)});
  const std::string what = StrCat("GET ", config_.root_uri, "/", key, " (its last ", n, " bytes)");
  HttpReply reply = Send(request, key, "", what);
  if (reply.status == 404 && XmlText(reply.body, "Code") != "NoSuchBucket") return std::nullopt;
  if (reply.status == 416) return ObjectStore::HeadWithTail(key, n, tail);  // an empty object has no last bytes
  if (reply.status < 200 || reply.status >= 300) Fail(what, reply);
  ObjectInfo info = InfoFromReply(key, reply);
  info.size = reply.body.size();  // 200: the whole object
  if (reply.status == 206) {
    // "bytes FIRST-LAST/SIZE" must describe the object's last bytes: a store that reads "bytes=-n" as "bytes=0-n"
    // (s3rver does) answers with its first bytes instead, and is asked by explicit ranges from then on.
    unsigned long long first = 0, last = 0, size = 0;
    const bool parsed = std::sscanf(reply.Header("content-range").c_str(), "bytes %llu-%llu/%llu", &first, &last,
                                    &size) == 3;
    if (!parsed || last + 1 != size || last + 1 - first != reply.body.size() || reply.body.size() > n) {
      suffix_ranges_ = false;
      return ObjectStore::HeadWithTail(key, n, tail);
    }
    info.size = size;
  }
  *tail = std::move(reply.body);
  return info;
}

bool S3Store::Put(const std::string& key, std::string_view data, bool if_absent) {
  HttpRequest request;
  request.method = "PUT";
  request.body = data;
  request.headers.push_back({"Content-Type", "application/octet-stream"});
  if (if_absent) {
    request.headers.push_back(config_.gcs ? HttpHeader{"x-goog-if-generation-match", "0"}
                                          : HttpHeader{"If-None-Match", "*"});
  }
  const std::string what = StrCat("PUT ", config_.root_uri, "/", key);
  const HttpReply reply = Send(request, key, "", what);
  // 412 Precondition Failed: the object exists. 409 ConditionalRequestConflict: a concurrent conditional write won.
  if (if_absent && (reply.status == 412 || reply.status == 409)) return false;
  if (reply.status < 200 || reply.status >= 300) Fail(what, reply);
  return true;
}

void S3Store::PutFile(const std::string& key, const std::string& local_path) {
  HttpRequest request;
  request.method = "PUT";
  request.body_file = local_path;
  request.headers.push_back({"Content-Type", "application/octet-stream"});
  const std::string what = StrCat("PUT ", config_.root_uri, "/", key);
  const HttpReply reply = Send(request, key, "", what);
  if (reply.status < 200 || reply.status >= 300) Fail(what, reply);
}

ObjectListing S3Store::List(const std::string& prefix, bool delimited) {
  ObjectListing out;
  std::string token;
  const std::string what = StrCat("LIST ", config_.root_uri, "/", prefix);
  do {
    // Query parameters in SigV4's canonical order (sorted by name), each value encoded.
    std::string query = token.empty() ? "" : "continuation-token=" + UriEncode(token, false) + "&";
    if (delimited) query += "delimiter=%2F&";
    query += StrCat("list-type=2&max-keys=", config_.max_keys, "&prefix=", UriEncode(prefix, false));
    const HttpReply reply = Send(HttpRequest(), "", query, what);
    if (reply.status < 200 || reply.status >= 300) Fail(what, reply);
    for (std::string_view contents : XmlElements(reply.body, "Contents")) {
      ObjectInfo info;
      info.key = XmlText(contents, "Key");
      info.size = std::stoull("0" + XmlText(contents, "Size"));
      info.mtime_ms = ParseTimestampMs(XmlText(contents, "LastModified"));
      info.etag = Quoted(XmlText(contents, "ETag"));
      out.objects.push_back(std::move(info));
    }
    for (std::string_view common : XmlElements(reply.body, "CommonPrefixes")) {
      out.subprefixes.push_back(XmlText(common, "Prefix"));
    }
    token = XmlText(reply.body, "IsTruncated") == "true" ? XmlText(reply.body, "NextContinuationToken") : "";
  } while (!token.empty());
  std::sort(out.objects.begin(), out.objects.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
  std::sort(out.subprefixes.begin(), out.subprefixes.end());
  return out;
}

bool S3Store::AnyUnder(const std::string& prefix) {
  const std::string what = StrCat("LIST ", config_.root_uri, "/", prefix, " (one key)");
  const HttpReply reply = Send(HttpRequest(), "", "list-type=2&max-keys=1&prefix=" + UriEncode(prefix, false), what);
  if (reply.status < 200 || reply.status >= 300) Fail(what, reply);
  return !XmlElements(reply.body, "Contents").empty();
}

void S3Store::Delete(const std::string& key) {
  HttpRequest request;
  request.method = "DELETE";
  const std::string what = StrCat("DELETE ", config_.root_uri, "/", key);
  const HttpReply reply = Send(request, key, "", what);
  if (reply.status == 404 && XmlText(reply.body, "Code") != "NoSuchBucket") return;
  if (reply.status < 200 || reply.status >= 300) Fail(what, reply);
}

void S3Store::Copy(const std::string& from, const std::string& to) {
  HttpRequest request;
  request.method = "PUT";
  request.headers.push_back({"x-amz-copy-source", "/" + UriEncode(config_.bucket, false) + "/" +
                                                      UriEncode(from, /*keep_slash=*/true)});
  const std::string what = StrCat("COPY ", config_.root_uri, "/", from, " to ", to);
  const HttpReply reply = Send(request, to, "", what);
  // A copy can fail after its 200 status line: the error is then in the body.
  if (reply.status < 200 || reply.status >= 300 || !XmlText(reply.body, "Code").empty()) Fail(what, reply);
}

}  // namespace lakerun::objstore
