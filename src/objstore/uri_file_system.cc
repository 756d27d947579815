#include "lakerun/objstore/uri_file_system.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "lakerun/base/error.h"
#include "objstore/object_file_system.h"
#include "objstore/store_factory.h"
#include "objstore/uri.h"

namespace lakerun {
namespace {

using objstore::ObjectStore;
using objstore::ObjectUri;

// "file:/x" and "file:///x" name local paths.
std::string WithoutFileScheme(const std::string& path) {
  if (path.rfind("file://", 0) == 0) return path.substr(7);
  if (path.rfind("file:", 0) == 0) return path.substr(5);
  return path;
}

// Stores by the root of their URIs, created on first use.
class StoreCache {
 public:
  ObjectStore& Get(const ObjectUri& uri) {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<ObjectStore>& store = stores_[uri.root];
    if (store == nullptr) store = objstore::MakeStore(uri);
    return *store;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<ObjectStore>> stores_;
};

class RoutingFileSystem final : public FileSystem {
 public:
  RoutingFileSystem()
      : remote_([this](const ObjectUri& uri) -> ObjectStore& { return stores_.Get(uri); }) {}

  std::unique_ptr<RandomAccessFile> OpenForRead(const std::string& p) override { return For(p).OpenForRead(Local(p)); }
  std::unique_ptr<RandomAccessFile> OpenForReadOfSize(const std::string& p, uint64_t size) override {
    return For(p).OpenForReadOfSize(Local(p), size);
  }
  std::unique_ptr<WritableFile> OpenForWrite(const std::string& p) override { return For(p).OpenForWrite(Local(p)); }
  std::unique_ptr<WritableFile> OpenForAppend(const std::string& p) override {
    return For(p).OpenForAppend(Local(p));
  }
  bool CreateExclusive(const std::string& p, std::string_view contents) override {
    return For(p).CreateExclusive(Local(p), contents);
  }
  bool Exists(const std::string& p) override { return For(p).Exists(Local(p)); }
  std::optional<FileInfo> Stat(const std::string& p) override { return For(p).Stat(Local(p)); }
  std::vector<FileInfo> List(const std::string& p) override { return For(p).List(Local(p)); }
  void CreateDirs(const std::string& p) override { For(p).CreateDirs(Local(p)); }
  void Remove(const std::string& p) override { For(p).Remove(Local(p)); }
  void RemoveAll(const std::string& p) override { For(p).RemoveAll(Local(p)); }
  void Rename(const std::string& from, const std::string& to) override {
    LAKERUN_CHECK_AS(InvalidArgument, IsObjectStorePath(from) == IsObjectStorePath(to), "cannot rename ", from,
                     " to ", to, ": one is local and the other in an object store");
    For(from).Rename(Local(from), Local(to));
  }
  void WriteAtomically(const std::string& p, std::string_view contents) override {
    For(p).WriteAtomically(Local(p), contents);
  }
  std::optional<std::string> LocalPath(const std::string& p) override { return For(p).LocalPath(Local(p)); }

 private:
  FileSystem& For(const std::string& path) {
    return IsObjectStorePath(path) ? static_cast<FileSystem&>(remote_) : LocalFileSystem();
  }
  static std::string Local(const std::string& path) {
    return IsObjectStorePath(path) ? path : WithoutFileScheme(path);
  }

  StoreCache stores_;
  objstore::ObjectFileSystem remote_;
};

}  // namespace


void CopyFile(FileSystem& from_fs, const std::string& from, FileSystem& to_fs, const std::string& to) {
  constexpr uint64_t kPiece = 8 << 20;
  const std::unique_ptr<RandomAccessFile> source = from_fs.OpenForRead(from);
  const std::unique_ptr<WritableFile> target = to_fs.OpenForWrite(to);
  std::string piece;
  for (uint64_t at = 0; at < source->Size(); at += kPiece) {
    piece.resize(static_cast<size_t>(std::min(kPiece, source->Size() - at)));
    source->ReadAt(at, piece.size(), piece.data());
    target->Append(piece);
  }
  target->Sync();
  target->Close();
}

FileSystem& UriFileSystem() {
  static RoutingFileSystem* fs = new RoutingFileSystem();  // never destroyed: used until the process ends
  return *fs;
}

bool IsObjectStorePath(std::string_view path) { return objstore::IsObjectStoreUri(path); }

}  // namespace lakerun
