// Where tests find the source tree, the build tree and the binaries built with them.
#pragma once

#include <string>

namespace lakerun::testing {

/// The repository root: LAKERUN_SOURCE_DIR if set, else the tree this test was configured from.
std::string SourceDir();
/// The build directory: LAKERUN_BINARY_DIR if set, else the tree this test was built in.
std::string BinaryDir();
/// A program built in this tree, by target name; searched under BinaryDir().
std::string BuiltProgram(const std::string& name);

}  // namespace lakerun::testing
