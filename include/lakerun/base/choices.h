// Closed sets of named values: an `enum class` with the names users type (flags, environment variables, config
// files), the name of a value, the value of a name, and the nearest name to a misspelled one.
//
//   enum class Color { kRed, kGreen };
//   inline constexpr NamedValue<Color> kColorNames[] = {{Color::kRed, "red"}, {Color::kGreen, "green"}};
//   NameOf(Color::kGreen, kColorNames)                  // "green"
//   ParseNamed("--color", "gren", kColorNames)          // ConfigError: --color: 'gren' is not one of red, green
//                                                       //   (did you mean 'green'?)
//
// A table may list a value more than once: the first entry is its name, the others are accepted aliases.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun {

template <typename E>
struct NamedValue {
  E value;
  const char* name;
};

/// The name of `value`: its first entry in `names`, "?" when it has none.
template <typename E, size_t N>
const char* NameOf(E value, const NamedValue<E> (&names)[N]) {
  for (const NamedValue<E>& entry : names) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

/// The candidate closest to `word` (edit distance, case-insensitive), when close enough to be a likely misspelling
/// of it: at most a third of its length, and at least 1. Ties go to the earlier candidate.
std::optional<std::string> NearestName(std::string_view word, const std::vector<std::string>& candidates);

/// Throws ConfigError: "<what>: '<text>' is not one of <choices, comma-separated> (did you mean '<nearest>'?)".
[[noreturn]] void ThrowNotOneOf(std::string_view what, std::string_view text, const std::vector<std::string>& choices);

/// The value named `text` in `names` (aliases included). Throws ConfigError naming `what` (the option, flag or
/// variable), the text, every primary name and the nearest one.
template <typename E, size_t N>
E ParseNamed(std::string_view what, std::string_view text, const NamedValue<E> (&names)[N]) {
  for (const NamedValue<E>& entry : names) {
    if (text == entry.name) return entry.value;
  }
  std::vector<std::string> choices;
  for (const NamedValue<E>& entry : names) {
    if (std::string_view(NameOf(entry.value, names)) == entry.name) choices.emplace_back(entry.name);
  }
  ThrowNotOneOf(what, text, choices);
}

}  // namespace lakerun
