// The small subset of YAML that MLflow's file store uses: flat mappings of scalars, written the way PyYAML's
// safe_dump(default_flow_style=False) writes them (sorted keys, strings quoted only when needed).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lakerun::track {

/// One value of a flat YAML mapping.
class YamlValue {
 public:
  static YamlValue String(std::string s) { return YamlValue(Kind::kString, std::move(s)); }
  static YamlValue Int(long long v) { return YamlValue(Kind::kRaw, std::to_string(v)); }
  static YamlValue Null() { return YamlValue(Kind::kRaw, "null"); }
  static YamlValue EmptyList() { return YamlValue(Kind::kRaw, "[]"); }
  static YamlValue EmptyMap() { return YamlValue(Kind::kRaw, "{}"); }
  /// How PyYAML writes the value.
  std::string Emit() const;

 private:
  enum class Kind { kString, kRaw };
  YamlValue(Kind kind, std::string text) : kind_(kind), text_(std::move(text)) {}
  Kind kind_;
  std::string text_;
};

/// Writes "key: value\n" lines in key order (the map sorts them, as PyYAML does).
std::string EmitFlatYaml(const std::map<std::string, YamlValue>& fields);

/// Quotes a string the way PyYAML would: plain when it reads back as the same string, else single-quoted
/// ('' escapes a quote), or double-quoted when it holds control characters.
std::string EmitYamlString(std::string_view s);

/// A parsed scalar: its text with quotes removed, and whether it was null.
struct YamlScalar {
  std::string text;
  bool quoted = false;
  bool is_null = false;
};

/// Parses a flat mapping of scalars (top-level "key: value" lines). Nested blocks, flow collections ("[]", "{}")
/// are kept as raw text. CorruptDataError naming `where` and the line on anything else.
std::map<std::string, YamlScalar> ParseFlatYaml(std::string_view text, const std::string& where);

}  // namespace lakerun::track
