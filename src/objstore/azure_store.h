// One Azure Blob Storage container as an ObjectStore (private to lakerun::objstore), over the Blob REST API
// (x-ms-version 2021-08-06) with Shared Key or SAS authentication. ADLS Gen2 accounts (abfss://) are served through
// the same Blob endpoint.
//
// Errors are IoErrors naming the blob as root_uri() + "/" + key, the HTTP status and the service's error code and
// message. Authentication failures and a missing container say which setting to check; no error ever holds the
// account key, a SAS or a signed URL (requests are named by `what` strings, never by their URL).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "objstore/credentials.h"
#include "objstore/http.h"
#include "objstore/object_store.h"

namespace lakerun::objstore {

struct AzureStoreOptions {
  RetryPolicy retry;
  /// List page size (the maxresults parameter); 0 leaves it to the service (5000).
  int max_results = 0;
  /// PutFile uploads larger files as blocks (Put Block, then Put Block List) of `block_size` bytes each.
  uint64_t block_upload_threshold = 256ull << 20;
  size_t block_size = 64u << 20;
  /// How long Copy waits for a copy the service reports as pending.
  std::chrono::milliseconds copy_timeout{120000};
};

class AzureBlobStore final : public ObjectStore {
 public:
  /// The container `container` of `settings.account`. `root_uri` names it in messages ("az://container" when
  /// empty). Throws ConfigError when the account or container is empty or the key is not base64 (without showing
  /// it). Makes no request.
  AzureBlobStore(AzureSettings settings, std::string container, std::string root_uri = "",
                 AzureStoreOptions options = {});

  const std::string& root_uri() const override { return root_uri_; }
  std::optional<ObjectInfo> Head(const std::string& key) override;
  void GetRange(const std::string& key, uint64_t offset, size_t n, char* out) override;
  bool Put(const std::string& key, std::string_view data, bool if_absent) override;
  void PutFile(const std::string& key, const std::string& local_path) override;
  ObjectListing List(const std::string& prefix, bool delimited) override;
  bool AnyUnder(const std::string& prefix) override;
  void Delete(const std::string& key) override;
  void Copy(const std::string& from, const std::string& to) override;

  /// Creates the container (for tests and setup); one that exists already is fine.
  void CreateContainer();

 private:
  struct Request;
  /// Sends `request` signed (Shared Key) or with the SAS appended, with retries. `what` names it in errors.
  HttpReply Send(const Request& request, const std::string& what, int* attempts = nullptr);
  /// Throws the IoError for a failed reply to `what`.
  [[noreturn]] void Fail(const std::string& what, const HttpReply& reply) const;
  std::string BlobPath(const std::string& key) const;
  std::string Uri(const std::string& key) const { return root_uri_ + "/" + key; }
  std::optional<std::string> CopyStatus(const std::string& to);
  void PutBlocks(const std::string& key, const std::string& local_path, uint64_t size);

  AzureSettings settings_;
  std::string container_;
  std::string root_uri_;
  AzureStoreOptions options_;
  std::string origin_;     // "https://account.blob.core.windows.net" (scheme, host, port)
  std::string host_;       // the Host header's value
  std::string base_path_;  // the endpoint's path, "" or "/devstoreaccount1" (Azurite)
  HttpConnectionPool pool_;
};

}  // namespace lakerun::objstore
