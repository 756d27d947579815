// Adding context (the rank, the batch) to an error that crossed threads, keeping its lakerun::Error subclass so
// callers can still catch CorruptDataError, IoError... by type.
#pragma once

#include <exception>
#include <string>

namespace lakerun::data {

/// Must be called inside a catch block: rethrows the exception being handled as the same lakerun::Error subclass
/// with `context` prefixed to its message (other std::exceptions become lakerun::Error).
[[noreturn]] void RethrowWithContext(const std::string& context);

/// Must be called inside a catch block: the exception being handled with `context` prefixed, as RethrowWithContext
/// would throw it, for handing to another thread.
std::exception_ptr CurrentWithContext(const std::string& context);

}  // namespace lakerun::data
