// Writing an import's data files and committing them.
#include "format/import/sink.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::importer::internal {
namespace {

namespace pq = lakerun::parquet;
using nlohmann::json;

constexpr size_t kStringStatsPrefix = 32;

// Per-file statistics of one flat top-level column.
struct Accumulator {
  int64_t nulls = 0;
  bool has = false;
  int64_t imin = 0, imax = 0;
  double dmin = 0, dmax = 0;
  std::string smin, smax;
  bool strings_too_long = false;
};

void Accumulate(const delta::DataType& type, const pq::ColumnData& data, Accumulator* acc) {
  acc->nulls += data.num_slots() - data.num_values();
  const int64_t n = data.num_values();
  if (n == 0) return;
  switch (type.kind) {
    case delta::TypeKind::kLong: {
      const int64_t* v = data.values<int64_t>();
      for (int64_t i = 0; i < n; ++i) {
        if (!acc->has || v[i] < acc->imin) acc->imin = v[i];
        if (!acc->has || v[i] > acc->imax) acc->imax = v[i];
        acc->has = true;
      }
      break;
    }
    case delta::TypeKind::kDouble: {
      const double* v = data.values<double>();
      for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(v[i])) continue;
        if (!acc->has || v[i] < acc->dmin) acc->dmin = v[i];
        if (!acc->has || v[i] > acc->dmax) acc->dmax = v[i];
        acc->has = true;
      }
      break;
    }
    case delta::TypeKind::kString: {
      for (int64_t i = 0; i < n; ++i) {
        const std::string_view s = data.bytes_at(i);
        if (s.size() > kStringStatsPrefix) acc->strings_too_long = true;
        if (!acc->has || s < acc->smin) acc->smin = std::string(s);
        if (!acc->has || s > acc->smax) acc->smax = std::string(s);
        acc->has = true;
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

parquet::ColumnData OptionalByteArrays(const std::vector<std::optional<std::string>>& values) {
  std::vector<std::string> present;
  std::vector<int16_t> defs;
  defs.reserve(values.size());
  for (const auto& v : values) {
    defs.push_back(v ? 1 : 0);
    if (v) present.push_back(*v);
  }
  return pq::ColumnData::ByteArrays(present).set_def_levels(std::move(defs), 1);
}

parquet::ColumnData OptionalInt64s(const std::vector<std::optional<int64_t>>& values) {
  std::vector<int64_t> present;
  std::vector<int16_t> defs;
  for (const auto& v : values) {
    defs.push_back(v ? 1 : 0);
    if (v) present.push_back(*v);
  }
  return pq::ColumnData::Int64s(present).set_def_levels(std::move(defs), 1);
}

parquet::ColumnData OptionalDoubles(const std::vector<std::optional<double>>& values) {
  std::vector<double> present;
  std::vector<int16_t> defs;
  for (const auto& v : values) {
    defs.push_back(v ? 1 : 0);
    if (v) present.push_back(*v);
  }
  return pq::ColumnData::Doubles(present).set_def_levels(std::move(defs), 1);
}

TableSink::TableSink(std::string out, const ImportOptions& options, std::vector<SinkColumn> columns,
                     int64_t total_rows, int64_t row_bytes, std::string label,
                     std::map<std::string, std::vector<int64_t>> shapes)
    : out_(std::move(out)),
      options_(options),
      fs_(options.fs ? *options.fs : UriFileSystem()),
      columns_(std::move(columns)),
      shapes_(std::move(shapes)),
      total_rows_(total_rows),
      progress_(label + " -> " + out_, total_rows, options.progress),
      start_(std::chrono::steady_clock::now()) {
  LAKERUN_CHECK(options.files_multiple_of >= 1, "--files-multiple-of must be >= 1, got ", options.files_multiple_of);
  LAKERUN_CHECK(options.rows_per_file >= 0 && options.row_group_rows >= 0 && options.row_group_bytes >= 0,
                "row and byte sizes must not be negative");
  if (auto info = fs_.Stat(out_)) {
    LAKERUN_CHECK(info->is_directory && fs_.List(out_).empty(), "output ", out_,
                  " already exists and is not an empty directory");
  }
  std::vector<pq::SchemaNode> nodes;
  for (const auto& c : columns_) nodes.push_back(c.node);
  schema_ = pq::Schema::FromFields(std::move(nodes));
  row_group_rows_ = options.row_group_rows > 0
                        ? options.row_group_rows
                        : std::max<int64_t>(1, options.row_group_bytes / std::max<int64_t>(1, row_bytes));
  // Number of files: a multiple of files_multiple_of, enough for rows_per_file.
  const int64_t m = options.files_multiple_of;
  int64_t n = m;
  if (options.rows_per_file > 0) {
    const int64_t needed = (total_rows + options.rows_per_file - 1) / options.rows_per_file;
    n = std::max<int64_t>(1, (needed + m - 1) / m) * m;
  }
  LAKERUN_CHECK(total_rows >= n || total_rows == 0, label, ": ", total_rows, " rows cannot fill ", n,
                " files (--files-multiple-of ", m, "); lower the multiple");
  if (total_rows == 0) n = 1;
  for (int64_t i = 0; i < n; ++i) files_.emplace_back(i * total_rows / n, (i + 1) * total_rows / n);
  fs_.CreateDirs(out_);
}

void TableSink::WriteFile(size_t index, const std::function<std::vector<pq::ColumnData>(int64_t, int64_t)>& make) {
  const auto [begin, end] = files_.at(index);
  char name[128];
  std::string codec = pq::ToString(options_.codec);
  std::transform(codec.begin(), codec.end(), codec.begin(), ::tolower);
  if (options_.format == OutputFormat::kDelta) {
    std::snprintf(name, sizeof name, "part-%05zu-%s.c000.%s.parquet", index, delta::RandomUuid().c_str(),
                  codec.c_str());
  } else {
    std::snprintf(name, sizeof name, "part-%05zu.%s.parquet", index, codec.c_str());
  }
  const std::string path = JoinPath(out_, name);
  pq::WriterOptions wopts;
  wopts.codec = options_.codec;
  wopts.tensor_shapes = shapes_;
  std::vector<Accumulator> acc(columns_.size());
  {
    pq::ParquetWriter writer(fs_, path, schema_, wopts);
    for (int64_t b = begin; b < end || (b == begin && begin == end); b += row_group_rows_) {
      const int64_t e = std::min(end, b + row_group_rows_);
      std::vector<pq::ColumnData> data = make(b, e);
      for (size_t c = 0; c < columns_.size(); ++c) {
        const auto leaves = schema_.ColumnsUnder(columns_[c].name);
        if (leaves.size() == 1 && columns_[c].delta_type->IsPrimitive()) {
          Accumulate(*columns_[c].delta_type, data.at(static_cast<size_t>(leaves[0])), &acc[c]);
        }
      }
      writer.WriteRowGroup(data);
      progress_.Add(e - b);
      if (begin == end) break;
    }
    writer.Close();
  }
  json min = json::object(), max = json::object(), nulls = json::object();
  for (size_t c = 0; c < columns_.size(); ++c) {
    const auto& type = *columns_[c].delta_type;
    if (!type.IsPrimitive()) continue;
    nulls[columns_[c].name] = acc[c].nulls;
    if (!acc[c].has) continue;
    if (type.kind == delta::TypeKind::kLong) {
      min[columns_[c].name] = acc[c].imin;
      max[columns_[c].name] = acc[c].imax;
    } else if (type.kind == delta::TypeKind::kDouble) {
      min[columns_[c].name] = acc[c].dmin;
      max[columns_[c].name] = acc[c].dmax;
    } else if (type.kind == delta::TypeKind::kString && !acc[c].strings_too_long) {
      min[columns_[c].name] = acc[c].smin;
      max[columns_[c].name] = acc[c].smax;
    }
  }
  written_.push_back(name);
  stats_.push_back(json{{"numRecords", end - begin}, {"minValues", min}, {"maxValues", max}, {"nullCount", nulls}}
                       .dump());
  auto info = fs_.Stat(path);
  sizes_.push_back(info ? static_cast<int64_t>(info->size) : 0);
}

ImportResult TableSink::Finish() {
  LAKERUN_INTERNAL_ASSERT(written_.size() == files_.size(), "every planned file must be written");
  progress_.Finish();
  ImportResult result;
  result.path = out_;
  result.rows = total_rows_;
  result.files = static_cast<int>(written_.size());
  for (int64_t s : sizes_) result.bytes += s;
  if (options_.format == OutputFormat::kDelta) {
    std::vector<delta::StructField> fields;
    for (const auto& c : columns_) {
      delta::StructField f;
      f.name = c.name;
      f.type = c.delta_type;
      f.nullable = true;
      fields.push_back(std::move(f));
    }
    delta::CreateTableOptions create;
    std::string codec = pq::ToString(options_.codec);
    std::transform(codec.begin(), codec.end(), codec.begin(), ::tolower);
    create.configuration["delta.parquet.compression.codec"] = codec;
    delta::DeltaTable table = delta::CreateTable(out_, delta::MakeStruct(std::move(fields)), create, fs_);
    delta::ActionSet actions;
    for (size_t i = 0; i < written_.size(); ++i) {
      delta::AddFile add;
      add.path = written_[i];
      add.size = sizes_[i];
      add.modification_time = fs_.Stat(JoinPath(out_, written_[i]))->mtime_ms;
      add.stats = stats_[i];
      actions.adds.push_back(std::move(add));
    }
    delta::CommitOptions commit;
    commit.operation = "WRITE";
    commit.operation_parameters = {{"mode", "Append"}, {"importer", "lakerun table import"}};
    delta::Commit(table, std::move(actions), commit);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return result;
}

}  // namespace lakerun::importer::internal
