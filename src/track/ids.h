// Default ids, names and clock of the tracking stores (each injectable through StoreOptions).
#pragma once

#include <cstdint>
#include <string>

#include "lakerun/track/store.h"

namespace lakerun::track {

/// Milliseconds since the Unix epoch.
int64_t SystemClockMs();
/// uuid4().hex: 32 lower-case hex characters.
std::string NewUuidHex();
/// An 18-digit random integer string, as MLflow's file store makes experiment ids.
std::string NewExperimentId();
/// "adjective-noun-NNN", in the style of MLflow's generated run names.
std::string NewRunName();
/// `options` with every empty injection point filled with its default.
StoreOptions WithDefaults(StoreOptions options);

}  // namespace lakerun::track
