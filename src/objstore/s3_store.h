// One S3 bucket over the S3 REST API (private to lakerun::objstore): AWS S3 and S3-compatible stores (MinIO, Ceph,
// R2, s3rver), and Google Cloud Storage through its S3-compatible XML API (HMAC keys, or an OAuth token).
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "objstore/http.h"
#include "objstore/object_store.h"
#include "objstore/signing.h"

namespace lakerun::objstore {

struct S3StoreConfig {
  std::string bucket;
  std::string root_uri;        ///< "s3://bucket" or "gs://bucket": how objects are named in messages
  std::string endpoint_url;    ///< "" for AWS (https://BUCKET.s3.REGION.amazonaws.com)
  std::string region = "us-east-1";
  bool path_style = false;     ///< ENDPOINT/BUCKET/KEY instead of BUCKET.HOST/KEY
  std::optional<AwsCredentials> credentials;  ///< nullopt and no token: anonymous requests
  std::string credentials_source;             ///< where the credentials came from, for messages
  std::string bearer_token;    ///< GCS OAuth access token, used when credentials are absent
  bool gcs = false;            ///< GCS's XML API: x-goog-if-generation-match: 0 for put-if-absent
  int max_keys = 1000;         ///< objects per listing page
  RetryPolicy retry;
};

class S3Store final : public ObjectStore {
 public:
  explicit S3Store(S3StoreConfig config);

  const std::string& root_uri() const override { return config_.root_uri; }
  std::optional<ObjectInfo> Head(const std::string& key) override;
  void GetRange(const std::string& key, uint64_t offset, size_t n, char* out) override;
  bool Put(const std::string& key, std::string_view data, bool if_absent) override;
  void PutFile(const std::string& key, const std::string& local_path) override;
  ObjectListing List(const std::string& prefix, bool delimited) override;
  bool AnyUnder(const std::string& prefix) override;
  void Delete(const std::string& key) override;
  void Copy(const std::string& from, const std::string& to) override;
  /// One GET with a suffix range ("bytes=-n"); the size comes from its Content-Range. A store that gets suffix
  /// ranges wrong is detected by that Content-Range and asked with HEAD and an explicit range from then on.
  std::optional<ObjectInfo> HeadWithTail(const std::string& key, size_t n, std::string* tail) override;

 private:
  // Sends a signed request for `key` (and `query`, already encoded) and returns the reply, whatever its status.
  HttpReply Send(HttpRequest request, const std::string& key, const std::string& query, std::string_view what);
  std::string ObjectPath(const std::string& key) const;  // the URL path, encoded
  [[noreturn]] void Fail(std::string_view what, const HttpReply& reply) const;

  S3StoreConfig config_;
  std::string base_url_;  // scheme://host[:port] (with the bucket in the host for virtual-host addressing)
  std::string host_;      // the Host header
  HttpConnectionPool pool_;
  std::atomic<bool> suffix_ranges_{true};  // cleared when the store answers a suffix range with the wrong bytes
};

}  // namespace lakerun::objstore
