// A simulated large Delta table, log only: what opening a snapshot and planning a scan read, without data files.
//
//   ScaleTableOptions options;                      // 300,000 files, 100 partitions, stats on every add
//   ScaleTableSummary s = WriteScaleTable("/tmp/t", options);
//
// The log holds a multi-part V1 checkpoint at `checkpoint_version` (written by delta::WriteCheckpoint from an
// in-memory snapshot, as if the log before it had been cleaned up) and `commits` JSON commits after it, each adding
// and removing a few files. Data file k lives in partition part=k % partitions and holds ids
// [k * rows_per_file, (k + 1) * rows_per_file), so an id range selects a known share of the files.
#pragma once

#include <cstdint>
#include <string>

namespace lakerun::bench {

struct ScaleTableOptions {
  int64_t files = 300000;           ///< live files in the checkpoint
  int partitions = 100;             ///< values of the partition column `part`
  int checkpoint_parts = 10;        ///< parts of the multi-part checkpoint
  int64_t checkpoint_version = 99;  ///< version the checkpoint holds
  int commits = 100;                ///< JSON commits after the checkpoint
  int adds_per_commit = 5;
  int removes_per_commit = 5;
  int64_t rows_per_file = 1000;  ///< numRecords of every file; ids per file
  uint64_t seed = 42;            ///< paths, sizes and removed files are reproducible
};

struct ScaleTableSummary {
  int64_t latest_version = 0;
  int64_t live_files = 0;  ///< after the last commit
  int64_t log_bytes = 0;   ///< bytes under _delta_log
};

/// Writes the log of such a table into `path` (which must not hold a _delta_log yet). Throws lakerun errors from
/// the writers.
ScaleTableSummary WriteScaleTable(const std::string& path, const ScaleTableOptions& options);

}  // namespace lakerun::bench
