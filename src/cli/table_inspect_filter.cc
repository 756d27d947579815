#include "cli/table_inspect_filter.h"

#include "cli/skip_report.h"
#include "data/hive_partitions.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/scan.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::cli {
namespace {

using format::ColumnStatistics;
using format::Filter;
using parquet::FilterColumnResolver;
using parquet::FilterColumnSource;

// File-level errors name the file: an unknown column is found when the first file's schema is asked.
FilterColumnResolver NamingFile(FilterColumnResolver resolve, const std::string& path) {
  return [resolve = std::move(resolve), path](const std::string& column) {
    try {
      return resolve(column);
    } catch (const InvalidArgument& e) {
      LAKERUN_THROW(InvalidArgument, path, ": ", e.what());
    }
  };
}

void ParquetFileReport(const std::string& path, const Filter& filter, SkipReport* report) {
  auto file = parquet::ParquetFile::Open(UriFileSystem(), path);
  report->files.Add(static_cast<int64_t>(file->file_size()), false);
  report->AddParquetFile(*file, filter, NamingFile(parquet::FileLeafColumns(file->schema()), path));
}

// Hive key=value folders prune files; the other columns are the files' leaves.
void ParquetFolderReport(const std::string& root, const Filter& filter, SkipReport* report) {
  const std::vector<std::string> paths = ListParquetFiles(root);
  const data::HivePartitions hive = data::ParseHivePartitions(root, paths);
  for (size_t i = 0; i < paths.size(); ++i) {
    const auto& values = hive.values[i];
    format::StatisticsView partitions;
    partitions.column = [&values](const std::string& column) -> std::optional<ColumnStatistics> {
      const auto it = values.find(column);
      if (it == values.end()) return std::nullopt;
      return ColumnStatistics::Constant(it->second);
    };
    const int64_t size = static_cast<int64_t>(UriFileSystem().Stat(paths[i])->size);
    const bool skip = !format::MayMatch(filter, partitions);
    report->files.Add(size, skip);
    if (skip) continue;
    auto file = parquet::ParquetFile::Open(UriFileSystem(), paths[i]);
    const FilterColumnResolver leaves = parquet::FileLeafColumns(file->schema());
    const parquet::Schema& schema = file->schema();
    report->AddParquetFile(*file, filter, NamingFile([&](const std::string& column) -> FilterColumnSource {
                             const auto it = values.find(column);
                             if (it != values.end() && schema.FindNode(column) == nullptr) {
                               return {std::nullopt, ColumnStatistics::Constant(it->second)};
                             }
                             return leaves(column);
                           }, paths[i]));
  }
}

// Whether a data file's leaf holds a Delta column's values in the form a bound filter compares with (decimals are
// bound as numbers and timestamps as microseconds, which other Parquet forms are not).
bool ComparesAsBound(const delta::DataType& type, const parquet::ColumnDescriptor& leaf) {
  using K = delta::TypeKind;
  if (type.kind == K::kDecimal) return false;
  if (type.kind == K::kTimestamp || type.kind == K::kTimestampNtz) {
    return leaf.logical_type.kind == parquet::LogicalType::Kind::kTimestamp &&
           leaf.logical_type.unit == parquet::TimeUnit::kMicros;
  }
  return true;
}

// A Delta filter column in one data file: its partition value, its leaf (physical names under name mapping), all
// null when the file predates the column, or unknown (id mapping, forms that do not compare as bound).
FilterColumnResolver DeltaColumns(const delta::Snapshot& s, const delta::AddFile& add, const parquet::Schema& schema) {
  return [&s, &add, &schema](const std::string& column) -> FilterColumnSource {
    const delta::StructField* field = delta::FindFilterColumn(s, column);
    if (field == nullptr) return {};
    const auto& partitions = s.metadata.partition_columns;
    if (std::find(partitions.begin(), partitions.end(), column) != partitions.end()) {
      return {std::nullopt,
              ColumnStatistics::Constant(delta::FilterValue(delta::PartitionValue(s, add, *field), *field->type))};
    }
    if (s.column_mapping_mode() == delta::ColumnMappingMode::kId) return {};
    std::string path;
    for (const std::string& part : delta::PhysicalColumnPath(s, column)) path += (path.empty() ? "" : ".") + part;
    if (const auto leaf = schema.FindColumn(path)) {
      if (!ComparesAsBound(*field->type, schema.column(*leaf))) return {};
      return {*leaf, std::nullopt};
    }
    if (schema.FindNode(path) != nullptr) return {};
    ColumnStatistics all_null;
    all_null.all_null = true;
    return {std::nullopt, all_null};
  };
}

void DeltaTableReport(const std::string& path, const TimeTravel& travel, const Filter& filter, SkipReport* report) {
  delta::DeltaTable table(path);
  const delta::Snapshot snapshot = LoadSnapshot(table, travel);
  const Filter bound = delta::BindFilter(snapshot, filter);
  report->filter = bound.ToString();
  const delta::FilePruner pruner(snapshot, bound);
  for (const delta::AddFile& add : snapshot.files) {
    const bool skip = !pruner.MayMatch(add);
    report->files.Add(add.size, skip);
    if (skip) continue;
    const std::string file_path = snapshot.DataFilePath(add);
    auto file = parquet::ParquetFile::Open(UriFileSystem(), file_path);
    report->AddParquetFile(*file, bound, DeltaColumns(snapshot, add, file->schema()));
  }
}

Filter ParseFilter(const std::string& text) {
  try {
    return Filter::Parse(text);
  } catch (const InvalidArgument& e) {
    LAKERUN_THROW(InvalidArgument, "--filter '", text, "': ", e.what());
  }
}

}  // namespace

void InspectFilter(const std::string& path, TableKind kind, const TimeTravel& travel, const std::string& text,
                   bool json, std::ostream& out) {
  const Filter filter = ParseFilter(text);
  SkipReport report;
  report.filter = filter.ToString();
  switch (kind) {
    case TableKind::kParquetFile:
      RefuseTimeTravel(travel, path);
      ParquetFileReport(path, filter, &report);
      break;
    case TableKind::kParquetFolder:
      RefuseTimeTravel(travel, path);
      ParquetFolderReport(path, filter, &report);
      break;
    case TableKind::kDeltaTable:
      DeltaTableReport(path, travel, filter, &report);
      break;
  }
  if (json) {
    nlohmann::ordered_json j;
    j["path"] = path;
    j["filter_skips"] = report.Json();
    out << j.dump(2) << "\n";
  } else {
    out << "table: " << path << "\n";
    report.PrintText(out);
  }
}

}  // namespace lakerun::cli
