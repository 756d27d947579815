#include "dist/gpu_sharing.h"

#include <cstdint>
#include <vector>

#include "lakerun/base/error.h"

namespace lakerun::dist {
namespace {

constexpr const char* kVerdictKey = "lakerun/gpu/shared";

std::vector<uint8_t> Bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

}  // namespace

void PublishRankGpu(::c10d::Store& store, int rank, const std::string& gpu_id, const std::string& gpu_name) {
  const std::string users_key = "lakerun/gpu/users/" + gpu_id;
  const std::string first_key = "lakerun/gpu/first/" + gpu_id;
  if (store.add(users_key, 1) == 1) {
    store.set(first_key, Bytes(std::to_string(rank)));
    return;
  }
  // The first user sets its key right after its add: get() waits that long at most.
  const std::vector<uint8_t> first = store.get(first_key);
  store.set(kVerdictKey,
            Bytes(StrCat("ranks ", std::string(first.begin(), first.end()), " and ", rank, " both use GPU ", gpu_name)));
}

std::string SharedGpuVerdict(::c10d::Store& store) {
  if (!store.check({kVerdictKey})) return "";
  const std::vector<uint8_t> verdict = store.get(kVerdictKey);
  return std::string(verdict.begin(), verdict.end());
}

}  // namespace lakerun::dist
