// Lazy, column-selective parsing of add-action stats: a small JSON scanner that validates the whole text, decodes
// the values of requested columns and skips everything else without building a DOM.
#include "lakerun/format/delta/file_stats.h"

#include <charconv>
#include <set>
#include <string>

#include "base/utf8.h"
#include "lakerun/base/error.h"
#include "lakerun/format/delta/values.h"

namespace lakerun::delta {
namespace {

using parquet::Value;

constexpr int kMaxDepth = 64;  // deeper nesting is treated as malformed (no unbounded recursion)

bool IsIntegral(TypeKind k) {
  return k == TypeKind::kLong || k == TypeKind::kInteger || k == TypeKind::kShort || k == TypeKind::kByte;
}

// A forward-only scanner over one JSON text. Every method returns false on a syntax error; the caller then gives
// up on the whole text.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void SkipWhitespace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  /// The next non-whitespace character, or '\0' at the end.
  char Peek() {
    SkipWhitespace();
    return p_ < end_ ? *p_ : '\0';
  }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++p_;
    return true;
  }
  bool AtEnd() {
    SkipWhitespace();
    return p_ == end_;
  }

  /// A string token: its text between the quotes (`raw`, escapes untouched) and, when `decoded` is given, the
  /// unescaped value.
  bool String(std::string_view* raw, std::string* decoded) {
    if (!Consume('"')) return false;
    const char* start = p_;
    bool escaped = false;
    while (p_ < end_ && *p_ != '"') {
      if (static_cast<unsigned char>(*p_) < 0x20) return false;
      if (*p_ == '\\') {
        escaped = true;
        if (++p_ == end_) return false;
      }
      ++p_;
    }
    if (p_ == end_) return false;
    *raw = std::string_view(start, static_cast<size_t>(p_ - start));
    ++p_;
    if (!escaped) {
      if (decoded) decoded->assign(*raw);
      return true;
    }
    std::string scratch;
    return Unescape(*raw, decoded ? decoded : &scratch);
  }

  /// A number token's text (validated against the JSON grammar).
  bool Number(std::string_view* token) {
    SkipWhitespace();
    const char* start = p_;
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (!Digits()) {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!Digits()) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!Digits()) return false;
    }
    *token = std::string_view(start, static_cast<size_t>(p_ - start));
    return true;
  }

  /// Skips one value of any kind.
  bool SkipValue(int depth) {
    if (depth > kMaxDepth) return false;
    switch (Peek()) {
      case '"': {
        std::string_view raw;
        return String(&raw, nullptr);
      }
      case '{':
        return Members(depth, [&](std::string_view) { return SkipValue(depth + 1); });
      case '[': {
        ++p_;
        if (Consume(']')) return true;
        do {
          if (!SkipValue(depth + 1)) return false;
        } while (Consume(','));
        return Consume(']');
      }
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default: {
        std::string_view token;
        return Number(&token);
      }
    }
  }

  /// An object: calls member(key) for each member, positioned at its value, which member must consume.
  template <typename F>
  bool Members(int depth, F&& member) {
    if (depth > kMaxDepth || !Consume('{')) return false;
    if (Consume('}')) return true;
    std::string key;
    do {
      std::string_view raw;
      if (!String(&raw, &key) || !Consume(':') || !member(std::string_view(key))) return false;
    } while (Consume(','));
    return Consume('}');
  }

 private:
  bool Digits() {
    const char* start = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ > start;
  }
  bool Literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }
  static bool Hex4(std::string_view s, size_t at, uint32_t* out) {
    if (at + 4 > s.size()) return false;
    uint32_t v = 0;
    for (size_t i = at; i < at + 4; ++i) {
      const char c = s[i];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    *out = v;
    return true;
  }
  static bool Unescape(std::string_view raw, std::string* out) {
    out->clear();
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '\\') {
        out->push_back(raw[i]);
        continue;
      }
      const char c = raw[++i];
      switch (c) {
        case '"': case '\\': case '/': out->push_back(c); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(raw, i + 1, &cp)) return false;
          i += 4;
          if (cp >= 0xd800 && cp < 0xdc00) {  // high surrogate: a low one must follow
            uint32_t low = 0;
            if (i + 2 >= raw.size() || raw[i + 1] != '\\' || raw[i + 2] != 'u' || !Hex4(raw, i + 3, &low) ||
                low < 0xdc00 || low >= 0xe000) {
              return false;
            }
            i += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          } else if (cp >= 0xdc00 && cp < 0xe000) {
            return false;
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return false;
      }
    }
    return true;
  }

  const char* p_;
  const char* end_;
};

enum class Section { kMin, kMax, kNullCount };

