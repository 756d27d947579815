#include "dist/cuda_device.h"

#include "lakerun/base/error.h"

namespace lakerun::dist {

int ChooseCudaDevice(int local_rank, int visible, const std::string& visible_devices_env) {
  LAKERUN_INTERNAL_ASSERT(visible > 0, "ChooseCudaDevice needs a visible device, got ", visible);
  LAKERUN_CHECK_AS(ConfigError, local_rank >= 0, "local rank ", local_rank, " is negative");
  if (visible == 1) return 0;
  LAKERUN_CHECK_AS(ConfigError, local_rank < visible, "local rank ", local_rank, " has no GPU of its own: ", visible,
                   " are visible to it (CUDA_VISIBLE_DEVICES ",
                   visible_devices_env.empty() ? std::string("unset") : "= '" + visible_devices_env + "'",
                   "); start at most ", visible, " ranks on this node, or give each rank its own GPU with "
                   "`lakerun launch --use-gpu`");
  return local_rank;
}

}  // namespace lakerun::dist
