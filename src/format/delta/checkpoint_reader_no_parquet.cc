// Checkpoint reading when lakerun::parquet is not part of the build: JSON v2 checkpoints only.
#include "format/delta/checkpoint_reader.h"

#include "format/delta/json_codec.h"
#include "lakerun/base/error.h"

namespace lakerun::delta::internal {

ActionSet ReadCheckpoint(FileSystem& fs, const std::string& log_dir, const CheckpointFiles& checkpoint,
                         const std::string& context) {
  LAKERUN_CHECK_AS(NotImplemented, checkpoint.json, context, " checkpoint file ", checkpoint.paths.front(),
                   ": reading Parquet checkpoints needs lakerun::parquet, which this build lacks");
  return ParseActionLines(fs.ReadFile(checkpoint.paths.front()), StrCat(context, " checkpoint file ",
                                                                        checkpoint.paths.front()));
}

}  // namespace lakerun::delta::internal
