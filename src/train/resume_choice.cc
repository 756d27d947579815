#include "train/resume_choice.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "lakerun/train/model_checkpoint.h"

namespace lakerun::train {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::string> ResumeCandidates(FileSystem& fs, const std::vector<std::string>& dirs) {
  struct Candidate {
    bool last;
    int64_t mtime_ms;
    std::string path;
  };
  std::vector<Candidate> found;
  for (const std::string& dir : std::set<std::string>(dirs.begin(), dirs.end())) {
    if (!fs.Exists(dir)) continue;
    for (const FileInfo& f : fs.List(dir)) {
      if (f.is_directory || !EndsWith(f.name, ModelCheckpoint::kExtension)) continue;
      const bool last = f.name.rfind(ModelCheckpoint::kNameLast, 0) == 0;
      found.push_back({last, f.mtime_ms, JoinPath(dir, f.name)});
    }
  }
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.last, a.mtime_ms, a.path) > std::tie(b.last, b.mtime_ms, b.path);
  });
  std::vector<std::string> paths;
  for (const Candidate& c : found) paths.push_back(c.path);
  return paths;
}

std::vector<std::string> FilesBeyondTheResumePoint(FileSystem& fs, const std::vector<std::string>& dirs,
                                                   const std::string& resumed,
                                                   const std::set<std::string>& referenced) {
  const std::optional<FileInfo> point = fs.Stat(resumed);
  if (!point) return {};
  std::vector<std::string> out;
  for (const std::string& dir : std::set<std::string>(dirs.begin(), dirs.end())) {
    if (!fs.Exists(dir)) continue;
    for (const FileInfo& f : fs.List(dir)) {
      if (f.is_directory || !EndsWith(f.name, ModelCheckpoint::kExtension) || f.mtime_ms < point->mtime_ms) continue;
      const std::string path = JoinPath(dir, f.name);
      if (path != resumed && referenced.count(path) == 0) out.push_back(path);
    }
  }
  return out;
}

std::optional<VerifiedCheckpoint> FirstVerified(FileSystem& fs, const std::vector<std::string>& candidates) {
  std::string skipped;
  for (const std::string& path : candidates) {
    std::string problem;
    try {
      VerifiedCheckpoint checkpoint = ReadVerifiedCheckpoint(fs, path);
      if (!skipped.empty()) {
        LAKERUN_LOG(Warning) << "ckpt_path=\"last\": resuming from " << path
                             << ", the newest checkpoint that verifies";
      }
      return checkpoint;
    } catch (const CorruptDataError& e) {
      problem = e.what();
    } catch (const IoError& e) {
      problem = e.what();
    }
    LAKERUN_LOG(Warning) << "ckpt_path=\"last\": skipping " << path << ": " << problem;
    skipped += "\n  " + problem;
  }
  LAKERUN_CHECK_AS(CorruptDataError, skipped.empty(), "ckpt_path=\"last\": none of the ", candidates.size(),
                   " checkpoints verifies:", skipped);
  return std::nullopt;
}

}  // namespace lakerun::train
