// Temporary files that crashed checkpoint saves leave behind. FileSystem::WriteAtomically writes
// `<name>.ckpt.tmp.<pid>.<n>` beside the checkpoint and renames it; a process killed in between leaves the temporary.
#pragma once

#include <string>

#include "lakerun/base/file_system.h"

namespace lakerun::train {

/// Removes the checkpoint temporaries in `dir` that no running saver can still own (RemoveStaleTemporaries in
/// lakerun/base/stale_temporaries.h): a temporary of a live saver (this process included) is kept, so concurrent
/// savers on one host are safe. Failures to list or remove are logged, not thrown (cleaning never fails a save).
void RemoveStaleCheckpointTemporaries(FileSystem& fs, const std::string& dir);

/// Whether `name` has the form `<something>.ckpt.tmp.<pid>.<n>`; sets *pid.
bool IsCheckpointTemporary(const std::string& name, long* pid);

}  // namespace lakerun::train
