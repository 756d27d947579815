// Private: the RFC 2396 URI paths of add/remove actions, percent-encoded and decoded.
#pragma once

#include <string>
#include <string_view>

namespace lakerun::delta::internal {

/// Decodes %XX escapes. Throws CorruptDataError (naming `context`) on a malformed escape.
std::string PercentDecode(std::string_view path, const std::string& context);
/// Encodes a relative file path for the log: keeps unreserved characters and '/', escapes everything else
/// (so "a b/c=d%e" becomes "a%20b/c=d%25e"; '=' is kept, as Spark writes partition directories).
std::string PercentEncodePath(std::string_view path);
/// Escapes a partition value for use in a directory name (Hive style: "%", "/", "=", control characters...).
std::string EscapePartitionValue(std::string_view value);
/// Strips a "file:" scheme ("file:/x", "file:///x") from an absolute URI; other schemes are refused.
std::string UriToLocalPath(std::string_view decoded, const std::string& context);

}  // namespace lakerun::delta::internal
