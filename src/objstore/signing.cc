// AWS Signature Version 4 (the S3 flavour: single URI encoding) and Azure Storage Shared Key. Both sign a canonical
// text built from the request; the canonical forms follow the providers' documentation ("Signature Calculations for
// the Authorization Header" for S3, "Authorize with Shared Key" for Azure Storage), and the tests check them against
// the published examples.
#include "objstore/signing.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <utility>

#include "lakerun/base/error.h"
#include "lakerun/base/crypto.h"
#include "objstore/http.h"  // UriEncode, UriDecode: AWS's encoding rules are RFC 3986's

namespace lakerun::objstore {
namespace {

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), AsciiLower);
  return lower;
}

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// A header value as both providers canonicalize it: no leading or trailing blanks, inner runs of blanks as one space.
std::string CanonicalValue(std::string_view value) {
  std::string out;
  bool pending_space = false;
  for (const char c : value) {
    if (c == ' ' || c == '\t') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// The request's headers by lower-cased name (sorted), values canonicalized, repeated names joined with ','.
std::map<std::string, std::string> HeadersByName(const std::vector<HttpHeader>& headers) {
  std::map<std::string, std::string> by_name;
  for (const HttpHeader& header : headers) {
    const std::string name = Lower(header.name);
    auto [it, inserted] = by_name.emplace(name, CanonicalValue(header.value));
    if (!inserted) it->second += "," + CanonicalValue(header.value);
  }
  return by_name;
}

// The query's parameters, names and values %XX-decoded, in their order; empty pieces ("a=1&&b=2") are skipped.
std::vector<std::pair<std::string, std::string>> DecodedQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view piece = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (piece.empty()) continue;
    const size_t eq = piece.find('=');
    const std::string_view name = piece.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : piece.substr(eq + 1);
    params.emplace_back(UriDecode(name), UriDecode(value));
  }
  return params;
}

