// The Fashion-MNIST Delta tables the Trainer example reads, imported on first use.
//
//   TableSetupOptions options;
//   options.table = "data/fashion-mnist";
//   EnsureFashionMnistTables(options, sync);                           // every rank calls it
//   // data/fashion-mnist/train (60,000 rows) and data/fashion-mnist/test (10,000 rows): image (784-byte binary),
//   // label (long) — exactly what `lakerun table import fashion-mnist data/fashion-mnist` writes
//
// A split is present when its _delta_log/ exists. Rank 0 imports the missing splits with lakerun's importer
// (format/import, the library behind `lakerun table import`) from the IDX files, each into a temporary sibling
// directory that is then renamed into place, so a crash never leaves a half-written table behind and a concurrent
// importer (another job) loses the rename harmlessly. The other ranks wait for rank 0's outcome (RankSync::All);
// if rank 0 fails, every rank throws.
#pragma once

#include <string>
#include <vector>

#include "lakerun/train/callback.h"

namespace lakerun::examples {

struct TableSetupOptions {
  /// The directory holding the train/ and test/ tables.
  std::string table = "data/fashion-mnist";
  /// Where the IDX files are (Debian's dataset-fashion-mnist).
  std::string idx_dir = "/usr/share/datasets/fashion-mnist";
};

/// What EnsureFashionMnistTables did on this rank.
struct TableSetupResult {
  std::vector<std::string> imported;  ///< splits rank 0 imported now ("train", "test"); empty elsewhere
  double seconds = 0;                 ///< rank 0's import wall time
};

/// Makes sure `<table>/train` and `<table>/test` exist. Throws IoError naming the IDX directory (and the Debian
/// package) when the files are missing, and DistError on ranks other than 0 when rank 0 failed.
TableSetupResult EnsureFashionMnistTables(const TableSetupOptions& options, train::RankSync& sync);

/// Whether `<table>/<split>` is a Delta table (has a _delta_log directory).
bool SplitPresent(const std::string& table, const std::string& split);

}  // namespace lakerun::examples
