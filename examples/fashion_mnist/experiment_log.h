// Logs the example's run through lakerun::track, as the PyTorch/MLflow notebooks do: params (batch size, epochs,
// lr, world size...), the training loss every --log-interval steps, test loss and accuracy after each evaluation,
// checkpoints as artifacts, and the final model.
//
// Only rank 0 logs (lakerun::track gives other ranks a no-op tracker). The store is --tracking-uri, else
// MLFLOW_TRACKING_URI, else ./mlruns. Log calls only enqueue: the training thread never waits on I/O.
#pragma once

#include <memory>
#include <string>

#include "options.h"
#include "train_loop.h"

namespace torch::nn {
class Module;
}

namespace lakerun::examples {

class ExperimentLog : public TrainObserver {
 public:
  /// Starts a run and logs the params. With options.tracking false, logs nothing.
  ExperimentLog(const ExampleOptions& options, int world_size, double effective_lr);
  ~ExperimentLog() override;

  void OnTrainLoss(int64_t step, int64_t epoch, double loss) override;
  void OnEvaluation(int64_t step, int64_t epoch, const EvalResult& eval) override;
  void OnCheckpoint(int64_t epoch, const std::string& path) override;

  /// Logs the trained model (unless --no-log-model) and ends the run FINISHED; returns where the run is stored.
  std::string Finish(const torch::nn::Module& model);
  bool active() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace lakerun::examples