std::string AwsCanonicalQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  for (const auto& [name, value] : DecodedQuery(query)) {
    encoded.emplace_back(UriEncode(name, false), UriEncode(value, false));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

bool IsAwsSignedHeader(const std::string& lower_name) {
  return lower_name == "host" || StartsWith(lower_name, "x-amz-") || lower_name == "content-type" ||
         lower_name == "content-md5" || lower_name == "range" || lower_name == "date" || StartsWith(lower_name, "if-");
}

void CheckAmzDate(std::string_view amz_date) {
  bool ok = amz_date.size() == 16 && amz_date[8] == 'T' && amz_date[15] == 'Z';
  for (size_t i = 0; ok && i < 15; ++i) ok = i == 8 || (amz_date[i] >= '0' && amz_date[i] <= '9');
  LAKERUN_CHECK(ok, "SigV4 date must be YYYYMMDD'T'HHMMSS'Z', got '", amz_date, "'");
}

struct AwsCanonical {
  std::string request;
  std::string signed_headers;  // "host;range;x-amz-date"
};

AwsCanonical BuildAwsCanonical(const SignableRequest& request, std::string_view amz_date,
                               std::string_view session_token) {
  CheckAmzDate(amz_date);
  LAKERUN_CHECK(!request.payload_sha256_hex.empty(), "SigV4: payload_sha256_hex must be a hex SHA-256 or "
                "UNSIGNED-PAYLOAD");
  std::map<std::string, std::string> headers = HeadersByName(request.headers);
  for (const char* added : {"host", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token", "authorization"}) {
    LAKERUN_CHECK(headers.count(added) == 0, "SigV4: the request already has a '", added,
                  "' header; the signer sets it");
  }
  headers["host"] = CanonicalValue(request.host);
  headers["x-amz-date"] = std::string(amz_date);
  headers["x-amz-content-sha256"] = request.payload_sha256_hex;
  if (!session_token.empty()) headers["x-amz-security-token"] = CanonicalValue(session_token);

  AwsCanonical canonical;
  std::string header_lines;
  for (const auto& [name, value] : headers) {
    if (!IsAwsSignedHeader(name)) continue;
    header_lines += name + ":" + value + "\n";
    canonical.signed_headers += (canonical.signed_headers.empty() ? "" : ";") + name;
  }
  const std::string uri = request.path.empty() ? "/" : UriEncode(UriDecode(request.path), true);
  canonical.request = StrCat(request.method, "\n", uri, "\n", AwsCanonicalQuery(request.query), "\n", header_lines,
                             "\n", canonical.signed_headers, "\n", request.payload_sha256_hex);
  return canonical;
}

// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request").
std::string AwsSigningKey(std::string_view secret, std::string_view date, std::string_view region,
                          std::string_view service) {
  std::string key = DigestBytes(HmacSha256("AWS4" + std::string(secret), date));
  key = DigestBytes(HmacSha256(key, region));
  key = DigestBytes(HmacSha256(key, service));
  return DigestBytes(HmacSha256(key, "aws4_request"));
}

// gmtime_r of `unix_seconds` (time_t is 64-bit where lakerun builds).
std::tm UtcTime(int64_t unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  return tm;
}

int64_t NowSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

}  // namespace

std::string AwsCanonicalRequest(const SignableRequest& request, std::string_view amz_date,
                                std::string_view session_token) {
  return BuildAwsCanonical(request, amz_date, session_token).request;
}

std::vector<HttpHeader> SignAwsV4(const SignableRequest& request, const AwsCredentials& credentials,
                                  std::string_view region, std::string_view service, std::string_view amz_date) {
  const AwsCanonical canonical = BuildAwsCanonical(request, amz_date, credentials.session_token);
  const std::string_view date = amz_date.substr(0, 8);
  const std::string scope = StrCat(date, "/", region, "/", service, "/aws4_request");
  const std::string string_to_sign =
      StrCat("AWS4-HMAC-SHA256\n", amz_date, "\n", scope, "\n", HexLower(Sha256(canonical.request)));
  const std::string key = AwsSigningKey(credentials.secret_access_key, date, region, service);
  const std::string signature = HexLower(HmacSha256(key, string_to_sign));

  std::vector<HttpHeader> added = {{"x-amz-date", std::string(amz_date)},
                                   {"x-amz-content-sha256", request.payload_sha256_hex}};
  if (!credentials.session_token.empty()) added.push_back({"x-amz-security-token", credentials.session_token});
  added.push_back({"Authorization", StrCat("AWS4-HMAC-SHA256 Credential=", credentials.access_key_id, "/", scope,
                                           ",SignedHeaders=", canonical.signed_headers, ",Signature=", signature)});
  return added;
}

std::string FormatAmzDate(int64_t unix_seconds) {
  const std::tm tm = UtcTime(unix_seconds);
  char text[80];
  std::snprintf(text, sizeof(text), "%04d%02d%02dT%02d%02d%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec);
  return text;
}

std::string AmzDateNow() { return FormatAmzDate(NowSeconds()); }

std::string AzureStringToSign(const SignableRequest& request, std::string_view account) {
  const std::map<std::string, std::string> headers = HeadersByName(request.headers);
  auto header = [&headers](const std::string& name) {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  };
  // From version 2015-02-21 the service signs a zero Content-Length as "" (a missing x-ms-version counts as new).
  std::string content_length = header("content-length");
  const std::string version = header("x-ms-version");
  if (content_length == "0" && (version.empty() || version >= "2015-02-21")) content_length.clear();

  std::string text = request.method + "\n";
  for (const char* name : {"content-encoding", "content-language"}) text += header(name) + "\n";
  text += content_length + "\n";
  for (const char* name : {"content-md5", "content-type", "date", "if-modified-since", "if-match", "if-none-match",
                           "if-unmodified-since", "range"}) {
    text += header(name) + "\n";
  }
  for (const auto& [name, value] : headers) {
    if (StartsWith(name, "x-ms-")) text += name + ":" + value + "\n";
  }
  text += StrCat("/", account, request.path.empty() ? "/" : request.path);
  std::map<std::string, std::vector<std::string>> params;
  for (auto& [name, value] : DecodedQuery(request.query)) params[Lower(name)].push_back(std::move(value));
  for (auto& [name, values] : params) {
    std::sort(values.begin(), values.end());
    text += "\n" + name + ":";
    for (size_t i = 0; i < values.size(); ++i) text += (i > 0 ? "," : "") + values[i];
  }
  return text;
}

HttpHeader SignAzureSharedKey(const SignableRequest& request, std::string_view account,
                              std::string_view account_key_base64) {
  const std::map<std::string, std::string> headers = HeadersByName(request.headers);
  LAKERUN_CHECK(headers.count("x-ms-date") == 1 && headers.count("x-ms-version") == 1,
                "Azure Shared Key: the request must carry x-ms-date and x-ms-version before it is signed");
  const std::string key = Base64Decode(account_key_base64, "the Azure storage account key");
  const std::string signature = Base64Encode(DigestBytes(HmacSha256(key, AzureStringToSign(request, account))));
  return {"Authorization", StrCat("SharedKey ", account, ":", signature)};
}

std::string FormatHttpDate(int64_t unix_seconds) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::tm tm = UtcTime(unix_seconds);
  char text[80];
  std::snprintf(text, sizeof(text), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday], tm.tm_mday,
                kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return text;
}

std::string HttpDateNow() { return FormatHttpDate(NowSeconds()); }

}  // namespace lakerun::objstore
