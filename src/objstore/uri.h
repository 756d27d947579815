// Object-store URIs as users write them (private to lakerun::objstore):
//   s3://bucket/key (also s3a://, s3n://)                       S3 and S3-compatible stores
//   gs://bucket/key                                             Google Cloud Storage
//   abfss://container@account.dfs.core.windows.net/path (abfs://)  ADLS Gen2, through its Blob endpoint
//   wasbs://container@account.blob.core.windows.net/path (wasb://) Azure Blob
//   az://container/path (account from AZURE_STORAGE_ACCOUNT)   Azure Blob
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lakerun::objstore {

enum class StoreKind { kS3, kGcs, kAzure };

struct ObjectUri {
  StoreKind kind = StoreKind::kS3;
  std::string bucket;   ///< bucket or container
  std::string account;  ///< Azure storage account named in the URI; "" when it comes from the environment
  std::string key;      ///< object key, no leading '/'; "" for the bucket itself
  std::string root;     ///< the URI up to the bucket ("s3://bucket", "abfss://c@a.dfs.core.windows.net")
};

/// Whether `path` starts with an object-store scheme listed above.
bool IsObjectStoreUri(std::string_view path);
/// Parses an object-store URI; std::nullopt when `path` has none of the schemes. A URI with a scheme but no bucket
/// or container ("s3://", "abfss://@acct...") is a ConfigError naming it.
std::optional<ObjectUri> ParseObjectUri(std::string_view path);

}  // namespace lakerun::objstore
