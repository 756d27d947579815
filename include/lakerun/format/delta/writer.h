// Writing rows into a Delta table: Parquet data files (zstd unless the table property
// delta.parquet.compression.codec says otherwise), Hive-style `col=value/` directories for partitioned tables,
// per-file statistics (numRecords, minValues, maxValues, nullCount), then one commit.
//
//   std::vector<parquet::Value> rows = ...;   // struct Values keyed by the table's (logical) column names
//   WriteOptions opts;
//   opts.max_rows_per_file = 100000;
//   CommitResult r = AppendRows(table, rows, opts);
//
// Under column mapping (name or id mode) data files use the physical names and carry the field ids; statistics and
// partition values are keyed by physical names, as the protocol asks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/snapshot.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/value.h"
#include "lakerun/format/parquet/writer.h"

namespace lakerun::delta {

struct WriteOptions {
  /// Row-group size, page size, dictionary... of the data files. The codec is the table's
  /// delta.parquet.compression.codec when set, else `codec`.
  parquet::WriterOptions parquet;
  parquet::Codec codec = parquet::Codec::kZstd;
  /// Split each partition's rows into files of at most this many rows (0: one file per partition).
  int64_t max_rows_per_file = 0;
  /// Element shapes of fixed-size list columns (top-level column -> shape), recorded in the Parquet key-value
  /// metadata (parquet::ShapeMetadataKey).
  std::map<std::string, std::vector<int64_t>> tensor_shapes;
  CommitOptions commit;
};

/// The Parquet schema of the table's data files: the non-partition columns, physical names and field ids under
/// column mapping. Throws NotImplemented for types lakerun cannot write (decimal with precision > 18, variant).
parquet::Schema DataFileSchema(const Snapshot& snapshot);

/// Writes `rows` as data files of `snapshot`'s table and returns their add actions (nothing is committed). A crash
/// here leaves only unreferenced files, which readers never see.
std::vector<AddFile> WriteDataFiles(const DeltaTable& table, const Snapshot& snapshot,
                                    const std::vector<parquet::Value>& rows, const WriteOptions& options = {});

/// WriteDataFiles on the latest snapshot, then Commit of the adds (operation "WRITE", mode Append).
CommitResult AppendRows(const DeltaTable& table, const std::vector<parquet::Value>& rows,
                        const WriteOptions& options = {});

}  // namespace lakerun::delta
