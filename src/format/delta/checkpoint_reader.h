// Private: reading a checkpoint (classic, multi-part, or v2 with sidecars) into one ActionSet.
#pragma once

#include <string>

#include "format/delta/log_files.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/actions.h"

namespace lakerun::delta::internal {

/// Reads every file of `checkpoint` (and a v2 checkpoint's sidecars under `log_dir`/_sidecars). `context` names
/// the table; errors add the file. Throws CorruptDataError.
ActionSet ReadCheckpoint(FileSystem& fs, const std::string& log_dir, const CheckpointFiles& checkpoint,
                         const std::string& context);

}  // namespace lakerun::delta::internal
