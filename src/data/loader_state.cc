#include "lakerun/data/loader_state.h"

#include "lakerun/base/error.h"

namespace lakerun::data {
namespace {
struct Field {
  const char* key;
  uint64_t LoaderState::*member;
};
constexpr Field kFields[] = {
    {"epoch", &LoaderState::epoch},
    {"seed", &LoaderState::seed},
    {"num_samples", &LoaderState::num_samples},
    {"world_size", &LoaderState::world_size},
    {"rank", &LoaderState::rank},
    {"samples_yielded", &LoaderState::samples_yielded},
    {"origin_world_size", &LoaderState::origin_world_size},
    {"origin_samples_yielded", &LoaderState::origin_samples_yielded},
};
}  // namespace

std::map<std::string, int64_t> LoaderState::ToMap() const {
  std::map<std::string, int64_t> out;
  // Seeds use all 64 bits; they round-trip through int64 by two's complement.
  for (const Field& f : kFields) out[f.key] = static_cast<int64_t>(this->*f.member);
  return out;
}

LoaderState LoaderState::FromMap(const std::map<std::string, int64_t>& values) {
  LoaderState state;
  for (const Field& f : kFields) {
    const auto it = values.find(f.key);
    LAKERUN_CHECK(it != values.end(), "loader state lacks key '", f.key, "'");
    LAKERUN_CHECK(it->second >= 0 || std::string(f.key) == "seed", "loader state key '", f.key,
                  "' is negative: ", it->second);
    state.*f.member = static_cast<uint64_t>(it->second);
  }
  return state;
}

bool LoaderState::operator==(const LoaderState& o) const {
  for (const Field& f : kFields) {
    if (this->*f.member != o.*f.member) return false;
  }
  return true;
}

}  // namespace lakerun::data
