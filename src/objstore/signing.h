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
/// every x-amz-* header, content-type, content-md5, range and the If-* preconditions present in `request`.
std::vector<HttpHeader> SignAwsV4(const SignableRequest& request, const AwsCredentials& credentials,
                                  std::string_view region, std::string_view service, std::string_view amz_date);

/// The current UTC time as SigV4's "YYYYMMDD'T'HHMMSS'Z'".
std::string AmzDateNow();

/// Signs for Azure Storage Shared Key (version 2009-09-19 and later): returns the Authorization header
/// ("SharedKey account:signature"). `request.headers` must already hold x-ms-date and x-ms-version.
/// `account_key_base64` is the key as the portal shows it. The canonicalized resource is "/account/path" plus the
/// query parameters, lower-cased names, sorted, values URL-decoded, as the service computes it.
HttpHeader SignAzureSharedKey(const SignableRequest& request, std::string_view account,
                              std::string_view account_key_base64);

/// RFC 1123 date of now in GMT, as x-ms-date wants ("Tue, 26 Nov 2026 12:00:00 GMT").
std::string HttpDateNow();

}  // namespace lakerun::objstore
