#include "objstore/store_factory.h"

#include <cstdlib>
#include <string>

#include "lakerun/base/error.h"
#include "objstore/azure_store.h"
#include "objstore/credentials.h"
#include "objstore/s3_store.h"

namespace lakerun::objstore {
namespace {

// A positive whole number from the environment variable `name`, or `fallback` when unset.
int64_t EnvPositive(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  LAKERUN_CHECK_AS(ConfigError, *end == '\0' && value > 0 && value < (1LL << 31), name, "='", text,
                   "': expected a positive whole number");
  return value;
}

std::unique_ptr<ObjectStore> MakeS3(const ObjectUri& uri) {
  const AwsSettings settings = LoadAwsSettings();
  S3StoreConfig config;
  config.bucket = uri.bucket;
  config.root_uri = uri.root;
  config.endpoint_url = settings.endpoint_url;
  config.region = settings.region;
  config.path_style = settings.force_path_style;
  config.credentials = settings.credentials;
  config.credentials_source = settings.credentials_source;
  config.retry = ObjectStoreRetryPolicy();
  return std::make_unique<S3Store>(std::move(config));
}

std::unique_ptr<ObjectStore> MakeGcs(const ObjectUri& uri) {
  const GcsSettings settings = LoadGcsSettings();
  S3StoreConfig config;
  config.bucket = uri.bucket;
  config.root_uri = uri.root;
  config.gcs = true;
  config.endpoint_url = settings.endpoint_url;
  config.path_style = true;
  config.region = "auto";
  config.credentials = settings.hmac;
  config.credentials_source = "GCS HMAC keys";
  config.bearer_token = settings.oauth_token;
  config.retry = ObjectStoreRetryPolicy();
  return std::make_unique<S3Store>(std::move(config));
}

}  // namespace

RetryPolicy ObjectStoreRetryPolicy() {
  RetryPolicy policy;
  policy.max_retries = static_cast<int>(EnvPositive("AWS_MAX_ATTEMPTS", 8)) - 1;
  policy.backoff_base = std::chrono::milliseconds(100);
  policy.backoff_max = std::chrono::milliseconds(5000);
  policy.jitter = std::chrono::milliseconds(100);
  policy.max_retry_time = std::chrono::seconds(EnvPositive("LAKERUN_OBJSTORE_TIMEOUT", 60));
  policy.request_timeout = policy.max_retry_time;
  policy.connect_timeout = std::chrono::seconds(10);
  return policy;
}

std::unique_ptr<ObjectStore> MakeStore(const ObjectUri& uri) {
  switch (uri.kind) {
    case StoreKind::kS3:
      return MakeS3(uri);
    case StoreKind::kGcs:
      return MakeGcs(uri);
    case StoreKind::kAzure: {
      AzureStoreOptions options;
      options.retry = ObjectStoreRetryPolicy();
      return std::make_unique<AzureBlobStore>(LoadAzureSettings(uri.account), uri.bucket, uri.root, options);
    }
  }
  LAKERUN_THROW(InternalError, "unknown store kind for ", uri.root);
}

}  // namespace lakerun::objstore
