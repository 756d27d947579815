// Which checkpoint ckpt_path="last" resumes from: the newest that verifies (checkpoint_digest.h).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "train/checkpoint_digest.h"

namespace lakerun::train {

/// The checkpoint files (*.ckpt) in `dirs`, in the order "last" tries them: every last*.ckpt newest first by
/// modification time (Lightning's choice when they are intact), then the other checkpoints (top-k, every-n) newest
/// first. Missing directories are skipped.
std::vector<std::string> ResumeCandidates(FileSystem& fs, const std::vector<std::string>& dirs);

/// The first of `candidates` that reads and verifies; each one skipped is logged with why. std::nullopt when there
/// are no candidates; a CorruptDataError naming every candidate and its damage when none verifies.
std::optional<VerifiedCheckpoint> FirstVerified(FileSystem& fs, const std::vector<std::string>& candidates);

/// What the attempt that failed left in `dirs` beyond `resumed`, the checkpoint a restarted job resumes from: the
/// checkpoint files (*.ckpt) modified at or after it that are neither `resumed` nor in `referenced` (the files the
/// restored callbacks keep). The job writes them again as it trains on; left in place they would become `-v1`
/// copies or top-k files no callback knows. Missing directories are skipped.
std::vector<std::string> FilesBeyondTheResumePoint(FileSystem& fs, const std::vector<std::string>& dirs,
                                                   const std::string& resumed,
                                                   const std::set<std::string>& referenced);

}  // namespace lakerun::train
