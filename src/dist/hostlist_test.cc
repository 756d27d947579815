#include "dist/hostlist.h"

#include <lakerun/base/error.h>

#include "lakerun_testing/matchers.h"

namespace lakerun::dist {
namespace {

using Hosts = std::vector<std::string>;

TEST(HostlistTest, ExpandsRangesListsAndPadding) {
  EXPECT_EQ(ExpandHostlist("node[01-03,7]"), (Hosts{"node01", "node02", "node03", "node7"}));
  EXPECT_EQ(ExpandHostlist("n[08-10]"), (Hosts{"n08", "n09", "n10"}));
  EXPECT_EQ(ExpandHostlist("127.0.0.[1-2]"), (Hosts{"127.0.0.1", "127.0.0.2"}));
  EXPECT_EQ(ExpandHostlist("single"), (Hosts{"single"}));
  EXPECT_EQ(ExpandHostlist("a[1-2],login,b[5]"), (Hosts{"a1", "a2", "login", "b5"}));
}

TEST(HostlistTest, MultipliesSeveralBracketGroups) {
  EXPECT_EQ(ExpandHostlist("rack[1-2]-n[1-2]"), (Hosts{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}));
}

TEST(HostlistTest, FirstHost) {
  EXPECT_EQ(FirstHost("node[01-03,7]"), "node01");
  EXPECT_EQ(FirstHost("gpu-[12-20],cpu1"), "gpu-12");
  EXPECT_EQ(FirstHost("emuh1,emuh2"), "emuh1");
}

TEST(HostlistTest, RejectsMalformedExpressions) {
  EXPECT_THROW_WITH(ExpandHostlist("node[01-03"), InvalidArgument, "node[01-03", "unclosed");
  EXPECT_THROW_WITH(ExpandHostlist("node01]"), InvalidArgument, "unmatched ']'", "position 6");
  EXPECT_THROW_WITH(ExpandHostlist("node[3-1]"), InvalidArgument, "'3-1'", "backwards");
  EXPECT_THROW_WITH(ExpandHostlist("node[a-b]"), InvalidArgument, "'a-b'");
  EXPECT_THROW_WITH(ExpandHostlist("a,,b"), InvalidArgument, "empty host name");
  EXPECT_THROW_WITH(ExpandHostlist("n[1-100000]", 1000), InvalidArgument, "more than 1000 hosts");
}

}  // namespace
}  // namespace lakerun::dist
