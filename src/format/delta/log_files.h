// Private: what a `_delta_log/` directory listing holds, classified by file name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"

namespace lakerun::delta::internal {

/// One checkpoint of a version: a classic file, a complete multi-part set, or a UUID-named v2 checkpoint.
struct CheckpointFiles {
  enum class Kind { kClassic, kMultiPart, kV2 } kind = Kind::kClassic;
  int64_t version = 0;
  std::vector<std::string> paths;  ///< full paths; multi-part in part order
  bool json = false;               ///< v2 checkpoints may be JSON
};

struct LogListing {
  /// Commit file path by version.
  std::map<int64_t, std::string> commits;
  /// Commit file modification times (ms) by version.
  std::map<int64_t, int64_t> commit_mtimes;
  /// Usable checkpoints by version (incomplete multi-part sets are left out); preferred one first.
  std::map<int64_t, std::vector<CheckpointFiles>> checkpoints;
};

/// Lists and classifies `log_dir`. Temporary files, .crc files, compactions and unknown names are skipped.
LogListing ListLog(FileSystem& fs, const std::string& log_dir);

/// "00000000000000000042" for 42.
std::string VersionPrefix(int64_t version);

}  // namespace lakerun::delta::internal
