// Sharded checkpoints of ShardedDataParallel: every rank writes its own shard, and any world size at any ZeRO level
// loads it back (sharded.h describes the semantics, checkpoint_index.h and shard_file.h the format).
//
//   ShardedCheckpointIo io = SaveShards(fs, dir, state);         // collective
//   LoadedShards loaded = ReadShards(fs, dir, state);            // collective; changes nothing
//   ... free whatever reads the chunks ...
//   ApplyShards(std::move(loaded), state);                       // local: the chunks and the optimizers' state
#pragma once

#include <lakerun/base/file_system.h>
#include <lakerun/dist/init.h>
#include <lakerun/dist/sharded.h>

#include "dist/optimizer_state.h"
#include "dist/sharded_optimizer.h"

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace lakerun::dist {

/// What a sharded checkpoint reads and writes of a ShardedDataParallel: its parameters (those that require grad, in
/// its order) with their names, this rank's pieces (whose values are views of the chunks) and its optimizers.
struct ShardedState {
  Context& ctx;
  ZeroStage stage;
  const std::vector<at::Tensor>& params;
  const std::vector<std::string>& names;
  std::vector<OwnedPiece>& pieces;
  std::vector<ShardedOptimizer>& optimizers;
};

/// Collective. Rank 0 creates `dir` and removes its index (the directory holds an incomplete checkpoint until the
/// new index exists); every rank writes its file from its pieces' values and state; after every rank's file is in
/// place (one gather of their entries), rank 0 writes the index and removes rank files of an earlier save with
/// another world size. A failure on any rank is thrown on every rank (agreed_outcome.h).
ShardedCheckpointIo SaveShards(FileSystem& fs, const std::string& dir, const ShardedState& state);

/// This rank's part of a checkpoint, read and checked, on the CPU.
struct LoadedShards {
  std::vector<at::Tensor> values;  ///< per piece
  /// Per optimizer, per member (ShardedOptimizer::members()): its state; nullopt when the checkpoint holds none.
  std::vector<std::vector<std::optional<StateParts>>> state;
  ShardedCheckpointIo io;
};

/// Collective. Every rank reads the index, checks it against the module and optimizers (names, shapes, dtypes,
/// optimizer kinds and the parameters each steps), then reads from the rank files, and only from those that hold
/// them, the elements of its own pieces and their optimizer state. Changes nothing: a failure on any rank is
/// thrown on every rank, and the model and optimizers are as before.
LoadedShards ReadShards(FileSystem& fs, const std::string& dir, const ShardedState& state);

/// Copies `loaded` into the pieces (so into the chunks) and the optimizers' state; a member without state in the
/// checkpoint (saved before the first step) has none afterwards. Nothing may read the chunks meanwhile.
void ApplyShards(LoadedShards loaded, ShardedState& state);

/// The index's path in `dir`.
std::string ShardedIndexPath(const std::string& dir);

}  // namespace lakerun::dist
