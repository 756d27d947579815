// Private: the add and remove actions of a checkpoint Parquet file, read straight from their decoded leaf columns.
//
// A checkpoint holds one row per action, most of them file actions. Assembling each row into a parquet::Value tree
// and then JSON (the generic path of checkpoint_reader.cc) costs several allocations per field; this reader walks
// the leaf columns of `add` and `remove` slot by slot instead and fills AddFile / RemoveFile directly, with the
// checks ParseActionInto makes. It knows the shapes the protocol's checkpoint schema gives these columns (flat
// leaves, string maps, the deletion-vector struct); for any other shape Bind returns nullopt and the caller falls
// back to the generic path.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/delta/actions.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::delta::internal {

/// The file-action columns of one checkpoint schema, bound once per file.
class FileActionColumns {
 public:
  /// Binds the `add` and `remove` columns of `schema` (either may be absent); nullopt when one of them has a shape
  /// this reader does not know.
  static std::optional<FileActionColumns> Bind(const parquet::Schema& schema);

  /// The dotted paths to read (TableReadOptions::columns): the known fields of add and remove, nothing else (not
  /// stats_parsed or partitionValues_parsed).
  const std::vector<std::string>& read_paths() const { return read_paths_; }

  /// Appends the add and remove actions of one row group (read with read_paths() among its columns) to `out`.
  /// `context` names the table and file. Throws CorruptDataError, as ParseActionInto does for the same defects.
  void Read(const parquet::RowGroupData& group, ActionSet* out, const std::string& context) const;

  struct Binding;  // defined in the .cc

 private:
  std::vector<std::string> read_paths_;
  std::shared_ptr<const Binding> binding_;
};

}  // namespace lakerun::delta::internal
