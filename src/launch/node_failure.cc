#include "launch/node_failure.h"

#include <cstdlib>
#include <vector>

namespace lakerun::launch::internal {

std::string NodeFailure::Describe() const {
  std::string text = "node " + std::to_string(node) + " (" + host + ")";
  if (rank >= 0) return text + ", rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ") " + cause;
  return text + "'s agent (pid " + std::to_string(pid) + ") " + cause;
}

// Fields separated by '\n'; the cause is last, so it may hold anything but is read to the end.
std::string NodeFailure::Encode() const {
  return std::to_string(node) + "\n" + std::to_string(rank) + "\n" + std::to_string(pid) + "\n" +
         std::to_string(exit_code) + "\n" + (hang ? "1" : "0") + "\n" + host + "\n" + cause;
}

std::optional<NodeFailure> NodeFailure::Decode(const std::string& value) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (fields.size() < 6) {
    const size_t end = value.find('\n', start);
    if (end == std::string::npos) return std::nullopt;
    fields.push_back(value.substr(start, end - start));
    start = end + 1;
  }
  auto number = [](const std::string& text, int* out) {
    char* stop = nullptr;
    const long v = std::strtol(text.c_str(), &stop, 10);
    if (text.empty() || *stop != '\0') return false;
    *out = static_cast<int>(v);
    return true;
  };
  NodeFailure failure;
  if (!number(fields[0], &failure.node) || !number(fields[1], &failure.rank) || !number(fields[2], &failure.pid) ||
      !number(fields[3], &failure.exit_code) || (fields[4] != "0" && fields[4] != "1")) {
    return std::nullopt;
  }
  failure.hang = fields[4] == "1";
  failure.host = fields[5];
  failure.cause = value.substr(start);
  return failure;
}

}  // namespace lakerun::launch::internal
