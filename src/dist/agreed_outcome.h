// One outcome for every rank of a step that each rank runs on its own (writing or reading its files).
//
//   std::vector<std::string> tables = AgreeOnOutcome(ctx, [&] { return WriteMyFile(); });
//
// When a rank fails a local step, its peers would otherwise walk on into the next collective and wait there until
// the timeout, reporting a CommTimeout that hides the cause. Here every rank runs its part, then one AllGatherBytes
// tells every rank how each part ended: either every rank gets every rank's result, or every rank throws.
#pragma once

#include <lakerun/dist/collectives.h>
#include <lakerun/dist/init.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace lakerun::dist {

/// Collective. Runs `body` on this rank and returns every rank's result, by rank, when every body returned. When some
/// body threw, every rank throws: a failed rank its own exception, the others the lowest failed rank's error as the
/// same lakerun error type (IoError, CorruptDataError, InvalidArgument, ConfigError, ...; other exceptions as
/// lakerun::Error), its message prefixed with "rank R: ". Results are bounded by `max_bytes` as AllGatherBytes'.
std::vector<std::string> AgreeOnOutcome(Context& ctx, const std::function<std::string()>& body,
                                        std::size_t max_bytes = kDefaultMaxObjectBytes);

}  // namespace lakerun::dist
