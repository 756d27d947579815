// Writing checkpoints: the table state at one version as Parquet, one action per row, in the protocol's nested
// checkpoint schema (protocol, metaData, txn, add, remove, domainMetadata as nullable struct columns; add's
// partitionValues a MAP<string,string>, stats a JSON string), then `_delta_log/_last_checkpoint`.
//
//   WriteCheckpoint(table, table.Latest());                   // classic: <v>.checkpoint.parquet
//   CheckpointOptions multi;
//   multi.parts = 3;
//   WriteCheckpoint(table, snap, multi);                       // multi-part (V1 only; refused with v2Checkpoint)
//   CheckpointOptions v2;
//   v2.v2_with_sidecar = true;
//   WriteCheckpoint(table, snap, v2);                          // <v>.checkpoint.<uuid>.json + _sidecars/<uuid>.parquet
//
// Every file is written to a temporary name and renamed into place, so a reader never sees a torn checkpoint; a
// multi-part set becomes usable only when its last part lands.
#pragma once

#include <cstdint>
#include <optional>

#include "lakerun/format/delta/snapshot.h"
#include "lakerun/format/delta/table.h"

namespace lakerun::delta {

struct CheckpointOptions {
  /// Number of parts (> 1: a multi-part checkpoint).
  int parts = 1;
  /// Write a UUID-named v2 checkpoint (JSON) whose file actions live in one Parquet sidecar. Needs the table
  /// feature v2Checkpoint.
  bool v2_with_sidecar = false;
};

/// The content of `_delta_log/_last_checkpoint`.
struct LastCheckpoint {
  int64_t version = 0;
  int64_t size = 0;  ///< actions in the checkpoint
  std::optional<int64_t> parts;
  std::optional<int64_t> size_in_bytes;
  std::optional<int64_t> num_of_add_files;
};

/// Writes a checkpoint of `snapshot` and updates `_last_checkpoint` (unless it already points at a newer version).
LastCheckpoint WriteCheckpoint(const DeltaTable& table, const Snapshot& snapshot, const CheckpointOptions& options = {});
/// Reads `_last_checkpoint`; nullopt when absent. Throws CorruptDataError when it is not valid JSON.
std::optional<LastCheckpoint> ReadLastCheckpoint(const DeltaTable& table);

}  // namespace lakerun::delta
