// A callback that measures training throughput: images per second over all ranks, per epoch, from the end of the
// epoch's first optimizer step to the end of its last one (so the first step's warm-up, validation and checkpoints
// are left out). Rank 0 prints it and sends it to the run as `images_per_sec`.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "lakerun/track/run.h"
#include "lakerun/train/callback.h"

namespace lakerun::examples::flowers {

class ThroughputMonitor : public train::Callback {
 public:
  /// `images_per_step`: the global batch (batch size x world size). `run` may be null or inert; `out` may be null.
  ThroughputMonitor(int64_t images_per_step, track::Run* run, std::ostream* out)
      : images_per_step_(images_per_step), run_(run), out_(out) {}

  std::string state_key() const override { return "ThroughputMonitor"; }
  void OnTrainBatchEnd(train::TrainerState& state) override;
  void OnTrainEpochEnd(train::TrainerState& state) override;

  /// Images per second of the last completed epoch and of all epochs so far (0 before any).
  double last_epoch_rate() const { return last_rate_; }
  double overall_rate() const { return seconds_ > 0 ? static_cast<double>(images_) / seconds_ : 0.0; }

 private:
  using Clock = std::chrono::steady_clock;
  int64_t images_per_step_;
  track::Run* run_;
  std::ostream* out_;
  std::optional<Clock::time_point> first_;  // end of the epoch's first step
  Clock::time_point last_;
  int64_t first_step_ = 0;
  int64_t last_step_ = 0;
  double last_rate_ = 0;
  int64_t images_ = 0;
  double seconds_ = 0;
};

}  // namespace lakerun::examples::flowers
