#include "train/checkpoint_temporaries.h"

#include "lakerun/base/stale_temporaries.h"
#include "lakerun/train/model_checkpoint.h"

namespace lakerun::train {
namespace {

bool IsCheckpointName(const std::string& target) {
  const std::string extension = ModelCheckpoint::kExtension;
  return target.size() > extension.size() &&
         target.compare(target.size() - extension.size(), extension.size(), extension) == 0;
}

}  // namespace

bool IsCheckpointTemporary(const std::string& name, long* pid) {
  const std::optional<TemporaryName> temporary = ParseTemporaryName(name);
  if (!temporary || !IsCheckpointName(temporary->target)) return false;
  *pid = temporary->pid;
  return true;
}

void RemoveStaleCheckpointTemporaries(FileSystem& fs, const std::string& dir) {
  RemoveStaleTemporaries(fs, dir, IsCheckpointName, "a checkpoint save");
}

}  // namespace lakerun::train
