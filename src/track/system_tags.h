// The context MLflow records with a run: user, source program, git commit.
#pragma once

#include <optional>
#include <string>

namespace lakerun::track {

/// The user name, as Python's getpass.getuser(): LOGNAME, USER, LNAME, USERNAME, else the passwd entry; "unknown".
std::string CurrentUser();
/// The running program's absolute path (/proc/self/exe), the analogue of MLflow's sys.argv[0].
std::string CurrentSourceName();
/// The commit checked out in the git work tree containing `dir` (searching upwards), read from .git/HEAD, the ref
/// files and packed-refs, without running git. std::nullopt outside a git tree or when HEAD cannot be resolved.
std::optional<std::string> GitCommitOf(const std::string& dir);

}  // namespace lakerun::track
