#include "train/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "lakerun/train/trainer.h"

namespace lakerun::train {

bool AutoProgressBar(bool caller_stream, bool stderr_is_terminal, const char* console_variable) {
  if (caller_stream) return false;
  return stderr_is_terminal || (console_variable != nullptr && std::string(console_variable) == "1");
}

Progress::Progress(const TrainerOptions& options, int rank)
    : out_(options.progress_stream != nullptr ? options.progress_stream : &std::cerr),
      silent_(rank != 0 || options.progress_every_n_steps <= 0),
      every_n_steps_(options.progress_every_n_steps) {
  switch (options.progress_style) {
    case ProgressStyle::kBar:
      bar_ = true;
      break;
    case ProgressStyle::kLines:
      bar_ = false;
      break;
    case ProgressStyle::kAuto:
      bar_ = AutoProgressBar(options.progress_stream != nullptr, isatty(STDERR_FILENO) == 1,
                             std::getenv(kConsoleIsTerminalVariable));
      break;
  }
}

std::string Progress::Metrics(const MetricMap& prog_bar) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s << std::setprecision(4);
  for (const auto& [k, v] : prog_bar) s << " " << k << "=" << v;
  return s.str();
}

std::string Progress::EpochLabel(int64_t epoch, int64_t max_epochs) const {
  std::string s = "epoch " + std::to_string(epoch);
  if (max_epochs >= 0) s += "/" + std::to_string(max_epochs);
  return s;
}

void Progress::Write(const std::string& text) { *out_ << text << std::flush; }

void Progress::OnEpochStart(int64_t epoch, int64_t max_epochs, std::optional<int64_t> total, int64_t first_batch) {
  total_ = total;
  first_batch_ = first_batch;
  last_batches_ = first_batch;
  last_width_ = 0;
  epoch_start_ = std::chrono::steady_clock::now();
}

void Progress::OnBatchEnd(const TrainerState& state, int64_t max_epochs, int64_t batches_done, bool stepped,
                          const MetricMap& prog_bar) {
  if (silent_) return;
  last_batches_ = batches_done;
  if (!bar_) {
    if (stepped && state.global_step % every_n_steps_ == 0) {
      Write("train " + EpochLabel(state.current_epoch, max_epochs) + " step " + std::to_string(state.global_step) +
            Metrics(prog_bar) + "\n");
    }
    return;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start_).count();
  const double rate = seconds > 0 ? static_cast<double>(batches_done - first_batch_) / seconds : 0.0;
  std::ostringstream line;
  line << "\rEpoch " << state.current_epoch;
  if (max_epochs >= 0) line << "/" << max_epochs;
  line << ": ";
  if (total_.has_value() && *total_ > 0) {
    constexpr int kWidth = 10;
    const int64_t pct = batches_done * 100 / *total_;
    const int64_t filled = batches_done * kWidth / *total_;
    line << std::setw(3) << pct << "%|" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "| "
         << batches_done << "/" << *total_;
  } else {
    line << batches_done << "/?";
  }
  line.setf(std::ios::fixed);
  line << " [" << std::setprecision(2) << rate << " it/s]" << Metrics(prog_bar);
  std::string text = line.str();
  const size_t width = text.size();
  if (width < last_width_) text += std::string(last_width_ - width, ' ');  // erase the longer previous line
  last_width_ = width;
  Write(text);
}

void Progress::OnEpochEnd(const TrainerState& state, int64_t max_epochs, const MetricMap& prog_bar) {
  if (silent_) return;
  if (bar_) {
    // The final state of the bar, with the epoch's metrics, stays on screen.
    OnBatchEnd(state, max_epochs, last_batches_, false, prog_bar);
    Write("\n");
    return;
  }
  Write("end of " + EpochLabel(state.current_epoch, max_epochs) + " step " + std::to_string(state.global_step) +
        Metrics(prog_bar) + "\n");
}

}  // namespace lakerun::train
