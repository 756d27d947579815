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
/// The path a file system takes for an absolute URI: a "file:" scheme ("file:/x", "file:///x") is stripped and an
/// object-store URI (s3://, gs://, abfss://, ...) is kept whole; other schemes are refused.
std::string UriToLocalPath(std::string_view decoded, const std::string& context);
/// Whether a decoded path is absolute: "/x" or an object-store URI (else it is relative to the table).
bool IsAbsolutePath(std::string_view decoded);

}  // namespace lakerun::delta::internal
