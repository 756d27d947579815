// The index of a sharded checkpoint (index.json): what was saved, and which bytes of which rank file hold it.
//
// A sharded checkpoint is a directory of one file per rank (shard_file.h) and this index, which rank 0 writes last.
// The index alone describes every byte: a loader reads it, then only the byte ranges of the rank files it needs.
//
//   {"format": "lakerun sharded checkpoint", "version": 1, "save_id": "5f0c...", "world_size": 2,
//    "stage": "gradients", "block_bytes": 1048576,
//    "parameters": [{"name": "fc1.weight", "shape": [10, 6], "dtype": "Float", "numel": 60}, ...],
//    "optimizers": [{"kind": "Adam", "parameters": [{"parameter": 0, "fields": ["exp_avg", "exp_avg_sq"]}, ...]}],
//    "files": [{"rank": 0, "name": "shard-00000-of-00002.bin", "bytes": 2504, "checksums_at": 2500,
//               "checksums_crc32": 2914451017,
//               "ranges": [{"parameter": 0, "offset": 0, "numel": 60, "at": 64,
//                           "state": [{"optimizer": 0, "step": 3, "at": {"exp_avg": 304, "exp_avg_sq": 544}}]},
//                          ...]}, ...]}
//
// - parameters: the module's parameters that require grad, in ShardedDataParallel's order; "dtype" is
//   c10::toString of the scalar type. Ranges and optimizers name them by index in this list.
// - optimizers: in the order given to ShardedDataParallel; each lists the parameters it steps and the state fields
//   their param group fills (StateTensorNames).
// - files: per rank, its file's name and size, where its table of block checksums starts and the table's CRC-32
//   (shard_file.h: the table holds the CRC-32 of each block_bytes block of elements); its ranges are
//   the rank's pieces: elements [offset, offset + numel) of the flattened parameter, stored at byte "at", and for
//   each optimizer that holds state for them, the step count (kinds that keep one) and where each field's elements
//   are. Values and state are raw elements in the parameter's dtype, in the host's (little-endian) byte order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lakerun::dist {

inline constexpr int kShardedCheckpointVersion = 1;
inline constexpr const char* kShardedCheckpointFormat = "lakerun sharded checkpoint";

struct SavedParameter {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;
  int64_t numel = 0;
};

struct SavedOptimizer {
  std::string kind;  ///< ToString(OptimizerKind)
  /// The parameters it steps (indices into ShardedIndex::parameters) with their state fields, in parameter order.
  std::vector<std::pair<std::size_t, std::vector<std::string>>> fields;

  /// The fields of parameter `p`; nullptr when this optimizer does not step it.
  const std::vector<std::string>* FieldsOf(std::size_t p) const;
};

/// One optimizer's state for one saved range.
struct SavedState {
  std::size_t optimizer = 0;
  std::optional<int64_t> step;
  std::vector<std::pair<std::string, uint64_t>> at;  ///< field name, byte offset of its numel elements
};

struct SavedRange {
  std::size_t parameter = 0;
  int64_t offset = 0;  ///< first element within the flattened parameter
  int64_t numel = 0;
  uint64_t at = 0;     ///< byte offset of the values in the file
  std::vector<SavedState> state;
};

struct SavedFile {
  int rank = 0;
  std::string name;  ///< relative to the checkpoint directory
  uint64_t bytes = 0;
  uint64_t checksums_at = 0;     ///< where its checksum table starts (shard_file.h)
  uint32_t checksums_crc32 = 0;  ///< the CRC-32 of that table
  std::vector<SavedRange> ranges;
};

struct ShardedIndex {
  int version = kShardedCheckpointVersion;
  std::string save_id;
  int world_size = 0;
  std::string stage;
  uint64_t block_bytes = 0;
  std::vector<SavedParameter> parameters;
  std::vector<SavedOptimizer> optimizers;
  std::vector<SavedFile> files;  ///< by rank
};

std::string IndexToJson(const ShardedIndex& index);
/// Parses and checks an index: every field present with its type, indices in range, one file per rank, ranges of
/// each parameter covering its elements exactly once. Throws CorruptDataError naming `path` and what is wrong (for
/// a gap, the parameter and the elements no file holds).
ShardedIndex IndexFromJson(std::string_view text, const std::string& path);

/// One rank's file entry, as ranks send it to rank 0 while saving.
std::string FileToJson(const SavedFile& file);
SavedFile FileFromJson(std::string_view text, const std::string& what);

}  // namespace lakerun::dist
