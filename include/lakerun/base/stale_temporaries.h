// Temporary files that writers killed mid-write leave behind. FileSystem::WriteAtomically writes
// `<target>.tmp.<pid>.<n>` beside its target and renames it into place; the local CreateExclusive writes
// `<target>.excl.<pid>.<n>` and links it into place. A process killed in between leaves the temporary, and nothing
// else removes it: checkpoint directories and Delta logs call RemoveStaleTemporaries before they write.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "lakerun/base/file_system.h"

namespace lakerun {

/// A temporary's name split into its target's name and the pid that wrote it.
struct TemporaryName {
  std::string target;
  long pid = 0;
};

/// `name` as a temporary of WriteAtomically or CreateExclusive; std::nullopt for any other name.
std::optional<TemporaryName> ParseTemporaryName(const std::string& name);

/// Whether a live process on this host may still be writing a temporary written by `pid` and last modified at
/// `mtime_ms` (0: the file system keeps no times). False when the pid is not a live process, when it is a process
/// that started after the file was last written (the pid was reused), or when nothing has written the file for a day.
bool TemporaryMayBeOwned(long pid, int64_t mtime_ms);

/// Removes the temporaries in `dir` whose target `of_target` accepts and that no live process can own
/// (TemporaryMayBeOwned): a temporary of a live writer (this process included) is kept, so concurrent writers on one
/// host are safe; writers on other hosts sharing `dir` are not seen. `what` names the writer in the log ("a
/// checkpoint save"). Logs each file removed; failures to list or remove are logged, never thrown.
void RemoveStaleTemporaries(FileSystem& fs, const std::string& dir,
                            const std::function<bool(const std::string& target)>& of_target, const std::string& what);

}  // namespace lakerun
