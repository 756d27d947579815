// Temporary files that crashed checkpoint saves leave behind. FileSystem::WriteAtomically writes
// `<name>.ckpt.tmp.<pid>.<n>` beside the checkpoint and renames it; a process killed in between leaves the temporary.
#pragma once

#include <string>

#include "lakerun/base/file_system.h"

namespace lakerun::train {

/// Removes the checkpoint temporaries in `dir` that no running saver can still own: those whose pid is not a live
/// process on this host, or is now a process that started after the file was last written (the pid was reused), or
/// that nothing has written to for a day. A temporary of a live saver (this process included) is kept, so
/// concurrent savers on one host are safe. Logs each file removed; failures to list or remove are logged, not
/// thrown (cleaning never fails a save).
void RemoveStaleCheckpointTemporaries(FileSystem& fs, const std::string& dir);

/// Whether `name` has the form `<something>.ckpt.tmp.<pid>.<n>`; sets *pid.
bool IsCheckpointTemporary(const std::string& name, long* pid);

}  // namespace lakerun::train
