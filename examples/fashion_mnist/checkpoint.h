// Per-epoch checkpoints of the example: model parameters, optimizer state and the loop position, in one
// torch::serialize archive per epoch: <dir>/checkpoint-epoch-<N>.pt.
//
// Writes are atomic (temp file + fsync + rename + fsync of the directory): a crash leaves the previous checkpoint
// or the new one, never a torn file. Only rank 0 calls SaveCheckpoint; every rank loads the same file on resume.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <optional>
#include <string>

namespace lakerun::examples {

struct CheckpointPosition {
  int64_t epoch = 0;        ///< epochs completed (1-based epoch number of the last finished epoch)
  int64_t global_step = 0;  ///< optimizer steps taken so far
};

/// Writes <dir>/checkpoint-epoch-<epoch>.pt (creating dir) and returns its path. Throws IoError naming the path.
std::string SaveCheckpoint(const std::string& dir, const CheckpointPosition& position, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer);

/// The checkpoint with the highest epoch in `dir`; std::nullopt when the directory is missing or holds none.
std::optional<std::string> FindLatestCheckpoint(const std::string& dir);

/// Restores model and optimizer from `path`. Throws CorruptDataError naming the path when it cannot be read.
CheckpointPosition LoadCheckpoint(const std::string& path, torch::nn::Module& model,
                                  torch::optim::Optimizer& optimizer);

}  // namespace lakerun::examples
