// A lakerun::FileSystem over object stores (private to lakerun::objstore): paths are URIs ("s3://bucket/a/b"), and
// each bucket or container is an ObjectStore that a resolver supplies.
//
// How file-system calls map onto objects:
//  - directories are key prefixes: CreateDirs does nothing, List is a delimited listing, Stat of a prefix that holds
//    objects is a directory, and listing an empty or missing prefix gives no entries;
//  - a file opened for reading costs one HEAD; its last `tail_bytes` come with the first read that touches them
//    (one GET serves a Parquet footer and its length), and WillRead fetches a row group's column chunks together;
//  - a file opened for writing is uploaded when Close() succeeds, never before: a writer that fails or is destroyed
//    without Close() publishes nothing. OpenForAppend re-uploads the object with the new bytes.
//  - WriteAtomically is one PUT (atomic on every store); Rename is copy then delete (not atomic);
//  - CreateExclusive is a conditional PUT. A store found to ignore the precondition (ProbeConditionalPut) is refused
//    for it, because two Delta writers could then both "win" a version; AWS_S3_ALLOW_UNSAFE_RENAME=true (delta-rs's
//    name for the same choice) lets a single writer go on, with a warning.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "lakerun/base/file_system.h"
#include "lakerun/base/thread_pool.h"
#include "objstore/object_store.h"
#include "objstore/uri.h"

namespace lakerun::objstore {

struct ObjectFileOptions {
  size_t tail_bytes = 64 << 10;        ///< fetched with the first read near the end of a file (Parquet footers)
  size_t coalesce_gap = 1 << 20;       ///< WillRead merges ranges this close into one GET
  size_t request_bytes = 16 << 20;     ///< ... until a GET holds this many bytes
  size_t io_threads = 8;               ///< GETs in flight for WillRead
  size_t max_cached_bytes = 512 << 20; ///< fetched-ahead bytes kept per file before the oldest are dropped
  size_t spill_bytes = 64 << 20;       ///< a file being written goes to a local temporary file above this size
  bool allow_unsafe_commits = false;   ///< also when AWS_S3_ALLOW_UNSAFE_RENAME=true: see the file comment
};

/// Returns the store of a URI's bucket or container; called for every operation, so it should cache.
using StoreResolver = std::function<ObjectStore&(const ObjectUri&)>;

class ObjectFileSystem final : public FileSystem {
 public:
  explicit ObjectFileSystem(StoreResolver resolver, ObjectFileOptions options = {});
  ~ObjectFileSystem() override;

  std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& path) override;
  /// No request: the first reads fetch what they need (a Parquet footer's WillRead brings the head and the tail
  /// concurrently).
  std::unique_ptr<RandomAccessFile> OpenForReadOfSize(const std::string& path, uint64_t size) override;
  std::unique_ptr<WritableFile> OpenForWrite(const std::string& path) override;
  std::unique_ptr<WritableFile> OpenForAppend(const std::string& path) override;
  bool CreateExclusive(const std::string& path, std::string_view contents) override;
  bool Exists(const std::string& path) override;
  std::optional<FileInfo> Stat(const std::string& path) override;
  std::vector<FileInfo> List(const std::string& dir) override;
  void CreateDirs(const std::string& path) override;
  void Remove(const std::string& path) override;
  void RemoveAll(const std::string& path) override;
  void Rename(const std::string& from, const std::string& to) override;
  void WriteAtomically(const std::string& path, std::string_view contents) override;

 private:
  struct Target {
    ObjectStore* store;
    std::string key;
  };
  Target Resolve(const std::string& path);

  StoreResolver resolver_;
  ObjectFileOptions options_;
  std::unique_ptr<ThreadPool> io_;  // WillRead's GETs
};

}  // namespace lakerun::objstore
