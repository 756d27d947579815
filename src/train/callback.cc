#include "lakerun/train/callback.h"

#include <cstdio>
#include <cstdlib>

#include "lakerun/base/error.h"
#include "lakerun/dist/collectives.h"
#include "lakerun/dist/init.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::train {
namespace {

const char* TypeName(const StateValue& v) {
  switch (v.index()) {
    case 0: return "int";
    case 1: return "double";
    case 2: return "string";
    default: return "table";
  }
}

template <typename T>
const T& Get(const std::map<std::string, StateValue>& values, const std::string& key, const char* want) {
  auto it = values.find(key);
  LAKERUN_CHECK_AS(CorruptDataError, it != values.end(), "callback state: key '", key, "' is missing (expected ",
                   want, ")");
  const T* v = std::get_if<T>(&it->second);
  LAKERUN_CHECK_AS(CorruptDataError, v != nullptr, "callback state: key '", key, "' holds a ", TypeName(it->second),
                   ", expected ", want);
  return *v;
}

std::string HexDouble(double d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", d);
  return buf;
}

// A cursor over Encode()'s text; errors name the line.
class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Char() {
    Need(1);
    return text_[pos_++];
  }
  void Expect(char c) {
    char got = Char();
    LAKERUN_CHECK_AS(CorruptDataError, got == c, "callback state text, line ", line_, ": expected '", c,
                     "' at offset ", pos_ - 1);
    if (c == '\n') ++line_;
  }
  // <len>:<bytes>
  std::string Sized() {
    size_t n = static_cast<size_t>(Number());
    Expect(':');
    Need(n);
    std::string s = text_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  // digits up to a space, newline or colon
  int64_t Number() { return std::strtoll(Token().c_str(), nullptr, 10); }
  double Double() {
    std::string t = Token();
    char* end = nullptr;
    double d = std::strtod(t.c_str(), &end);
    LAKERUN_CHECK_AS(CorruptDataError, end != t.c_str() && *end == '\0', "callback state text, line ", line_,
                     ": bad number '", t, "'");
    return d;
  }
  std::string Token() {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '\n' && text_[pos_] != ':') ++pos_;
    LAKERUN_CHECK_AS(CorruptDataError, pos_ > start, "callback state text, line ", line_, ": empty token at offset ",
                     start);
    return text_.substr(start, pos_ - start);
  }
  int line() const { return line_; }

 private:
  void Need(size_t n) {
    LAKERUN_CHECK_AS(CorruptDataError, pos_ + n <= text_.size(), "callback state text, line ", line_,
                     ": truncated at offset ", pos_);
  }
  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 1;
};

class DistRankSync final : public RankSync {
 public:
  explicit DistRankSync(dist::Context& ctx) : ctx_(ctx) {}
  int rank() const override { return ctx_.rank(); }
  int world_size() const override { return ctx_.world_size(); }
  bool Any(bool decision) override {
    return dist::AllReduceInt64(ctx_, decision ? 1 : 0, dist::ReduceOp::kSum) > 0;
  }
  bool All(bool decision) override {
    return dist::AllReduceInt64(ctx_, decision ? 1 : 0, dist::ReduceOp::kSum) == ctx_.world_size();
  }
  void Barrier() override { dist::Barrier(ctx_); }

 private:
  dist::Context& ctx_;
};

}  // namespace

int64_t StateDict::GetInt(const std::string& key) const { return Get<int64_t>(values_, key, "int"); }
double StateDict::GetDouble(const std::string& key) const { return Get<double>(values_, key, "double"); }
const std::string& StateDict::GetString(const std::string& key) const {
  return Get<std::string>(values_, key, "string");
}
const std::map<std::string, double>& StateDict::GetTable(const std::string& key) const {
  return Get<std::map<std::string, double>>(values_, key, "table");
}

std::string StateDict::Encode() const {
  std::string out;
  for (const auto& [key, value] : values_) {
    const std::string k = StrCat(key.size(), ":", key);
    switch (value.index()) {
      case 0: out += StrCat("i ", k, " ", std::get<int64_t>(value), "\n"); break;
      case 1: out += StrCat("d ", k, " ", HexDouble(std::get<double>(value)), "\n"); break;
      case 2: {
        const auto& s = std::get<std::string>(value);
        out += StrCat("s ", k, " ", s.size(), ":", s, "\n");
        break;
      }
      default: {
        const auto& t = std::get<std::map<std::string, double>>(value);
        out += StrCat("t ", k, " ", t.size(), "\n");
        for (const auto& [name, score] : t) out += StrCat(name.size(), ":", name, " ", HexDouble(score), "\n");
      }
    }
  }
  return out;
}

StateDict StateDict::Decode(const std::string& text) {
  StateDict out;
  Reader r(text);
  while (!r.AtEnd()) {
    const char type = r.Char();
    r.Expect(' ');
    std::string key = r.Sized();
    r.Expect(' ');
    switch (type) {
      case 'i': out.Set(key, r.Number()); break;
      case 'd': out.Set(key, r.Double()); break;
      case 's': out.Set(key, r.Sized()); break;
      case 't': {
        int64_t n = r.Number();
        r.Expect('\n');
        std::map<std::string, double> table;
        for (int64_t i = 0; i < n; ++i) {
          std::string name = r.Sized();
          r.Expect(' ');
          table[name] = r.Double();
          if (i + 1 < n) r.Expect('\n');
        }
        out.Set(key, std::move(table));
        if (n == 0) continue;
        break;
      }
      default:
        LAKERUN_THROW(CorruptDataError, "callback state text, line ", r.line(), ": unknown entry type '", type, "'");
    }
    r.Expect('\n');
  }
  return out;
}

std::unique_ptr<RankSync> NewDistRankSync(dist::Context& ctx) { return std::make_unique<DistRankSync>(ctx); }

RankSync& TrainerState::Sync() const {
  static LocalRankSync local;
  return sync != nullptr ? *sync : local;
}

FileSystem& TrainerState::Fs() const { return fs != nullptr ? *fs : UriFileSystem(); }

std::string PyRepr(const std::string& s, bool none_if_empty) {
  if (none_if_empty && s.empty()) return "None";
  const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    if (c == '\\' || c == quote) out += '\\';
    out += c;
  }
  out += quote;
  return out;
}

}  // namespace lakerun::train
