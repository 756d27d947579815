// One bucket or container of an object store (private to lakerun::objstore): the few operations a file system
// needs, implemented per provider (S3 and S3-compatible, GCS's XML API, Azure Blob). ObjectFileSystem turns one into
// a lakerun::FileSystem.
//
// Keys are object names within the bucket, without a leading '/'. Errors are IoError (or NotFoundError where
// noted) naming the object as a URI ("s3://bucket/key"), the HTTP status and the store's error code and message;
// never a credential or a signed URL.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::objstore {

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  int64_t mtime_ms = 0;
  std::string etag;
};

struct ObjectListing {
  std::vector<ObjectInfo> objects;        ///< keys under the prefix (one level when delimited), sorted
  std::vector<std::string> subprefixes;   ///< delimited only: "prefix/child/" for each child "directory", sorted
};

/// Whether a store honours put-if-absent. Stores differ (s3rver ignores If-None-Match on PUT), so it is probed.
enum class ConditionalPut { kUnknown, kHonoured, kIgnored };

class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  /// "s3://bucket", "gs://bucket", "az://container" (for messages and as the file system's path prefix).
  virtual const std::string& root_uri() const = 0;

  /// Size and metadata of `key`; nullopt when there is no such object.
  virtual std::optional<ObjectInfo> Head(const std::string& key) = 0;
  /// Reads exactly `n` bytes at `offset` into `out` with one ranged GET (retried). A short read, a missing object or
  /// a failed request throws, naming the object and range.
  virtual void GetRange(const std::string& key, uint64_t offset, size_t n, char* out) = 0;
  /// Writes the whole object. With if_absent, writes only when no object `key` exists and returns false (writing
  /// nothing) when one does: S3 If-None-Match: *, Azure If-None-Match: *, GCS x-goog-if-generation-match: 0.
  virtual bool Put(const std::string& key, std::string_view data, bool if_absent) = 0;
  /// Streams a local file's bytes as the object (large uploads).
  virtual void PutFile(const std::string& key, const std::string& local_path) = 0;
  /// Objects under `prefix` (a "directory" prefix ends with '/'); delimited lists one level with '/' as delimiter.
  /// Pages through the store's continuation tokens.
  virtual ObjectListing List(const std::string& prefix, bool delimited) = 0;
  /// Whether some object's key starts with `prefix`: one LIST of at most one key (a "directory" check that never
  /// pages through a large prefix). A missing bucket throws.
  virtual bool AnyUnder(const std::string& prefix) = 0;
  /// Deletes `key`; a missing object is not an error.
  virtual void Delete(const std::string& key) = 0;
  /// Server-side copy of `from` to `to` in the same bucket.
  virtual void Copy(const std::string& from, const std::string& to) = 0;
  /// Head, and the last `n` bytes of the object (all of it when smaller) into *tail, in as few requests as the store
  /// allows: S3 answers a suffix range with the object's size, so one GET does both. The default is Head then
  /// GetRange. std::nullopt (and *tail untouched) when there is no such object.
  virtual std::optional<ObjectInfo> HeadWithTail(const std::string& key, size_t n, std::string* tail);

  /// Whether Put(if_absent) is honoured: probes once (writes a probe object twice under "_lakerun_probe/", then
  /// deletes it) and caches the answer. Thread-safe: concurrent callers wait for the one probe. A failed probe
  /// (an IoError from the store) is thrown and not cached.
  ConditionalPut ProbeConditionalPut();

 private:
  std::mutex probe_mu_;
  ConditionalPut conditional_put_ = ConditionalPut::kUnknown;
};

}  // namespace lakerun::objstore
