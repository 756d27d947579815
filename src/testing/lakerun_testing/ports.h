// Loopback ports for tests that start servers or ranks themselves.
#pragma once

namespace lakerun::testing {

/// A loopback port nothing listens on right now (bind to port 0, read it back, close). Another process may take
/// it before the caller binds it; good enough for tests on loopback.
int FreeLoopbackPort();

}  // namespace lakerun::testing
