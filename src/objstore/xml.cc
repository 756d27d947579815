#include "objstore/xml.h"

#include <cstdint>
#include <cstdlib>

#include "base/utf8.h"

namespace lakerun::objstore {
namespace {

// Decodes the entity at text[0] == '&' into *out; returns the characters consumed (0: not an entity, kept as is).
size_t DecodeEntity(std::string_view text, std::string* out) {
  const size_t semicolon = text.find(';');
  if (semicolon == std::string_view::npos || semicolon > 12) return 0;
  const std::string_view name = text.substr(1, semicolon - 1);
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
  for (const auto& [entity, c] : kNamed) {
    if (name == entity) {
      out->push_back(c);
      return semicolon + 1;
    }
  }
  if (name.size() < 2 || name[0] != '#') return 0;
  const bool hex = name[1] == 'x' || name[1] == 'X';
  const std::string digits(name.substr(hex ? 2 : 1));
  char* end = nullptr;
  const unsigned long code = std::strtoul(digits.c_str(), &end, hex ? 16 : 10);
  if (digits.empty() || *end != '\0' || code > 0x10FFFF) return 0;
  AppendUtf8(static_cast<uint32_t>(code), out);
  return semicolon + 1;
}

}  // namespace

std::vector<std::string_view> XmlElements(std::string_view xml, std::string_view name) {
  std::vector<std::string_view> out;
  const std::string open = "<" + std::string(name);
  const std::string close = "</" + std::string(name) + ">";
  size_t at = 0;
  while ((at = xml.find(open, at)) != std::string_view::npos) {
    const size_t after = at + open.size();
    if (after >= xml.size()) break;
    const char next = xml[after];
    if (next != '>' && next != ' ' && next != '/' && next != '\t' && next != '\n' && next != '\r') {
      at = after;  // a longer name with this prefix ("<Prefix" in "<PrefixList>")
      continue;
    }
    const size_t tag_end = xml.find('>', after);
    if (tag_end == std::string_view::npos) break;
    if (xml[tag_end - 1] == '/') {  // <Name/> or <Name attr="x"/>
      out.emplace_back();
      at = tag_end + 1;
      continue;
    }
    const size_t end = xml.find(close, tag_end + 1);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(tag_end + 1, end - tag_end - 1));
    at = end + close.size();
  }
  return out;
}

std::string XmlText(std::string_view xml, std::string_view name) {
  const std::vector<std::string_view> found = XmlElements(xml, name);
  return found.empty() ? std::string() : XmlDecode(found.front());
}

std::string XmlDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 9, "<![CDATA[") == 0) {
      const size_t end = text.find("]]>", i + 9);
      const size_t stop = end == std::string_view::npos ? text.size() : end;
      out.append(text.substr(i + 9, stop - i - 9));
      i = end == std::string_view::npos ? text.size() : end + 3;
      continue;
    }
    if (text[i] == '&') {
      const size_t used = DecodeEntity(text.substr(i), &out);
      if (used > 0) {
        i += used;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

}  // namespace lakerun::objstore
