// A loader's position: a handful of integers, saved with a checkpoint and restored to resume mid-epoch.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace lakerun::data {

struct LoaderState {
  uint64_t epoch = 0;
  uint64_t seed = 0;
  uint64_t num_samples = 0;  ///< table rows when the state was taken; a mismatch on load is an error
  uint64_t world_size = 1;
  uint64_t rank = 0;
  uint64_t samples_yielded = 0;  ///< by this rank under the current epoch plan
  /// The epoch plan started from (origin_world_size ranks having yielded origin_samples_yielded each); equal to
  /// (world_size, 0) unless the epoch was resumed under another world size.
  uint64_t origin_world_size = 1;
  uint64_t origin_samples_yielded = 0;

  /// As a flat map of named integers (what a checkpoint stores).
  std::map<std::string, int64_t> ToMap() const;
  /// Inverse of ToMap. Throws InvalidArgument naming a missing key or a negative value.
  static LoaderState FromMap(const std::map<std::string, int64_t>& values);
  bool operator==(const LoaderState& o) const;
};

}  // namespace lakerun::data
