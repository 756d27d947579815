// Percent-encoding of Delta log paths.
#include "format/delta/uri.h"

#include <algorithm>
#include <cctype>

#include "lakerun/base/error.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::delta::internal {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool Unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

void AppendEscape(std::string* out, unsigned char c) {
  static const char kHex[] = "0123456789ABCDEF";
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 15]);
}

}  // namespace

std::string PercentDecode(std::string_view path, const std::string& context) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out.push_back(path[i]);
      continue;
    }
    const int hi = i + 2 < path.size() + 0 ? HexValue(path[i + 1]) : -1;
    const int lo = i + 2 < path.size() ? HexValue(path[i + 2]) : -1;
    LAKERUN_CHECK_AS(CorruptDataError, hi >= 0 && lo >= 0, context, ": malformed percent escape at offset ", i,
                     " of path '", std::string(path), "'");
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::string PercentEncodePath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (unsigned char c : path) {
    if (Unreserved(c) || c == '/' || c == '=') {
      out.push_back(static_cast<char>(c));
    } else {
      AppendEscape(&out, c);
    }
  }
  return out;
}

std::string EscapePartitionValue(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (c < 0x20 || c == '"' || c == '#' || c == '%' || c == '\'' || c == '*' || c == '/' || c == ':' || c == '=' ||
        c == '?' || c == '\\' || c == 0x7f || c == '{' || c == '[' || c == ']' || c == '^') {
      AppendEscape(&out, c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

// Whether `s` is a URI scheme (RFC 3986: a letter, then letters, digits, '+', '-', '.'), e.g. not the partition
// folder "time=1971-07-22T03" of a path "time=1971-07-22T03:00:00/part-0.parquet".
bool IsScheme(std::string_view s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}

std::string UriToLocalPath(std::string_view decoded, const std::string& context) {
  const size_t colon = decoded.find(':');
  const size_t slash = decoded.find('/');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && slash < colon) ||
      !IsScheme(decoded.substr(0, colon))) {
    return std::string(decoded);
  }
  if (IsObjectStorePath(decoded)) return std::string(decoded);
  const std::string_view scheme = decoded.substr(0, colon);
  LAKERUN_CHECK_AS(NotImplemented, scheme == "file", context, ": path '", std::string(decoded), "' uses scheme '",
                   std::string(scheme), "'; lakerun reads local paths, file: URIs and s3://, s3a://, gs://, abfss://, "
                   "abfs://, wasbs://, az:// object-store URIs");
  std::string_view rest = decoded.substr(colon + 1);
  if (rest.substr(0, 3) == "///") rest.remove_prefix(2);
  else if (rest.substr(0, 2) == "//") rest.remove_prefix(2);  // file://host/path: the host must be empty or local
  return std::string(rest);
}

bool IsAbsolutePath(std::string_view decoded) {
  return (!decoded.empty() && decoded.front() == '/') || IsObjectStorePath(decoded);
}

}  // namespace lakerun::delta::internal
