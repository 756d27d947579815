// The file system behind every path a user hands lakerun.
//
//   lakerun::FileSystem& fs = lakerun::UriFileSystem();
//   auto table = lakerun::delta::DeltaTable("s3://bucket/tables/events", fs);
//
// Local paths and file: URIs go to LocalFileSystem(). Object-store URIs go to the store they name, configured from
// the environment as that ecosystem's own tools are (docs/object-storage.md):
//   s3://bucket/key (s3a://, s3n://)      AWS S3 and S3-compatible stores: AWS_* variables, ~/.aws profiles
//   gs://bucket/key                       Google Cloud Storage: HMAC keys or an OAuth access token
//   abfss://container@account.dfs.core.windows.net/path, wasbs://..., az://container/path
//                                         Azure Blob Storage / ADLS Gen2: AZURE_STORAGE_* variables
// Stores are created on first use and kept for the life of the process; their connections are reused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lakerun/base/file_system.h"

namespace lakerun {

/// The process's URI-routing file system (thread-safe).
FileSystem& UriFileSystem();

/// Whether `path` names an object in an object store (one of the schemes above).
bool IsObjectStorePath(std::string_view path);

/// Copies the file `from` of `from_fs` to `to` of `to_fs` (a local file to an object store, say), streamed in
/// pieces of 8 MiB. On an object store `to` appears only once all of it is written (one upload at the end).
void CopyFile(FileSystem& from_fs, const std::string& from, FileSystem& to_fs, const std::string& to);

/// What this process has read from object stores so far through file systems: ranged GETs of file bytes (a retried
/// GET counts once), the bytes they brought, and files opened (one HEAD each). For progress lines and benchmarks.
struct ObjectStoreReads {
  uint64_t get_requests = 0;
  uint64_t bytes = 0;
  uint64_t files_opened = 0;
};
ObjectStoreReads ObjectStoreReadsSoFar();

}  // namespace lakerun
