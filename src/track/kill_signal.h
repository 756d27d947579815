// KillSignalHandler: turns SIGINT/SIGTERM/SIGHUP/SIGPIPE into "flush and mark the run KILLED", then lets the signal
// do what it would have done.
//
// The async-signal-safe part is tiny: the handler writes the signal number to a self-pipe. A watcher thread, owned by
// this registry and joined when the last registration goes, reads it, runs every registered callback (newest first,
// so nested runs end before their parents), restores the default disposition and re-raises the signal, so the process
// ends exactly as it would have without lakerun (exit by signal, shells see 128+N).
//
// The same callbacks run, with signal number 0, from a std::terminate handler installed alongside (an exception
// nobody caught ends the process without unwinding, so no destructor would end the run); the previous terminate
// handler runs afterwards.
//
// A signal whose disposition was not SIG_DFL when the first run registered (a user handler, or SIG_IGN as under
// nohup) is left alone.
#pragma once

#include <cstdint>
#include <functional>

namespace lakerun::track {

class KillSignalHandler {
 public:
  /// signal_number: SIGINT, SIGTERM, SIGHUP, SIGPIPE, or 0 for std::terminate.
  using Callback = std::function<void(int signal_number)>;
  /// Installs the handlers and starts the watcher on the first registration. Returns a token for Unregister.
  static uint64_t Register(Callback callback);
  /// Removes a callback; the last one restores the previous handlers and joins the watcher.
  static void Unregister(uint64_t token);
};

}  // namespace lakerun::track
