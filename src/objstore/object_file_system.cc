#include "objstore/object_file_system.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "objstore/object_read_file.h"

namespace lakerun::objstore {
namespace {

std::string StripSlashes(std::string key) {
  while (!key.empty() && key.back() == '/') key.pop_back();
  return key;
}

std::string DirPrefix(const std::string& key) { return key.empty() ? std::string() : key + "/"; }

// Bytes written to an object: kept in memory, spilled to a local temporary file past a size, uploaded on Close().
class ObjectWritableFile final : public WritableFile {
 public:
  ObjectWritableFile(std::string uri, ObjectStore& store, std::string key, std::string initial, size_t spill_bytes)
      : WritableFile(std::move(uri)), store_(store), key_(std::move(key)), buffer_(std::move(initial)),
        spill_bytes_(spill_bytes) {
    position_ = buffer_.size();
  }
  ~ObjectWritableFile() override {
    // Not closed: the writer failed or gave up, and a partial object must not appear. Nothing is uploaded.
    DropSpill();
  }

  void Append(std::string_view data) override {
    LAKERUN_CHECK_AS(IoError, !closed_, path(), ": append after Close()");
    position_ += data.size();
    if (spill_ == nullptr && buffer_.size() + data.size() <= spill_bytes_) {
      buffer_.append(data);
      return;
    }
    if (spill_ == nullptr) StartSpill();
    Write(data);
  }
  void Sync() override {}  // durability comes with the upload in Close()
  void Close() override {
    if (closed_) return;
    closed_ = true;
    if (spill_ == nullptr) {
      store_.Put(key_, buffer_, /*if_absent=*/false);
      return;
    }
    LAKERUN_CHECK_AS(IoError, std::fflush(spill_) == 0, path(), ": cannot flush ", spill_path_, ": ",
                     std::strerror(errno));
    store_.PutFile(key_, spill_path_);
    DropSpill();
  }
  uint64_t Position() const override { return position_; }

 private:
  void StartSpill() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/lakerun-upload-XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    LAKERUN_CHECK_AS(IoError, fd >= 0, path(), ": cannot create a temporary file to stage the upload in ", pattern,
                     ": ", std::strerror(errno));
    spill_path_ = pattern;
    spill_ = ::fdopen(fd, "w+b");
    Write(buffer_);
    buffer_.clear();
    buffer_.shrink_to_fit();
  }
  void Write(std::string_view data) {
    LAKERUN_CHECK_AS(IoError, std::fwrite(data.data(), 1, data.size(), spill_) == data.size(), path(),
                     ": cannot stage ", data.size(), " bytes in ", spill_path_, ": ", std::strerror(errno));
  }
  void DropSpill() {
    if (spill_ == nullptr) return;
    std::fclose(spill_);
    spill_ = nullptr;
    ::unlink(spill_path_.c_str());
  }

  ObjectStore& store_;
  std::string key_;
  std::string buffer_;
  size_t spill_bytes_;
  uint64_t position_ = 0;
  std::FILE* spill_ = nullptr;
  std::string spill_path_;
  bool closed_ = false;
};

}  // namespace

ObjectFileSystem::ObjectFileSystem(StoreResolver resolver, ObjectFileOptions options)
    : resolver_(std::move(resolver)), options_(options),
      io_(std::make_unique<ThreadPool>(options.io_threads, "objstore-io")) {}

ObjectFileSystem::~ObjectFileSystem() = default;

ObjectFileSystem::Target ObjectFileSystem::Resolve(const std::string& path) {
  const std::optional<ObjectUri> uri = ParseObjectUri(path);
  LAKERUN_CHECK_AS(InvalidArgument, uri.has_value(), "'", path, "' is not an object-store URI (s3://, gs://, az://, ",
                   "abfss://)");
  return {&resolver_(*uri), StripSlashes(uri->key)};
}

std::unique_ptr<RandomAccessFile> ObjectFileSystem::OpenForRead(const std::string& path) {
  const Target t = Resolve(path);
  // The size and the tail (a Parquet footer) in one request where the store allows it.
  std::string tail;
  const std::optional<ObjectInfo> info = t.store->HeadWithTail(t.key, options_.tail_bytes, &tail);
  LAKERUN_CHECK_AS(IoError, info.has_value(), "cannot open ", path, ": no such object");
  CountOpen();
  if (!tail.empty()) CountRead(tail.size());
  return std::make_unique<ObjectReadFile>(path, *t.store, t.key, info->size, std::move(tail), options_, *io_);
}

std::unique_ptr<RandomAccessFile> ObjectFileSystem::OpenForReadOfSize(const std::string& path, uint64_t size) {
  const Target t = Resolve(path);
  CountOpen();
  return std::make_unique<ObjectReadFile>(path, *t.store, t.key, size, std::string(), options_, *io_);
}

std::unique_ptr<WritableFile> ObjectFileSystem::OpenForWrite(const std::string& path) {
  const Target t = Resolve(path);
  return std::make_unique<ObjectWritableFile>(path, *t.store, t.key, std::string(), options_.spill_bytes);
}

std::unique_ptr<WritableFile> ObjectFileSystem::OpenForAppend(const std::string& path) {
  const Target t = Resolve(path);
  std::string existing;
  if (const std::optional<ObjectInfo> info = t.store->Head(t.key)) {
    existing.resize(static_cast<size_t>(info->size));
    if (!existing.empty()) t.store->GetRange(t.key, 0, existing.size(), existing.data());
  }
  return std::make_unique<ObjectWritableFile>(path, *t.store, t.key, std::move(existing), options_.spill_bytes);
}