// Parses one stats text for a fixed set of requested columns.
class StatsParser {
 public:
  explicit StatsParser(const std::map<std::string, const DataType*>& columns) : columns_(columns) {
    for (const auto& [key, type] : columns) {
      for (size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', dot + 1)) {
        prefixes_.insert(key.substr(0, dot));
      }
    }
  }

  std::optional<FileStats> Parse(std::string_view json) {
    Scanner s(json);
    FileStats out;
    const bool ok = s.Members(0, [&](std::string_view key) {
      if (key == "numRecords") {
        out.num_records = Integer(s);
        return out.num_records.has_value() || s.SkipValue(1);
      }
      if (key == "minValues") return SectionOrSkip(s, Section::kMin, &out);
      if (key == "maxValues") return SectionOrSkip(s, Section::kMax, &out);
      if (key == "nullCount") return SectionOrSkip(s, Section::kNullCount, &out);
      return s.SkipValue(1);
    });
    if (!ok || !s.AtEnd()) return std::nullopt;
    return out;
  }

 private:
  // An integer number token, consumed; nullopt (nothing consumed) for any other value.
  static std::optional<int64_t> Integer(Scanner& s) {
    const char c = s.Peek();
    if (c != '-' && (c < '0' || c > '9')) return std::nullopt;
    Scanner probe = s;
    std::string_view token;
    if (!probe.Number(&token) || token.find_first_of(".eE") != std::string_view::npos) return std::nullopt;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
    s = probe;
    return v;
  }

  bool SectionOrSkip(Scanner& s, Section section, FileStats* out) {
    if (s.Peek() != '{') return s.SkipValue(1);
    return Object(s, section, std::string(), 1, out);
  }

  // The members of a (possibly nested) section object whose keys extend `prefix`.
  bool Object(Scanner& s, Section section, const std::string& prefix, int depth, FileStats* out) {
    return s.Members(depth, [&](std::string_view key) {
      std::string full = prefix.empty() ? std::string(key) : StrCat(prefix, ".", key);
      if (auto it = columns_.find(full); it != columns_.end()) return Entry(s, section, *it, depth, out);
      if (s.Peek() == '{' && prefixes_.count(full)) return Object(s, section, full, depth + 1, out);
      return s.SkipValue(depth + 1);
    });
  }

  // The value of a requested column in one section; ill-typed values are skipped and left absent.
  bool Entry(Scanner& s, Section section, const std::pair<const std::string, const DataType*>& column, int depth,
             FileStats* out) {
    if (section == Section::kNullCount) {
      if (std::optional<int64_t> n = Integer(s)) {
        out->columns[column.first].null_count = *n;
        return true;
      }
      return s.SkipValue(depth + 1);
    }
    std::optional<Value> value;
    if (!TypedValue(s, *column.second, depth, &value)) return false;
    if (value) {
      ColumnStats& stats = out->columns[column.first];
      (section == Section::kMin ? stats.min : stats.max) = std::move(value);
    }
    return true;
  }

  // Consumes one value and types it as ParseStatsValue does; `*out` stays empty when it does not fit `type`.
  static bool TypedValue(Scanner& s, const DataType& type, int depth, std::optional<Value>* out) {
    const char c = s.Peek();
    if (c == '"') {
      std::string_view raw;
      std::string text;
      if (!s.String(&raw, &text)) return false;
      switch (type.kind) {
        case TypeKind::kString:
          *out = Value::String(std::move(text));
          break;
        case TypeKind::kDate:
        case TypeKind::kTimestamp:
        case TypeKind::kTimestampNtz:
          *out = ParseStatsValue(StrCat("\"", raw, "\""), type);
          break;
        default:
          break;
      }
      return true;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      std::string_view token;
      if (!s.Number(&token)) return false;
      const char* end = token.data() + token.size();
      if (IsIntegral(type.kind)) {
        int64_t v = 0;
        const auto r = std::from_chars(token.data(), end, v);
        if (r.ec == std::errc() && r.ptr == end) *out = Value::Int(v);
      } else if (type.kind == TypeKind::kDouble || type.kind == TypeKind::kFloat) {
        double v = 0;
        const auto r = std::from_chars(token.data(), end, v);
        if (r.ec == std::errc() && r.ptr == end) {
          *out = type.kind == TypeKind::kFloat ? Value::Float(static_cast<float>(v)) : Value::Double(v);
        }
      }
      return true;
    }
    return s.SkipValue(depth + 1);
  }

  const std::map<std::string, const DataType*>& columns_;
  std::set<std::string> prefixes_;  // proper dotted prefixes of requested keys: the struct objects to descend into
};

}  // namespace

std::optional<FileStats> ParseFileStats(std::string_view json, const std::map<std::string, const DataType*>& columns) {
  return StatsParser(columns).Parse(json);
}

}  // namespace lakerun::delta
