// Classifying the files of a Delta log directory.
#include "format/delta/log_files.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "lakerun/base/error.h"

namespace lakerun::delta::internal {
namespace {

bool AllDigits(const std::string& s, size_t pos, size_t n) {
  if (pos + n > s.size()) return false;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool LooksLikeUuid(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (s[i] == '-')) return false;
    if (!dash && !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

}  // namespace

std::string VersionPrefix(int64_t version) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020lld", static_cast<long long>(version));
  return buf;
}

LogListing ListLog(FileSystem& fs, const std::string& log_dir) {
  LogListing out;
  // Multi-part sets: (version, parts) -> part number -> path.
  std::map<std::pair<int64_t, int64_t>, std::map<int64_t, std::string>> multi;
  for (const FileInfo& info : fs.List(log_dir)) {
    if (info.is_directory) continue;
    const std::string& name = info.name;
    if (!AllDigits(name, 0, 20) || name.size() < 21 || name[20] != '.') continue;
    const int64_t version = std::stoll(name.substr(0, 20));
    const std::string rest = name.substr(21);
    const std::string path = JoinPath(log_dir, name);
    if (rest == "json") {
      out.commits[version] = path;
      out.commit_mtimes[version] = info.mtime_ms;
    } else if (rest == "checkpoint.parquet") {
      out.checkpoints[version].push_back({CheckpointFiles::Kind::kClassic, version, {path}, false});
    } else if (rest.rfind("checkpoint.", 0) == 0) {
      const std::string tail = rest.substr(11);
      // n.checkpoint.o.p.parquet, o and p 10 digits.
      if (tail.size() == 10 + 1 + 10 + 8 && AllDigits(tail, 0, 10) && tail[10] == '.' && AllDigits(tail, 11, 10) &&
          EndsWith(tail, ".parquet")) {
        const int64_t part = std::stoll(tail.substr(0, 10));
        const int64_t parts = std::stoll(tail.substr(11, 10));
        if (part >= 1 && part <= parts) multi[{version, parts}][part] = path;
        continue;
      }
      for (const char* ext : {".json", ".parquet"}) {
        if (EndsWith(tail, ext)) {
          const std::string uuid = tail.substr(0, tail.size() - std::string(ext).size());
          if (LooksLikeUuid(uuid)) {
            out.checkpoints[version].push_back(
                {CheckpointFiles::Kind::kV2, version, {path}, std::string(ext) == ".json"});
          }
        }
      }
    }
  }
  for (auto& [key, parts] : multi) {
    const auto [version, count] = key;
    if (static_cast<int64_t>(parts.size()) != count) continue;  // incomplete set: ignored (PROTOCOL.md)
    CheckpointFiles cp{CheckpointFiles::Kind::kMultiPart, version, {}, false};
    for (auto& [part, path] : parts) cp.paths.push_back(path);
    out.checkpoints[version].push_back(std::move(cp));
  }
  // Preference within a version: classic, then v2, then multi-part. Any complete one gives the same state.
  for (auto& [version, list] : out.checkpoints) {
    std::stable_sort(list.begin(), list.end(), [](const CheckpointFiles& a, const CheckpointFiles& b) {
      auto rank = [](const CheckpointFiles& c) {
        return c.kind == CheckpointFiles::Kind::kClassic ? 0 : c.kind == CheckpointFiles::Kind::kV2 ? 1 : 2;
      };
      return rank(a) < rank(b);
    });
  }
  return out;
}

}  // namespace lakerun::delta::internal
