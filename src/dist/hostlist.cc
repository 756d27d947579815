#include "dist/hostlist.h"

#include <lakerun/base/error.h>

#include <cctype>
#include <cstdint>

namespace lakerun::dist {
namespace {

// Splits on commas that are not inside brackets; throws on unbalanced brackets.
std::vector<std::string> SplitTopLevel(const std::string& expr) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (std::size_t i = 0; i < expr.size(); ++i) {
    char c = expr[i];
    if (c == '[') {
      LAKERUN_CHECK(depth == 0, "hostlist '", expr, "': nested '[' at position ", i);
      ++depth;
    } else if (c == ']') {
      LAKERUN_CHECK(depth == 1, "hostlist '", expr, "': unmatched ']' at position ", i);
      --depth;
    }
    if (c == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  LAKERUN_CHECK(depth == 0, "hostlist '", expr, "': unclosed '['");
  items.push_back(current);
  return items;
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "01-03,7" -> {"01","02","03","7"}, keeping the width of the low bound.
std::vector<std::string> ExpandRange(const std::string& expr, const std::string& body, std::size_t max_hosts) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= body.size()) {
    std::size_t comma = body.find(',', start);
    std::string part = body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::size_t dash = part.find('-');
    std::string lo = dash == std::string::npos ? part : part.substr(0, dash);
    std::string hi = dash == std::string::npos ? part : part.substr(dash + 1);
    LAKERUN_CHECK(AllDigits(lo) && AllDigits(hi) && lo.size() <= 18 && hi.size() <= 18, "hostlist '", expr,
                  "': bad range '", part, "' (expected N or LO-HI with decimal digits)");
    uint64_t a = std::stoull(lo), b = std::stoull(hi);
    LAKERUN_CHECK(a <= b, "hostlist '", expr, "': range '", part, "' runs backwards");
    LAKERUN_CHECK(b - a < max_hosts && out.size() + (b - a + 1) <= max_hosts, "hostlist '", expr,
                  "' expands to more than ", max_hosts, " hosts");
    for (uint64_t v = a; v <= b; ++v) {
      std::string s = std::to_string(v);
      if (s.size() < lo.size()) s.insert(0, lo.size() - s.size(), '0');
      out.push_back(std::move(s));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void ExpandItem(const std::string& expr, const std::string& item, std::size_t max_hosts,
                std::vector<std::string>* out) {
  std::vector<std::string> partial{""};
  std::size_t pos = 0;
  while (pos < item.size()) {
    std::size_t open = item.find('[', pos);
    std::string literal = item.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    for (auto& p : partial) p += literal;
    if (open == std::string::npos) break;
    std::size_t close = item.find(']', open);  // balanced: checked by SplitTopLevel
    std::vector<std::string> values = ExpandRange(expr, item.substr(open + 1, close - open - 1), max_hosts);
    LAKERUN_CHECK(partial.size() * values.size() <= max_hosts, "hostlist '", expr, "' expands to more than ",
                  max_hosts, " hosts");
    std::vector<std::string> next;
    next.reserve(partial.size() * values.size());
    for (const auto& p : partial) {
      for (const auto& v : values) next.push_back(p + v);
    }
    partial = std::move(next);
    pos = close + 1;
  }
  for (auto& p : partial) {
    LAKERUN_CHECK(out->size() < max_hosts, "hostlist '", expr, "' expands to more than ", max_hosts, " hosts");
    out->push_back(std::move(p));
  }
}

}  // namespace

std::vector<std::string> ExpandHostlist(const std::string& expression, std::size_t max_hosts) {
  std::vector<std::string> hosts;
  for (const std::string& item : SplitTopLevel(expression)) {
    LAKERUN_CHECK(!item.empty(), "hostlist '", expression, "': empty host name");
    ExpandItem(expression, item, max_hosts, &hosts);
  }
  return hosts;
}

std::string FirstHost(const std::string& expression) {
  std::vector<std::string> items = SplitTopLevel(expression);
  LAKERUN_CHECK(!items.empty() && !items[0].empty(), "hostlist '", expression, "': empty host name");
  std::vector<std::string> hosts;
  ExpandItem(expression, items[0], std::size_t{1} << 20, &hosts);
  return hosts.front();
}

}  // namespace lakerun::dist
