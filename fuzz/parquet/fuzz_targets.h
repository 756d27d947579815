// The Parquet fuzz targets: one per parser of untrusted bytes (src/format/parquet/fuzz_entry_points.h). Each target
// reads a small parameter prefix from its input (documented per target in fuzz_targets.cc), then hands the rest to
// the entry point. The libFuzzer binaries (fuzz_main.cc) and the always-built corpus replay test share this table,
// so a committed corpus file exercises exactly the code the fuzzer ran it through.
//
// Contract checked everywhere: a target returns normally or throws a lakerun::Error subclass. A crash, a sanitizer
// report, a hang or any other exception type is a bug in the parser.
#pragma once

#include <string_view>
#include <vector>

namespace lakerun::parquet::fuzz {

struct FuzzTarget {
  const char* name;                   ///< also the corpus directory: fuzz/parquet/corpus/<name>/
  void (*run)(std::string_view data);
};

/// Every target, in a stable order.
const std::vector<FuzzTarget>& AllTargets();
/// The target with this name, or nullptr.
const FuzzTarget* FindTarget(std::string_view name);

}  // namespace lakerun::parquet::fuzz
