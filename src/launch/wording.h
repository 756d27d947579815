// How the launcher's messages write counts and durations.
#pragma once

#include <chrono>
#include <string>

namespace lakerun::launch::internal {

/// "3 ranks", "1 node".
std::string Plural(int n, const char* word);
/// "2.5 s", "0.2 s": as exact as the duration is.
std::string Seconds(std::chrono::milliseconds ms);
/// "61 s": rounded to whole seconds (how long a rank waited, as seen by a sampling watcher).
std::string WholeSeconds(std::chrono::milliseconds ms);

}  // namespace lakerun::launch::internal
