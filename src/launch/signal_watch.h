// Turns SIGINT/SIGTERM sent to this process into readable bytes on a pipe (private to lakerun::launch).
//
// While at least one SignalWatch is alive, SIGINT and SIGTERM handlers write the signal number to every live
// watch's pipe (the self-pipe trick; async-signal-safe). A signal whose disposition was not SIG_DFL when the first
// watch started is left alone: an ignored SIGINT (a background job) stays ignored, a program's own handler stays,
// unless that first watch takes handlers (an interpreter's handler is then set aside; SIG_IGN still stays).
// The previous dispositions return when the last watch ends. Several launches in one process may watch at once.
#pragma once

namespace lakerun::launch::internal {

class SignalWatch {
 public:
  /// With enabled=false nothing is installed and fd() is -1. take_handlers: watch signals that have a handler too.
  explicit SignalWatch(bool enabled, bool take_handlers = false);
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  /// Readable when a signal arrived; -1 when disabled.
  int fd() const { return read_fd_; }
  /// Drains the pipe; returns the last signal received, or 0.
  int Take();

 private:
  int slot_ = -1;
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace lakerun::launch::internal