bool ObjectFileSystem::CreateExclusive(const std::string& path, std::string_view contents) {
  const Target t = Resolve(path);
  if (t.store->ProbeConditionalPut() != ConditionalPut::kIgnored) return t.store->Put(t.key, contents, true);
  const char* unsafe = std::getenv("AWS_S3_ALLOW_UNSAFE_RENAME");  // read now: a program may set it after start
  const bool allowed = options_.allow_unsafe_commits || (unsafe != nullptr && std::strcmp(unsafe, "true") == 0);
  LAKERUN_CHECK_AS(NotImplemented, allowed, "cannot create ", path, " exclusively: ",
                   t.store->root_uri(), " ignores conditional writes (If-None-Match: *), so two writers could both "
                   "commit the same Delta version and one commit would be lost. Use a store that honours them (AWS S3, "
                   "Azure, GCS, MinIO), or, with a single writer only, set AWS_S3_ALLOW_UNSAFE_RENAME=true");
  static std::once_flag warned;
  std::call_once(warned, [&] {
    LAKERUN_LOG(Warning) << t.store->root_uri() << " ignores conditional writes; AWS_S3_ALLOW_UNSAFE_RENAME=true: "
                         << "commits are checked and written in two steps, safe for a single writer only";
  });
  if (t.store->Head(t.key).has_value()) return false;
  t.store->Put(t.key, contents, false);
  return true;
}

bool ObjectFileSystem::Exists(const std::string& path) { return Stat(path).has_value(); }

std::optional<FileInfo> ObjectFileSystem::Stat(const std::string& path) {
  const Target t = Resolve(path);
  FileInfo info;
  info.name = t.key.empty() ? t.store->root_uri() : BaseName(t.key);
  info.is_directory = true;
  if (t.key.empty()) {  // the bucket: it is a directory if it exists (a missing one throws, naming it)
    t.store->AnyUnder("");
    return info;
  }
  // An object, and a "directory" of objects under key/: asked at once, since each question is a round trip.
  ObjectStore* store = t.store;
  std::future<bool> has_children = io_->Submit([store, prefix = DirPrefix(t.key)] { return store->AnyUnder(prefix); });
  std::optional<ObjectInfo> object;
  try {
    object = store->Head(t.key);
  } catch (...) {
    has_children.wait();
    throw;
  }
  if (object) {
    has_children.wait();  // its answer (or failure) no longer matters
    info.is_directory = false;
    info.size = object->size;
    info.mtime_ms = object->mtime_ms;
    return info;
  }
  if (!has_children.get()) return std::nullopt;
  return info;
}

std::vector<FileInfo> ObjectFileSystem::List(const std::string& dir) {
  const Target t = Resolve(dir);
  const std::string prefix = DirPrefix(t.key);
  const ObjectListing listing = t.store->List(prefix, /*delimited=*/true);
  std::vector<FileInfo> out;
  for (const ObjectInfo& object : listing.objects) {
    FileInfo info;
    info.name = object.key.substr(prefix.size());
    if (info.name.empty()) continue;  // a "directory marker" object named like the prefix
    info.size = object.size;
    info.mtime_ms = object.mtime_ms;
    out.push_back(std::move(info));
  }
  for (const std::string& sub : listing.subprefixes) {
    FileInfo info;
    info.name = StripSlashes(sub.substr(prefix.size()));
    info.is_directory = true;
    if (!info.name.empty()) out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  return out;
}

void ObjectFileSystem::CreateDirs(const std::string& path) { (void)Resolve(path); }

void ObjectFileSystem::Remove(const std::string& path) {
  const Target t = Resolve(path);
  if (!t.key.empty()) t.store->Delete(t.key);
}

void ObjectFileSystem::RemoveAll(const std::string& path) {
  const Target t = Resolve(path);
  for (const ObjectInfo& object : t.store->List(DirPrefix(t.key), /*delimited=*/false).objects) {
    t.store->Delete(object.key);
  }
  if (!t.key.empty()) t.store->Delete(t.key);
}

void ObjectFileSystem::Rename(const std::string& from, const std::string& to) {
  const Target source = Resolve(from);
  const Target target = Resolve(to);
  LAKERUN_CHECK_AS(InvalidArgument, source.store == target.store, "cannot rename ", from, " to ", to,
                   ": an object store renames only within one bucket or container");
  if (source.store->Head(source.key).has_value()) {
    source.store->Copy(source.key, target.key);
    source.store->Delete(source.key);
    return;
  }
  const std::string prefix = DirPrefix(source.key);
  const std::vector<ObjectInfo> objects = source.store->List(prefix, /*delimited=*/false).objects;
  LAKERUN_CHECK_AS(IoError, !objects.empty(), "cannot rename ", from, ": no such object or prefix");
  for (const ObjectInfo& object : objects) {
    const std::string moved = DirPrefix(target.key) + object.key.substr(prefix.size());
    source.store->Copy(object.key, moved);
    source.store->Delete(object.key);
  }
}

void ObjectFileSystem::WriteAtomically(const std::string& path, std::string_view contents) {
  const Target t = Resolve(path);
  t.store->Put(t.key, contents, /*if_absent=*/false);
}

}  // namespace lakerun::objstore
