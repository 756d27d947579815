// Plain-text tables for the `lakerun runs` reports (private to lakerun::track).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lakerun::track::internal {

/// Display width of a UTF-8 string (one cell per code point; the sparkline glyphs are single-width).
size_t Width(const std::string& s);
/// `s` cut to `max` cells, the last one an ellipsis, when it is wider.
std::string Truncate(const std::string& s, size_t max);
/// Rows as columns separated by two spaces, each as wide as its widest cell (the first row is the header).
std::string RenderTable(const std::vector<std::vector<std::string>>& rows);

}  // namespace lakerun::track::internal
