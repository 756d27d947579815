// Rank 0's progress output (Lightning's TQDMProgressBar, or plain lines where no terminal reads it).
//
// Bar (a terminal, or ProgressStyle::kBar): one line per epoch rewritten with '\r' after every batch,
//   "Epoch 1/4:  60%|######    | 3/5 [12.5 it/s] loss=0.3481"  (the count is "3/?" when the length is unknown)
// and ended with '\n' at the epoch's end (with the epoch's prog_bar metrics).
// Lines (otherwise): "train epoch 1/4 step 20 loss=0.3481" every progress_every_n_steps optimizer steps and
// "end of epoch 1/4 step 25 ..." at each epoch end.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "lakerun/train/callback.h"

namespace lakerun::train {

struct TrainerOptions;

/// The variable `lakerun launch` sets to 1 in every rank's environment when its own console (stderr) is a terminal:
/// a rank's stderr is then a pipe, but what it writes ends up on that terminal.
inline constexpr const char* kConsoleIsTerminalVariable = "LAKERUN_CONSOLE_IS_TERMINAL";

/// Whether ProgressStyle::kAuto draws the bar: only on stderr (a caller's stream is never taken for a terminal),
/// when stderr is a terminal or the launcher's console is one (`console_variable`: the variable's value, or nullptr).
bool AutoProgressBar(bool caller_stream, bool stderr_is_terminal, const char* console_variable);

class Progress {
 public:
  /// `rank` != 0 or progress_every_n_steps == 0: silent.
  Progress(const TrainerOptions& options, int rank);

  bool bar() const { return bar_; }
  /// At the start of a training epoch of `total` batches (nullopt: unknown); `first_batch` > 0 when resumed.
  void OnEpochStart(int64_t epoch, int64_t max_epochs, std::optional<int64_t> total, int64_t first_batch);
  /// After training batch `batches_done` (1-based) of the epoch.
  void OnBatchEnd(const TrainerState& state, int64_t max_epochs, int64_t batches_done, bool stepped,
                  const MetricMap& prog_bar);
  /// At the end of the training epoch (after validation and the epoch-end hooks).
  void OnEpochEnd(const TrainerState& state, int64_t max_epochs, const MetricMap& prog_bar);

 private:
  static std::string Metrics(const MetricMap& prog_bar);
  std::string EpochLabel(int64_t epoch, int64_t max_epochs) const;
  void Write(const std::string& text);

  std::ostream* out_;
  bool silent_;
  bool bar_;
  int64_t every_n_steps_;
  std::optional<int64_t> total_;
  int64_t first_batch_ = 0;
  int64_t last_batches_ = 0;
  size_t last_width_ = 0;
  std::chrono::steady_clock::time_point epoch_start_;
};

}  // namespace lakerun::train
