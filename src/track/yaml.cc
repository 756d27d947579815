#include "track/yaml.h"

#include <cctype>
#include <cstdio>
#include <regex>

#include "lakerun/base/error.h"

namespace lakerun::track {
namespace {

// Plain scalars that YAML 1.1 (PyYAML's resolver) would read as something other than a string.
bool ResolvesToNonString(std::string_view s) {
  static const std::regex kSpecial(
      "^(?:~|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
      "|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
      "|[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?|[-+]?\\.[0-9_]+(?:[eE][-+][0-9]+)?"
      "|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN)|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?.*|<<|=)$");
  return std::regex_match(s.begin(), s.end(), kSpecial);
}

bool NeedsDoubleQuotes(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool CanBePlain(std::string_view s) {
  if (s.empty()) return false;
  if (s.front() == ' ' || s.back() == ' ') return false;
  static const std::string_view kIndicators = "-?:,[]{}#&*!|>'\"%@`";
  if (kIndicators.find(s.front()) != std::string_view::npos) {
    // "-", "?" and ":" may start a plain scalar when followed by a non-space.
    const bool allowed = (s.front() == '-' || s.front() == '?' || s.front() == ':') && s.size() > 1 && s[1] != ' ';
    if (!allowed) return false;
  }
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) return false;
  if (s.back() == ':') return false;
  for (char c : s) {
    if (c == '\n' || c == '\t') return false;
  }
  return !ResolvesToNonString(s);
}

}  // namespace

std::string EmitYamlString(std::string_view s) {
  if (NeedsDoubleQuotes(s)) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out.push_back('\\');
        out.push_back(static_cast<char>(c));
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02X", c);
        out += buf;
      } else {
        out.push_back(static_cast<char>(c));
      }
    }
    return out + "\"";
  }
  if (CanBePlain(s)) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out.push_back('\'');
    out.push_back(c);
  }
  return out + "'";
}

std::string YamlValue::Emit() const { return kind_ == Kind::kString ? EmitYamlString(text_) : text_; }

std::string EmitFlatYaml(const std::map<std::string, YamlValue>& fields) {
  std::string out;
  for (const auto& [key, value] : fields) {
    out += key;
    out += ": ";
    out += value.Emit();
    out += '\n';
  }
  return out;
}

namespace {

YamlScalar ParseScalar(std::string_view raw, const std::string& where, int line_no) {
  YamlScalar out;
  if (raw.empty() || raw == "null" || raw == "~" || raw == "Null" || raw == "NULL") {
    out.is_null = true;
    return out;
  }
  if (raw.front() == '\'') {
    LAKERUN_CHECK_AS(CorruptDataError, raw.size() >= 2 && raw.back() == '\'', where, ":", line_no,
                     ": unterminated single-quoted string");
    out.quoted = true;
    for (size_t i = 1; i + 1 < raw.size(); ++i) {
      out.text.push_back(raw[i]);
      if (raw[i] == '\'' && i + 2 < raw.size() && raw[i + 1] == '\'') ++i;
    }
    return out;
  }
  if (raw.front() == '"') {
    LAKERUN_CHECK_AS(CorruptDataError, raw.size() >= 2 && raw.back() == '"', where, ":", line_no,
                     ": unterminated double-quoted string");
    out.quoted = true;
    for (size_t i = 1; i + 1 < raw.size(); ++i) {
      char c = raw[i];
      if (c == '\\' && i + 2 < raw.size()) {
        const char e = raw[++i];
        switch (e) {
          case 'n': out.text.push_back('\n'); break;
          case 't': out.text.push_back('\t'); break;
          case 'x':
            if (i + 2 < raw.size()) {
              out.text.push_back(static_cast<char>(std::stoi(std::string(raw.substr(i + 1, 2)), nullptr, 16)));
              i += 2;
            }
            break;
          default: out.text.push_back(e);
        }
      } else {
        out.text.push_back(c);
      }
    }
    return out;
  }
  out.text = std::string(raw);
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::map<std::string, YamlScalar> ParseFlatYaml(std::string_view text, const std::string& where) {
  std::map<std::string, YamlScalar> out;
  int line_no = 0;
  std::string last_key;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (Trim(line).empty() || Trim(line).front() == '#') continue;
    if (line.front() == ' ' || line.front() == '-') {
      // A nested block or a continuation of the previous key's value: kept raw, as flat readers ignore it.
      LAKERUN_CHECK_AS(CorruptDataError, !last_key.empty(), where, ":", line_no, ": indented line before any key");
      auto& prev = out[last_key];
      if (!prev.text.empty()) prev.text += ' ';
      prev.text += std::string(Trim(line));
      prev.is_null = false;
      continue;
    }
    const size_t colon = line.find(':');
    LAKERUN_CHECK_AS(CorruptDataError, colon != std::string_view::npos, where, ":", line_no,
                     ": expected 'key: value', got '", line, "'");
    last_key = std::string(Trim(line.substr(0, colon)));
    out[last_key] = ParseScalar(Trim(line.substr(colon + 1)), where, line_no);
  }
  return out;
}

}  // namespace lakerun::track
