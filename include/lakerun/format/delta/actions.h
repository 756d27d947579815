// The actions of the Delta transaction log (PROTOCOL.md, "Actions"), as plain structs.
//
// A commit file (`_delta_log/<20-digit version>.json`) holds one JSON action per line; a checkpoint holds one action
// per Parquet row. Both are read into an ActionSet. Unknown actions and fields are ignored, as the protocol asks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/delta/schema.h"

namespace lakerun::delta {

struct Protocol {
  int min_reader_version = 1;
  int min_writer_version = 2;
  /// Present only with reader version 3 / writer version 7.
  std::optional<std::vector<std::string>> reader_features;
  std::optional<std::vector<std::string>> writer_features;

  bool HasReaderFeature(const std::string& name) const;
  bool HasWriterFeature(const std::string& name) const;
};

struct Format {
  std::string provider = "parquet";
  std::map<std::string, std::string> options;
};

struct Metadata {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  Format format;
  std::string schema_string;
  /// schema_string parsed; never null in a loaded snapshot.
  DataTypePtr schema;
  std::vector<std::string> partition_columns;
  std::optional<int64_t> created_time;
  std::map<std::string, std::string> configuration;
};

/// Where a deletion vector lives and how big it is (PROTOCOL.md, "Deletion Vector Descriptor Schema").
struct DeletionVectorDescriptor {
  char storage_type = 'u';  ///< 'u' (relative, UUID), 'i' (inline Z85), 'p' (absolute path)
  std::string path_or_inline_dv;
  std::optional<int32_t> offset;
  int32_t size_in_bytes = 0;
  int64_t cardinality = 0;

  /// `<storageType><pathOrInlineDv>[@<offset>]`: the DV part of a logical file's key.
  std::string UniqueId() const;
};

/// Partition values as the log stores them: strings, with null for a JSON null. An empty string also means null.
using PartitionValues = std::map<std::string, std::optional<std::string>>;

struct AddFile {
  std::string path;  ///< as in the log: a URI-encoded path, relative to the table root or absolute
  PartitionValues partition_values;
  int64_t size = 0;
  int64_t modification_time = 0;
  bool data_change = true;
  std::optional<std::string> stats;  ///< JSON text (numRecords, minValues, maxValues, nullCount)
  std::map<std::string, std::string> tags;
  std::optional<DeletionVectorDescriptor> deletion_vector;
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
};

struct RemoveFile {
  std::string path;
  std::optional<int64_t> deletion_timestamp;
  bool data_change = true;
  std::optional<bool> extended_file_metadata;
  std::optional<PartitionValues> partition_values;
  std::optional<int64_t> size;
  std::optional<DeletionVectorDescriptor> deletion_vector;
};

struct Txn {
  std::string app_id;
  int64_t version = 0;
  std::optional<int64_t> last_updated;
};

struct DomainMetadata {
  std::string domain;
  std::string configuration;
  bool removed = false;
};

/// Commit provenance. Implementations may store any JSON here; the whole object is kept in `json`.
struct CommitInfo {
  std::optional<int64_t> timestamp;
  std::optional<int64_t> in_commit_timestamp;
  std::optional<std::string> operation;
  std::string json;  ///< the full commitInfo object
};

struct Sidecar {
  std::string path;
  int64_t size_in_bytes = 0;
  int64_t modification_time = 0;
};

/// The actions of one commit file or one checkpoint, grouped by kind (the protocol gives no meaning to their order
/// except that commitInfo comes first under in-commit timestamps).
struct ActionSet {
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  std::vector<AddFile> adds;
  std::vector<RemoveFile> removes;
  std::vector<Txn> txns;
  std::vector<DomainMetadata> domains;
  std::optional<CommitInfo> commit_info;
  std::optional<int64_t> checkpoint_metadata_version;  ///< v2 checkpoints only
  std::vector<Sidecar> sidecars;                        ///< v2 checkpoints only
};

/// The remove action that deletes the logical file `add` (same path and deletion vector), with
/// extendedFileMetadata: partition values and size carried over.
RemoveFile RemoveOf(const AddFile& add, int64_t deletion_timestamp_ms);

/// The canonical textual form of a UUID held in 16 bytes: "d2c639aa-8816-431a-aaf6-d3fe2512ff61".
std::string UuidToString(const std::string& bytes16);
/// The version-4 UUID made of 128 random bits (`high`, `low`; the version and variant bits are set), in canonical
/// form.
std::string UuidFromRandomBits(uint64_t high, uint64_t low);
/// A random version-4 UUID in canonical form.
std::string RandomUuid();

}  // namespace lakerun::delta
