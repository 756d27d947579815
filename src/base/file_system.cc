// Path helpers and the parts of FileSystem that are the same for every implementation.
#include "lakerun/base/file_system.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "lakerun/base/error.h"

#include <unistd.h>

namespace lakerun {

std::string RandomAccessFile::ReadAt(uint64_t offset, size_t n) const {
  std::string out(n, '\0');
  if (n > 0) ReadAt(offset, n, out.data());
  return out;
}

void FileSystem::WriteAtomically(const std::string& path, std::string_view contents) {
  static std::atomic<uint64_t> counter{0};
  // The temp name is unique per process and call, so concurrent writers of the same path never share a temp file.
  const std::string tmp = StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  try {
    auto file = OpenForWrite(tmp);
    file->Append(contents);
    file->Sync();
    file->Close();
    Rename(tmp, path);
  } catch (...) {
    try {
      Remove(tmp);
    } catch (...) {
    }
    throw;
  }
}

std::string FileSystem::ReadFile(const std::string& path) { return OpenForRead(path)->ReadAll(); }

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  if (!b.empty() && b.front() == '/') return std::string(b);
  std::string out(a);
  if (out.back() != '/') out.push_back('/');
  out.append(b);
  return out;
}

std::string DirName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string BaseName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace lakerun
