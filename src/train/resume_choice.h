// Which checkpoint ckpt_path="last" resumes from: the newest that verifies (checkpoint_digest.h).
#pragma once

#include <optional>
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

}  // namespace lakerun::train
