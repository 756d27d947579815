// Hive-style partition folders of loose Parquet tables (ROOT/label=3/day=2024-01-02/part-0.parquet), as Spark, Hive
// and pyarrow write them: the partition columns live in the folder names, not in the files.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/format/delta/schema.h"
#include "lakerun/format/parquet/value.h"

namespace lakerun::data {

struct HivePartitions {
  /// Partition keys, in folder order; empty when the files sit in no key=value folder.
  std::vector<std::string> keys;
  /// Each key's type, inferred over every file: long when every value is an integer, else double when every value
  /// is a number, else string.
  std::map<std::string, delta::DataTypePtr> types;
  /// Per file (in the order given): each key's text, %XX-decoded; nullopt for __HIVE_DEFAULT_PARTITION__ (null).
  std::vector<std::map<std::string, std::optional<std::string>>> text;
  /// Per file: each key's value as `types` says (null for null).
  std::vector<std::map<std::string, parquet::Value>> values;
};

/// Reads the key=value folders between `root` and each of `files` (paths under root). Folders that are not
/// key=value are ignored. Throws InvalidArgument naming two files whose folders name different keys.
HivePartitions ParseHivePartitions(const std::string& root, const std::vector<std::string>& files);

}  // namespace lakerun::data
