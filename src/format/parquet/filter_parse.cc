// Filter::Parse: a recursive-descent parser for the SQL-like filter text described in filter.h.
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "lakerun/base/error.h"
#include "lakerun/format/filter.h"

namespace lakerun::format {
namespace {

using parquet::Value;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Filter ParseAll() {
    Filter f = ParseOr();
    SkipSpace();
    if (pos_ < text_.size()) Fail("unexpected text");
    return f;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    LAKERUN_THROW(InvalidArgument, "filter '", std::string(text_), "': ", what, " at offset ", pos_,
                  pos_ < text_.size() ? StrCat(" ('", std::string(text_.substr(pos_, 12)), "')") : " (end)");
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  static bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

  // Consumes `keyword` (case-insensitive, as a whole word) when it comes next.
  bool Keyword(std::string_view keyword) {
    SkipSpace();
    if (text_.size() - pos_ < keyword.size()) return false;
    for (size_t i = 0; i < keyword.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(text_[pos_ + i])) != keyword[i]) return false;
    }
    const size_t end = pos_ + keyword.size();
    if (end < text_.size() && IsWordChar(text_[end])) return false;
    pos_ = end;
    return true;
  }

  bool Symbol(std::string_view symbol) {
    SkipSpace();
    if (text_.substr(pos_, symbol.size()) != symbol) return false;
    pos_ += symbol.size();
    return true;
  }

  Filter ParseOr() {
    std::vector<Filter> parts{ParseAnd()};
    while (Keyword("or")) parts.push_back(ParseAnd());
    return parts.size() == 1 ? std::move(parts[0]) : Filter::Or(std::move(parts));
  }

  Filter ParseAnd() {
    std::vector<Filter> parts{ParseUnary()};
    while (Keyword("and")) parts.push_back(ParseUnary());
    return parts.size() == 1 ? std::move(parts[0]) : Filter::And(std::move(parts));
  }

  Filter ParseUnary() {
    if (Keyword("not")) return Filter::Not(ParseUnary());
    if (Symbol("(")) {
      Filter f = ParseOr();
      if (!Symbol(")")) Fail("expected ')'");
      return f;
    }
    return ParseLeaf();
  }

  // The text up to the closing `quote` (an opening one was just consumed); a doubled quote stands for itself.
  std::string Quoted(char quote, const char* what) {
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) Fail(StrCat("unterminated ", what));
      const char c = text_[pos_++];
      if (c != quote) {
        out += c;
      } else if (pos_ < text_.size() && text_[pos_] == quote) {
        out += quote;
        ++pos_;
      } else {
        return out;
      }
    }
  }

  std::string ParseColumn() {
    SkipSpace();
    if (Symbol("`")) {
      std::string name = Quoted('`', "back-quoted column name");
      if (name.empty()) Fail("empty column name");
      return name;
    }
    const size_t begin = pos_;
    while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
    if (pos_ == begin || std::isdigit(static_cast<unsigned char>(text_[begin]))) Fail("expected a column name");
    return std::string(text_.substr(begin, pos_ - begin));
  }

  Value ParseLiteral() {
    SkipSpace();
    if (Symbol("'")) return Value::String(Quoted('\'', "string"));
    if (Keyword("true")) return Value::Bool(true);
    if (Keyword("false")) return Value::Bool(false);
    if (Keyword("null")) Fail("a comparison with null is never true; use IS NULL");
    const size_t begin = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
    bool is_float = false;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
                                   ((text_[pos_] == '-' || text_[pos_] == '+') &&
                                    std::tolower(static_cast<unsigned char>(text_[pos_ - 1])) == 'e'))) {
      is_float = is_float || text_[pos_] == '.' || std::tolower(static_cast<unsigned char>(text_[pos_])) == 'e';
      ++pos_;
    }
    const std::string token(text_.substr(begin, pos_ - begin));
    if (token.empty()) Fail("expected a literal (number, 'string', true or false)");
    char* end = nullptr;
    errno = 0;
    if (!is_float) {
      const long long v = std::strtoll(token.c_str(), &end, 10);
      if (errno == 0 && end == token.c_str() + token.size()) return Value::Int(v);
      if (errno == ERANGE) Fail(StrCat("integer ", token, " is out of the 64-bit range"));
    }
    errno = 0;
    const double d = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size() || errno == ERANGE) {
      pos_ = begin;
      Fail(StrCat("'", token, "' is not a number (quote strings: 'text')"));
    }
    return Value::Double(d);
  }

  Filter ParseLeaf() {
    const std::string column = ParseColumn();
    if (Keyword("is")) {
      const bool negated = Keyword("not");
      if (!Keyword("null")) Fail("expected NULL after IS");
      return negated ? Filter::IsNotNull(column) : Filter::IsNull(column);
    }
    const bool negated_in = Keyword("not");
    if (Keyword("in")) {
      if (!Symbol("(")) Fail("expected '(' after IN");
      std::vector<Value> values{ParseLiteral()};
      while (Symbol(",")) values.push_back(ParseLiteral());
      if (!Symbol(")")) Fail("expected ',' or ')' in the IN list");
      return negated_in ? Filter::NotIn(column, std::move(values)) : Filter::In(column, std::move(values));
    }
    if (negated_in) Fail("expected IN after NOT");
    static const std::pair<const char*, FilterOp> kOps[] = {
        {"==", FilterOp::kEq}, {"!=", FilterOp::kNe}, {"<>", FilterOp::kNe}, {"<=", FilterOp::kLe},
        {">=", FilterOp::kGe}, {"=", FilterOp::kEq},  {"<", FilterOp::kLt},  {">", FilterOp::kGt}};
    for (const auto& [symbol, op] : kOps) {
      if (Symbol(symbol)) return Filter::Compare(column, op, ParseLiteral());
    }
    Fail(StrCat("expected an operator (= != < <= > >= IN IS) after column '", column, "'"));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Filter Filter::Parse(std::string_view text) { return Parser(text).ParseAll(); }

}  // namespace lakerun::format
