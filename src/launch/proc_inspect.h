// What the launcher can see of a rank from outside: its scheduler state and CPU time, and its stacks (for the hang
// report, launch/hang_judge.h). Linux /proc; gdb for the user-space stacks when it is installed.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "launch/hang_judge.h"

namespace lakerun::launch::internal {

struct ProcessSample {
  ProcessState state = ProcessState::kUnknown;
  /// User plus system CPU time in clock ticks (sysconf(_SC_CLK_TCK)); -1 when unknown.
  int64_t cpu_ticks = -1;
  /// Bytes it read and wrote through system calls, files and sockets alike (/proc/PID/io rchar + wchar); -1 when
  /// unknown.
  int64_t io_bytes = -1;
};

/// /proc/PID/stat's state and CPU time, /proc/PID/io's bytes; kUnknown and -1 when the process is gone or /proc is
/// unreadable.
ProcessSample SampleProcess(int pid);

/// The process's stacks for a report, each line ready to print: the kernel stack of every thread from
/// /proc/PID/task/TID/stack (readable by root), then every thread's backtrace from `gdb -p PID -batch` when gdb is
/// installed, bounded by `bound` (gdb is killed after it; the process is left as it was). Lines that say why a
/// part is missing replace it; never throws.
std::vector<std::string> CaptureStacks(int pid, std::chrono::milliseconds bound, size_t max_lines = 80);

}  // namespace lakerun::launch::internal
