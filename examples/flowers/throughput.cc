#include "throughput.h"

#include <ostream>

namespace lakerun::examples::flowers {

void ThroughputMonitor::OnTrainBatchEnd(train::TrainerState& state) {
  const Clock::time_point now = Clock::now();
  if (!first_) {
    first_ = now;
    first_step_ = state.global_step;
  }
  last_ = now;
  last_step_ = state.global_step;
}

void ThroughputMonitor::OnTrainEpochEnd(train::TrainerState& state) {
  if (first_ && last_step_ > first_step_) {
    const double seconds = std::chrono::duration<double>(last_ - *first_).count();
    const int64_t images = (last_step_ - first_step_) * images_per_step_;
    last_rate_ = seconds > 0 ? static_cast<double>(images) / seconds : 0.0;
    images_ += images;
    seconds_ += seconds;
    if (state.Sync().rank() == 0) {
      if (out_ != nullptr) {
        *out_ << "[flowers] epoch " << state.current_epoch << ": " << static_cast<int64_t>(last_rate_)
              << " images/s over " << state.Sync().world_size() << " rank(s)" << std::endl;
      }
      if (run_ != nullptr) run_->LogMetric("images_per_sec", last_rate_, state.global_step);
    }
  }
  first_.reset();
}

}  // namespace lakerun::examples::flowers
