// Slurm hostlist expressions ("node[01-03,7],login1", "rack[1-2]-n[1-2]") expanded into host names.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace lakerun::dist {

/// Expands a Slurm hostlist in Slurm's order: comma-separated items; each bracket group holds comma-separated
/// numbers or lo-hi ranges, whose zero padding is kept ("n[08-10]" -> n08 n09 n10); several groups in one item
/// multiply out left to right. Throws InvalidArgument naming the expression and position for unbalanced brackets,
/// bad ranges (hi < lo, non-digits), or more than `max_hosts` hosts.
std::vector<std::string> ExpandHostlist(const std::string& expression, std::size_t max_hosts = 1 << 20);

/// The first host of a hostlist, without expanding the rest.
std::string FirstHost(const std::string& expression);

}  // namespace lakerun::dist
