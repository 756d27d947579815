#include "hive_partitions.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "lakerun/base/error.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

constexpr char kNullPartition[] = "__HIVE_DEFAULT_PARTITION__";

// Hive escapes characters such as '/', '=', ':' and '%' in folder names as %XX.
std::string Unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

bool IsInteger(const std::string& s) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size();
}

bool IsNumber(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// The key=value folders of `file` below `root`, in order.
std::vector<std::pair<std::string, std::string>> Folders(const std::string& root, const std::string& file) {
  std::string relative = file.substr(std::min(file.size(), root.size()));
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (true) {
    const size_t slash = relative.find('/', start);
    if (slash == std::string::npos) break;  // the last segment is the file itself
    const std::string segment = relative.substr(start, slash - start);
    const size_t eq = segment.find('=');
    if (eq != std::string::npos && eq > 0) out.emplace_back(Unescape(segment.substr(0, eq)), segment.substr(eq + 1));
    start = slash + 1;
  }
  return out;
}

}  // namespace

HivePartitions ParseHivePartitions(const std::string& root, const std::vector<std::string>& files) {
  HivePartitions out;
  for (size_t f = 0; f < files.size(); ++f) {
    const auto folders = Folders(root, files[f]);
    std::vector<std::string> keys;
    std::map<std::string, std::optional<std::string>> text;
    for (const auto& [key, value] : folders) {
      keys.push_back(key);
      text[key] = value == kNullPartition ? std::nullopt : std::optional<std::string>(Unescape(value));
    }
    if (f == 0) out.keys = keys;
    LAKERUN_CHECK(keys == out.keys, root, ": the partition folders of ", files[f], " do not name the same keys as ",
                  files[0], "'s: every file of a Hive-partitioned table sits under the same key=value levels");
    out.text.push_back(std::move(text));
  }
  for (const std::string& key : out.keys) {
    bool integers = true, numbers = true;
    for (const auto& text : out.text) {
      const std::optional<std::string>& v = text.at(key);
      if (!v) continue;
      integers = integers && IsInteger(*v);
      numbers = numbers && IsNumber(*v);
    }
    out.types[key] = delta::PrimitiveType(integers ? "long" : numbers ? "double" : "string");
  }
  for (const auto& text : out.text) {
    std::map<std::string, pq::Value> values;
    for (const std::string& key : out.keys) {
      const std::optional<std::string>& v = text.at(key);
      const delta::TypeKind kind = out.types.at(key)->kind;
      values[key] = !v                                ? pq::Value::Null()
                    : kind == delta::TypeKind::kLong   ? pq::Value::Int(std::strtoll(v->c_str(), nullptr, 10))
                    : kind == delta::TypeKind::kDouble ? pq::Value::Double(std::strtod(v->c_str(), nullptr))
                                                       : pq::Value::String(*v);
    }
    out.values.push_back(std::move(values));
  }
  return out;
}

}  // namespace lakerun::data
