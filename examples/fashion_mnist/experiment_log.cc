#include "experiment_log.h"

#include <torch/nn/module.h>

#include <cstdlib>

#include "lakerun/base/error.h"

#include "lakerun/track/run.h"
#include "lakerun/track/torch_model.h"
#include "lakerun/track/tracker.h"

namespace lakerun::examples {

struct ExperimentLog::State {
  track::Tracker tracker;
  track::Run run;
  bool log_model = true;
};

ExperimentLog::ExperimentLog(const ExampleOptions& options, int world_size, double effective_lr) {
  if (!options.tracking) return;
  track::TrackerOptions tracker_options;
  tracker_options.tracking_uri = options.tracking_uri;
  tracker_options.experiment_name = options.experiment;
  if (tracker_options.experiment_name.empty() && std::getenv("MLFLOW_EXPERIMENT_NAME") == nullptr) {
    tracker_options.experiment_name = "fashion-mnist";
  }
  track::Tracker tracker = track::Tracker::FromEnvironment(tracker_options);
  if (!tracker.enabled()) return;  // not rank 0
  track::StartRunOptions start;
  start.run_name = options.run_name;
  track::Run run = tracker.StartRun(start);
  run.LogParams({
      {"batch_size", std::to_string(options.batch_size)},
      {"epochs", std::to_string(options.epochs)},
      {"lr", StrCat(options.lr)},
      {"effective_lr", StrCat(effective_lr)},
      {"momentum", StrCat(options.momentum)},
      {"world_size", std::to_string(world_size)},
      {"seed", std::to_string(options.seed)},
      {"max_steps", std::to_string(options.max_steps)},
  });
  state_ = std::make_unique<State>(State{std::move(tracker), std::move(run), options.log_model});
}

ExperimentLog::~ExperimentLog() = default;

bool ExperimentLog::active() const { return state_ != nullptr; }

void ExperimentLog::OnTrainLoss(int64_t step, int64_t epoch, double loss) {
  if (state_) state_->run.LogMetric("train_loss", loss, step);
}

void ExperimentLog::OnEvaluation(int64_t step, int64_t epoch, const EvalResult& eval) {
  if (!state_) return;
  state_->run.LogMetric("test_loss", eval.average_loss, step);
  state_->run.LogMetric("test_accuracy", eval.accuracy(), step);
  state_->run.LogMetric("epoch", static_cast<double>(epoch), step);
}

void ExperimentLog::OnCheckpoint(int64_t epoch, const std::string& path) {
  // The checkpoint file stays in place (it is only replaced by later epochs' files), so it can be copied in the
  // background.
  if (state_) state_->run.LogArtifact(path, "checkpoints");
}

std::string ExperimentLog::Finish(const torch::nn::Module& model) {
  if (!state_) return "";
  track::Run& run = state_->run;
  if (!run.active()) return "";
  const std::string where = StrCat(state_->tracker.store().uri(), ", experiment ", run.experiment_id(), ", run ",
                                   run.run_id(), " (", run.run_name(), ")");
  if (state_->log_model) track::LogModel(state_->tracker, run, model);  // returns once the model is stored
  run.End(track::RunStatus::kFinished);
  return where;
}

}  // namespace lakerun::examples
