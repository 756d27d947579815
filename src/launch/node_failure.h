// What one node agent tells the others when its part of the job fails (launch/node_group.h), and how every node
// reports it.
#pragma once

#include <optional>
#include <string>

namespace lakerun::launch::internal {

struct NodeFailure {
  /// The node whose rank failed, or whose agent was lost.
  int node = -1;
  /// That node's host name, as its agent registered it.
  std::string host;
  /// The global rank that failed; -1 when the failure is the agent's own (lost, interrupted, timed out).
  int rank = -1;
  /// The failed rank's pid, or the agent's.
  int pid = 0;
  /// What happened, as a verb phrase: "was killed by signal 9 (SIGKILL), ...", "stopped heartbeating 15 s ago".
  std::string cause;
  /// The exit code every node's launcher returns for it.
  int exit_code = 1;
  /// The job hung (launch/hang_judge.h): `rank` is the one that held the others up, or the one held up.
  bool hang = false;

  /// "node 1 (host2), rank 3 (pid 812) was killed by signal 9 (SIGKILL), ..." or "node 1 (host2)'s agent (pid 77)
  /// stopped heartbeating ...".
  std::string Describe() const;
  /// One store value; Decode reads it back, nullopt when it is not one.
  std::string Encode() const;
  static std::optional<NodeFailure> Decode(const std::string& value);
};

}  // namespace lakerun::launch::internal
