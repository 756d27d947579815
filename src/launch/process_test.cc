#include "launch/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include <gtest/gtest.h>

namespace lakerun::launch::internal {
namespace {

// The orphan guard must learn a rank's process group before the rank's program runs: a group registered only after
// the start returns could already hold children that a launcher killed in between would leave behind.
TEST(SpawnInOwnGroupTest, ChildRegistersItsGroupBeforeExec) {
  int guard[2], out[2];
  ASSERT_EQ(::pipe2(guard, O_CLOEXEC | O_NONBLOCK), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  SpawnRequest request;
  request.path = "/bin/sleep";
  request.argv = {"sleep", "30"};
  request.stdout_fd = out[1];
  request.stderr_fd = out[1];
  request.register_fd = guard[1];
  const Child child = SpawnInOwnGroup(request);
  ASSERT_GT(child.pid, 0);
  // vfork returns only once the child has exec'd, so its registration is already in the pipe; nothing is waited for.
  int32_t group = 0;
  const ssize_t n = ::read(guard[0], &group, sizeof(group));
  const pid_t child_group = ::getpgid(child.pid);
  ::killpg(child.pid, SIGKILL);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  EXPECT_EQ(n, static_cast<ssize_t>(sizeof(group)));
  EXPECT_EQ(group, child.pid);
  EXPECT_EQ(child_group, child.pid);  // the registered id is the group the child leads
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  for (int fd : {guard[0], guard[1], out[0], out[1]}) ::close(fd);
  if (child.pidfd >= 0) ::close(child.pidfd);
}

}  // namespace
}  // namespace lakerun::launch::internal
