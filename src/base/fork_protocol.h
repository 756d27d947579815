// The fork-start protocol between the launcher (lakerun::launch) and the template process (ForkPoint(), in base so
// that lakerun::dist::Init() can be the fork point without depending on the launcher).
//
// Under `lakerun launch --start-method fork` the launcher starts PROGRAM once, as a *template*, with one end of a
// SOCK_SEQPACKET socket pair on the descriptor named by LAKERUN_FORK_FD. When the template reaches the fork point
// (ForkPoint(), which lakerun::dist::Init() and lakerun::launch::MaybeRunRank() call), it reads the launcher's
// requests and forks one process per rank; the template then exits, so the ranks are re-parented to the launcher
// (a child subreaper) and supervised exactly like exec-started ranks. Messages, one per send:
//
//   launcher -> template   'Q' rank:int32 entries...   fork a rank; entries are "+KEY=VALUE\0" (set) and "-KEY\0"
//                                                     (unset), the rank's environment as a change of the template's;
//                                                     SCM_RIGHTS carries the rank's stdout and stderr write ends
//                          'Z'                         no more requests: the template exits 0
//   template -> launcher   'F' rank:int32 pid:int32    forked that rank (sent by the template)
//                          'R' rank:int32              the rank is the launcher's child now, in its own process
//                                                     group, with PR_SET_PDEATHSIG set (sent by the rank itself)
//                          'X' text                    the template cannot fork (e.g. threads are running); it exits
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace lakerun::fork_start {

/// Names of the variables a template finds in its environment.
inline constexpr char kForkFdEnv[] = "LAKERUN_FORK_FD";
inline constexpr char kForkLauncherPidEnv[] = "LAKERUN_FORK_LAUNCHER_PID";
/// The descriptor number the launcher gives the template's end of the socket.
inline constexpr int kForkFd = 3;
/// Largest message either side sends (requests carry only the variables that differ from the template's).
inline constexpr size_t kMaxForkMessage = 256 * 1024;

struct ForkRequest {
  int rank = 0;
  std::vector<std::string> set;    ///< "KEY=VALUE"
  std::vector<std::string> unset;  ///< "KEY"
};

/// The change that turns environment `from` into `to` (both "KEY=VALUE" lists), for `rank`.
ForkRequest EnvironmentChange(const std::vector<std::string>& from, const std::vector<std::string>& to, int rank);

std::string EncodeRequest(const ForkRequest& request);
/// False when `message` is not a well-formed 'Q' message.
bool DecodeRequest(std::string_view message, ForkRequest* request);

std::string EncodeRankPid(char type, int rank, pid_t pid);  ///< 'F' (with pid) or 'R' (pid ignored)
/// Parses an 'F' or 'R' message; false when malformed.
bool DecodeRankPid(std::string_view message, char* type, int* rank, pid_t* pid);

/// Sends one message with up to two descriptors attached (`flags` as for sendmsg, e.g. MSG_DONTWAIT).
/// Returns 0 or an errno value.
int SendMessage(int socket, std::string_view bytes, const int* fds = nullptr, int fd_count = 0, int flags = 0);

/// Receives one message into `bytes` and any attached descriptors into `fds` (made close-on-exec).
/// Returns 1 for a message, 0 at end of stream, or -errno (-EMSGSIZE for a message over kMaxForkMessage).
int ReceiveMessage(int socket, std::string* bytes, std::vector<int>* fds);

}  // namespace lakerun::fork_start
