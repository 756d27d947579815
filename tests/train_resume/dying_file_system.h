// A crash in the middle of a checkpoint write, for the resume tests' program: a Callback that routes the Trainer's
// checkpoint I/O through a file system that SIGKILLs the process halfway through writing last.ckpt at one global step.
//
// It installs itself by setting TrainerState::fs in Setup() (non-checkpoint callbacks are set up before the
// checkpoint callbacks, which then write through it). Everything else passes through to LocalFileSystem().
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lakerun/base/file_system.h"
#include "lakerun/train/callback.h"

namespace lakerun::train_resume {

class DieWritingLast final : public train::Callback {
 public:
  /// Dies while writing last.ckpt when the trainer's global step is `step`.
  explicit DieWritingLast(int64_t step);
  ~DieWritingLast() override;
  std::string state_key() const override { return "DieWritingLast"; }
  void Setup(train::TrainerState& state) override;

 private:
  class Fs;
  std::unique_ptr<Fs> fs_;
};

}  // namespace lakerun::train_resume
