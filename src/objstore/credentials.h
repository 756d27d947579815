// Credentials for the object stores, found where each ecosystem's own tools look (private to lakerun::objstore).
// Secrets found here must never reach a log line, an error message or a tracked parameter: errors name the
// variable or file and profile they came from, never the value.
#pragma once

#include <optional>
#include <string>

#include "objstore/signing.h"

namespace lakerun::objstore {

/// Where AWS settings come from: the variables AWS's SDKs read.
///  - AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (all from the environment, or none);
///  - else the profile AWS_PROFILE (default "default") in AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials)
///    and AWS_CONFIG_FILE (default ~/.aws/config, where sections are "[profile NAME]", except "[default]");
///  - region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else "us-east-1";
///  - endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's `endpoint_url`, else none (AWS itself).
/// Credentials keys in a profile: aws_access_key_id, aws_secret_access_key, aws_session_token.
/// A profile's settings come from both files, the credentials file's winning. An empty variable counts as unset.
struct AwsSettings {
  std::optional<AwsCredentials> credentials;  ///< nullopt: anonymous requests
  /// "environment", "profile 'dev' in /root/.aws/credentials" (the file holding the key id), or "anonymous"
  std::string credentials_source;
  std::string region;
  std::string endpoint_url;  ///< "" for AWS; else e.g. "http://127.0.0.1:4568" (no trailing '/')
  /// AWS_S3_FORCE_PATH_STYLE (true/false/1/0/yes/no/on/off), else the profile's nested "s3 =" block's
  /// addressing_style (path, virtual or auto), else true exactly when endpoint_url is set.
  bool force_path_style = false;
};

/// Reads AwsSettings from the environment and profile files. A profile named explicitly (AWS_PROFILE) that no file
/// holds, or a file line that cannot be parsed, is a ConfigError naming the file and line (not its value); so is
/// a key id without its secret (or the reverse), in the environment or in a profile. Missing files are empty.
/// Files: "[section]" lines, "key = value" lines (keys case-insensitive), whole-line '#' and ';' comments, and
/// indented "key = value" lines under a "parent =" line (read as "parent.key").
AwsSettings LoadAwsSettings();

/// Azure: AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY (Shared Key) or AZURE_STORAGE_SAS_TOKEN (a SAS, with or
/// without its leading '?'); AZURE_STORAGE_CONNECTION_STRING (AccountName=..;AccountKey=..;BlobEndpoint=..) also
/// works. Endpoint: AZURE_STORAGE_BLOB_ENDPOINT or the connection string's BlobEndpoint, else
/// https://ACCOUNT.blob.core.windows.net.
/// The connection string is used for credentials only when neither AZURE_STORAGE_KEY nor AZURE_STORAGE_SAS_TOKEN is
/// set; its names are case-insensitive; its endpoint may also come from DefaultEndpointsProtocol and EndpointSuffix
/// (other clouds), and "UseDevelopmentStorage=true" stands for Azurite's documented devstoreaccount1 on
/// http://127.0.0.1:10000. Neither key nor SAS: anonymous requests (public containers).
struct AzureSettings {
  std::string account;
  std::string account_key_base64;  ///< Shared Key; empty when a SAS is used
  std::string sas_token;           ///< without '?'; empty when a key is used
  std::string blob_endpoint;       ///< "" for the default; no trailing '/'
};

/// Reads AzureSettings. `account` from the URI wins over AZURE_STORAGE_ACCOUNT when not empty; the connection
/// string's AccountName is the last choice. ConfigError (naming variables, never values) when both a key and a SAS
/// are given, when the key is not base64, when the connection string is malformed or names another account, and
/// when there is no account (unless an endpoint is set and no key is).
AzureSettings LoadAzureSettings(const std::string& account);

/// GCS: HMAC keys for its S3-compatible XML API (GCS_HMAC_ACCESS_ID / GCS_HMAC_SECRET, also the AWS variables
/// when those are unset), or an OAuth 2 access token (GOOGLE_OAUTH_ACCESS_TOKEN, or CLOUDSDK_AUTH_ACCESS_TOKEN).
/// Endpoint: STORAGE_EMULATOR_HOST ("http://" prepended when it has no scheme, as Google's clients do) or
/// GCS_ENDPOINT_URL, else https://storage.googleapis.com; no trailing '/'. An id without its secret (or the reverse)
/// is a ConfigError naming the variables. Both HMAC keys and a token may be set: the caller chooses.
struct GcsSettings {
  std::optional<AwsCredentials> hmac;
  std::string oauth_token;
  std::string endpoint_url;
};
GcsSettings LoadGcsSettings();

}  // namespace lakerun::objstore
