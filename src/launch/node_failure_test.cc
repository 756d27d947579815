#include "launch/node_failure.h"

#include <gtest/gtest.h>

namespace lakerun::launch::internal {
namespace {

TEST(NodeFailureTest, ReadsBackWhatItWritesAndNamesNodeRankAndPid) {
  NodeFailure rank{1, "host2", 3, 812, "was killed by signal 9 (SIGKILL)\nwith a second line", 137};
  const std::optional<NodeFailure> back = NodeFailure::Decode(rank.Encode());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->Encode(), rank.Encode());
  EXPECT_EQ(back->cause, rank.cause);
  EXPECT_EQ(back->exit_code, 137);
  EXPECT_EQ(rank.Describe(), "node 1 (host2), rank 3 (pid 812) was killed by signal 9 (SIGKILL)\nwith a second line");
  NodeFailure agent{0, "host1", -1, 77, "is lost: no heartbeat for 15 s", 1};
  EXPECT_EQ(agent.Describe(), "node 0 (host1)'s agent (pid 77) is lost: no heartbeat for 15 s");
  EXPECT_EQ(NodeFailure::Decode(agent.Encode())->rank, -1);
}

TEST(NodeFailureTest, SomethingElseIsNotAFailure) {
  EXPECT_FALSE(NodeFailure::Decode("").has_value());
  EXPECT_FALSE(NodeFailure::Decode("a stranger's text").has_value());
  EXPECT_FALSE(NodeFailure::Decode("x\n1\n2\n3\nhost\ncause").has_value());
}

}  // namespace
}  // namespace lakerun::launch::internal
