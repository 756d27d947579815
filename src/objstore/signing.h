// Request signing for the object stores (private to lakerun::objstore): AWS Signature Version 4 (S3, and GCS's XML
// API with HMAC keys) and Azure Storage Shared Key. Pure functions over a request description, so they are tested
// against the providers' published examples without a network.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::objstore {

struct HttpHeader {
  std::string name;
  std::string value;
};

/// What a signer needs to know of a request. `path` is the URL's path exactly as sent (already percent-encoded),
/// `query` the raw query string without '?' (already percent-encoded, any order).
struct SignableRequest {
  std::string method;
  std::string host;  ///< the Host header's value, with ":port" when the URL has one
  std::string path;
  std::string query;
  std::vector<HttpHeader> headers;  ///< headers that will be sent, Host excluded
  std::string payload_sha256_hex;   ///< SigV4: hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
};

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  ///< empty for long-term keys
};

/// Signs for AWS SigV4: returns the headers to add (x-amz-date, x-amz-content-sha256, x-amz-security-token when a
/// session token is set, and Authorization). `amz_date` is "YYYYMMDD'T'HHMMSS'Z'" (UTC). Signed headers: host,
/// every x-amz-* header, content-type, content-md5, range, date and the If-* preconditions present in `request`.
/// `request.headers` must not already hold the headers this adds (an InvalidArgument).
///
/// The canonical URI is S3's: the path decoded and encoded again with AWS's rules ('/' kept, no double encoding, no
/// dot-segment removal); "" is "/". Query parameters are likewise decoded and re-encoded, then sorted by name and
/// value; a parameter without '=' gets an empty value ("lifecycle" signs as "lifecycle="). Header names are
/// lower-cased, values trimmed with inner runs of spaces and tabs collapsed to one space, repeated headers joined
/// with ','.
std::vector<HttpHeader> SignAwsV4(const SignableRequest& request, const AwsCredentials& credentials,
                                  std::string_view region, std::string_view service, std::string_view amz_date);

/// SigV4's canonical request for `request` as SignAwsV4 signs it, the headers SignAwsV4 adds included
/// (x-amz-security-token only when `session_token` is not empty). For tests against AWS's published examples.
std::string AwsCanonicalRequest(const SignableRequest& request, std::string_view amz_date,
                                std::string_view session_token);

/// The current UTC time as SigV4's "YYYYMMDD'T'HHMMSS'Z'".
std::string AmzDateNow();
/// `unix_seconds` (UTC) as SigV4's "YYYYMMDD'T'HHMMSS'Z'".
std::string FormatAmzDate(int64_t unix_seconds);

/// Signs for Azure Storage Shared Key (version 2009-09-19 and later): returns the Authorization header
/// ("SharedKey account:signature"). `request.headers` must already hold x-ms-date and x-ms-version.
/// `account_key_base64` is the key as the portal shows it. The canonicalized resource is "/account/path" plus the
/// query parameters, lower-cased names, sorted, values URL-decoded, as the service computes it.
/// A key that is not base64 is a ConfigError that does not show it.
HttpHeader SignAzureSharedKey(const SignableRequest& request, std::string_view account,
                              std::string_view account_key_base64);

/// The Shared Key string-to-sign that SignAzureSharedKey signs (HMAC-SHA256 with the decoded key, then base64):
///   VERB, Content-Encoding, Content-Language, Content-Length, Content-MD5, Content-Type, Date, If-Modified-Since,
///   If-Match, If-None-Match, If-Unmodified-Since and Range, each followed by '\n' ("" when absent; Content-Length
///   "" when "0" from x-ms-version 2015-02-21 on, as the service does);
///   then "name:value\n" for each x-ms-* header, names lower-cased and sorted, values trimmed;
///   then "/" + account + path ("/" when empty), and "\nname:value" for each query parameter, names lower-cased and
///   sorted, values %XX-decoded, several values of one name sorted and joined with ','.
/// Header names are matched case-insensitively; repeated headers are joined with ','. Exposed for tests.
std::string AzureStringToSign(const SignableRequest& request, std::string_view account);

/// RFC 1123 date of now in GMT, as x-ms-date wants ("Thu, 26 Nov 2026 12:00:00 GMT").
std::string HttpDateNow();
/// `unix_seconds` as an RFC 1123 date in GMT (English day and month names, whatever the locale).
std::string FormatHttpDate(int64_t unix_seconds);

}  // namespace lakerun::objstore
