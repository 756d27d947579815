#include "lakerun/data/converter.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>

#include "lakerun/base/error.h"
#include "lakerun/data/shuffle.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/import/import.h"
#include "lakerun/format/parquet/writer.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

constexpr char kCompleteMarker[] = "_SUCCESS";

// 128-bit hash (two independent SplitMix64 chains) as 32 hex digits.
std::string HashHex(const std::string& text) {
  uint64_t a = 0x6c616b6572756e31ULL, b = 0x636f6e7665727432ULL;
  for (unsigned char ch : text) {
    a = Mix64(a ^ ch);
    b = Mix64(b + ch * 0x9e3779b97f4a7c15ULL);
  }
  char out[33];
  std::snprintf(out, sizeof(out), "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return out;
}

pq::PhysicalType PhysicalFor(const ColumnInfo& info) {
  switch (info.type) {
    case ElementType::kBool: return pq::PhysicalType::kBoolean;
    case ElementType::kInt8:
    case ElementType::kInt16:
    case ElementType::kInt32: return pq::PhysicalType::kInt32;
    case ElementType::kInt64: return pq::PhysicalType::kInt64;
    case ElementType::kFloat32: return pq::PhysicalType::kFloat;
    case ElementType::kFloat64: return pq::PhysicalType::kDouble;
    case ElementType::kBinary: return pq::PhysicalType::kByteArray;
    case ElementType::kUInt8: return pq::PhysicalType::kFixedLenByteArray;
    default: break;
  }
  LAKERUN_THROW(NotImplemented, "converter: column '", info.name, "' of type ", ToString(info.type),
                " cannot be written yet");
}

// int8 and int16 columns are stored as INT32 annotated INT(8) / INT(16), as Spark writes byte and short.
pq::LogicalType LogicalFor(const ColumnInfo& info) {
  if (info.type == ElementType::kInt8) return pq::LogicalType::Int(8, true);
  if (info.type == ElementType::kInt16) return pq::LogicalType::Int(16, true);
  return {};
}

// int8 / int16 elements widened to the int32 values INT32 stores; other columns' bytes unchanged.
std::vector<uint8_t> StoredBytes(std::vector<uint8_t> bytes, ElementType type) {
  if (type != ElementType::kInt8 && type != ElementType::kInt16) return bytes;
  const size_t width = ElementSize(type), n = bytes.size() / width;
  std::vector<uint8_t> out(n * 4);
  for (size_t i = 0; i < n; ++i) {
    int32_t v;
    if (type == ElementType::kInt8) {
      v = static_cast<int8_t>(bytes[i]);
    } else {
      int16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      v = h;
    }
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
  return out;
}

// uint8 columns become one FIXED_LEN_BYTE_ARRAY value per row (the loader reads them back as uint8 [shape]);
// other columns with a shape become required fixed-size lists.
bool IsList(const ColumnInfo& info) { return info.type != ElementType::kUInt8 && !info.shape.empty(); }

pq::Schema SchemaFor(const std::vector<ColumnInfo>& columns, pq::WriterOptions* options) {
  std::vector<pq::SchemaNode> fields;
  for (const ColumnInfo& info : columns) {
    LAKERUN_CHECK_AS(NotImplemented, info.shape.empty() || info.elements_per_row() > 0, "column '", info.name,
                     "': no row holds a complete list (every list is null or empty), so it has no tensor shape; "
                     "nulls or variable-length lists cannot be converted yet");
    const pq::PhysicalType type = PhysicalFor(info);
    if (type == pq::PhysicalType::kFixedLenByteArray) {
      fields.push_back(pq::Leaf(info.name, type, pq::Repetition::kRequired, {},
                                static_cast<int32_t>(info.elements_per_row())));
    } else if (IsList(info)) {
      fields.push_back(pq::ListOf(info.name, pq::Leaf("element", type, pq::Repetition::kRequired, LogicalFor(info)),
                                  pq::Repetition::kRequired));
    } else {
      fields.push_back(pq::Leaf(info.name, type, pq::Repetition::kRequired, LogicalFor(info)));
    }
    if (!info.shape.empty()) options->tensor_shapes[info.name] = info.shape;
  }
  return pq::Schema::FromFields(std::move(fields));
}

// Reads rows [begin, end) of every column of `source` into writer input.
class RowCopier {
 public:
  explicit RowCopier(const RowSource& source) : source_(source) {}

  std::vector<pq::ColumnData> Read(uint64_t begin, uint64_t end) {
    const auto& columns = source_.columns();
    std::vector<std::vector<uint8_t>> fixed(columns.size());
    std::vector<std::vector<std::string>> binary(columns.size());
    for (uint64_t row = begin; row < end; ++row) {
      const UnitData& unit = UnitFor(row);
      const uint64_t local = row - source_.unit_start(unit_);
      for (size_t c = 0; c < columns.size(); ++c) {
        const ColumnChunk& chunk = unit.columns[c];
        // The converter writes required columns of fixed-size rows: nulls and variable-length lists would be
        // rewritten wrongly, so they are refused (read such tables directly, with the loader's policies).
        LAKERUN_CHECK_AS(NotImplemented,
                         chunk.validity == nullptr && chunk.element_validity == nullptr &&
                             chunk.value_offsets == nullptr &&
                             (chunk.offsets == nullptr || columns[c].type == ElementType::kBinary),
                         source_.DescribeUnit(unit_), " column '", columns[c].name, "': nulls or variable-length "
                         "lists cannot be converted yet");
        const std::string_view row_bytes = chunk.RowView(local, columns[c].row_bytes());
        if (columns[c].type == ElementType::kBinary) {
          binary[c].emplace_back(row_bytes);
        } else {
          fixed[c].insert(fixed[c].end(), row_bytes.begin(), row_bytes.end());
        }
      }
    }
    std::vector<pq::ColumnData> out;
    const auto rows = static_cast<size_t>(end - begin);
    for (size_t c = 0; c < columns.size(); ++c) {
      const ColumnInfo& info = columns[c];
      const pq::PhysicalType type = PhysicalFor(info);
      fixed[c] = StoredBytes(std::move(fixed[c]), info.type);
      if (info.type == ElementType::kBinary) {
        out.push_back(pq::ColumnData::ByteArrays(binary[c]));
      } else if (type == pq::PhysicalType::kFixedLenByteArray) {
        out.push_back(pq::ColumnData::FromRaw(type, static_cast<int32_t>(info.elements_per_row()), fixed[c].data(),
                                              rows));
      } else if (IsList(info)) {
        const auto d = static_cast<size_t>(info.elements_per_row());
        pq::ColumnData data = pq::ColumnData::FromRaw(type, 0, fixed[c].data(), rows * d);
        std::vector<int16_t> reps(rows * d, 1), defs(rows * d, 1);
        for (size_t r = 0; r < rows; ++r) reps[r * d] = 0;
        data.set_rep_levels(std::move(reps), 1);
        data.set_def_levels(std::move(defs), 1);
        out.push_back(std::move(data));
      } else {
        out.push_back(pq::ColumnData::FromRaw(type, 0, fixed[c].data(), rows));
      }
    }
    return out;
  }

 private:
  const UnitData& UnitFor(uint64_t row) {
    if (!data_ || row < source_.unit_start(unit_) || row >= source_.unit_start(unit_ + 1)) {
      size_t lo = 0, hi = source_.num_units();
      while (hi - lo > 1) {  // last unit whose start <= row
        const size_t mid = (lo + hi) / 2;
        (source_.unit_start(mid) <= row ? lo : hi) = mid;
      }
      unit_ = lo;
      data_ = source_.ReadUnit(unit_);
    }
    return *data_;
  }

  const RowSource& source_;
  size_t unit_ = 0;
  std::shared_ptr<const UnitData> data_;
};

void CheckOptions(const ConverterOptions& options) {
  LAKERUN_CHECK(!options.cache_dir.empty(), "converter: cache_dir must be set");
  LAKERUN_CHECK(options.world_size > 0, "converter: world_size must be positive, got ", options.world_size);
  LAKERUN_CHECK(options.row_group_rows > 0, "converter: row_group_rows must be positive");
  LAKERUN_CHECK(options.rows_per_file > 0, "converter: rows_per_file must be positive");
}

// Publishes the cache entry `path` atomically: `write` fills a fresh folder beside it, then a marker holding
// `described` and a rename make it visible. A failed write leaves nothing behind.
void PublishEntry(FileSystem& fs, const std::string& path, const std::string& described,
                  const std::function<void(const std::string& folder)>& write) {
  const std::string tmp = StrCat(path, ".tmp-", getpid(), "-",
                                 std::chrono::steady_clock::now().time_since_epoch().count());
  fs.CreateDirs(tmp);
  try {
    write(tmp);
    fs.WriteAtomically(JoinPath(tmp, kCompleteMarker), described);
    if (fs.Exists(path)) fs.RemoveAll(path);  // an incomplete entry (no marker) from a crashed run
    fs.Rename(tmp, path);
  } catch (...) {
    fs.RemoveAll(tmp);
    throw;
  }
}

// Every regular file under `path` (itself when a file), with size and modification time, in name order.
void ListInputs(FileSystem& fs, const std::string& path, std::string* out) {
  const std::optional<FileInfo> info = fs.Stat(path);
  LAKERUN_CHECK_AS(IoError, info.has_value(), "converter: cannot read ", path, ": no such file or directory");
  if (!info->is_directory) {
    *out += StrCat("input ", path, " ", info->size, " ", info->mtime_ms, "\n");
    return;
  }
  std::vector<FileInfo> entries = fs.List(path);
  std::sort(entries.begin(), entries.end(), [](const FileInfo& a, const FileInfo& b) { return a.name < b.name; });
  for (const FileInfo& entry : entries) ListInputs(fs, JoinPath(path, entry.name), out);
}

const char* KindName(FileSourceKind kind) {
  switch (kind) {
    case FileSourceKind::kMnist: return "mnist";
    case FileSourceKind::kImageFolder: return "image-folder";
    case FileSourceKind::kCsv: return "csv";
  }
  return "?";
}

}  // namespace

ConvertedDataset Convert(const RowSource& source, const std::string& fingerprint, const ConverterOptions& options,
                         FileSystem& fs) {
  CheckOptions(options);
  LAKERUN_CHECK(!fingerprint.empty(), "converter: the source has no content fingerprint; pass one to Convert");
  std::string described = fingerprint;
  for (const ColumnInfo& c : source.columns()) described += StrCat("col ", c.name, " ", ToString(c.type), "\n");
  described += StrCat("rows ", source.num_rows(), " world ", options.world_size, " rg ", options.row_group_rows,
                      " file ", options.rows_per_file, "\n");
  ConvertedDataset out;
  out.key = HashHex(described);
  out.path = JoinPath(options.cache_dir, out.key);
  out.rows = source.num_rows();
  const auto world = static_cast<uint64_t>(options.world_size);
  const auto per_file = static_cast<uint64_t>(options.rows_per_file);
  const uint64_t groups = std::max<uint64_t>(1, (out.rows + world * per_file - 1) / (world * per_file));
  out.files = static_cast<int64_t>(groups * world);
  if (fs.Exists(JoinPath(out.path, kCompleteMarker))) {
    out.reused = true;
    return out;
  }

  PublishEntry(fs, out.path, described, [&](const std::string& tmp) {
    pq::WriterOptions writer_options;
    const pq::Schema schema = SchemaFor(source.columns(), &writer_options);
    RowCopier copier(source);
    const auto files = static_cast<uint64_t>(out.files);
    for (uint64_t f = 0; f < files; ++f) {
      const uint64_t begin = out.rows * f / files, end = out.rows * (f + 1) / files;
      char name[40];  // "part-" + up to 20 digits + ".parquet"
      std::snprintf(name, sizeof(name), "part-%05llu.parquet", static_cast<unsigned long long>(f));
      pq::ParquetWriter writer(fs, JoinPath(tmp, name), schema, writer_options);
      for (uint64_t rg = begin; rg < end; rg += static_cast<uint64_t>(options.row_group_rows)) {
        writer.WriteRowGroup(copier.Read(rg, std::min(end, rg + static_cast<uint64_t>(options.row_group_rows))));
      }
      writer.Close();
    }
  });
  return out;
}

ConvertedDataset ConvertFiles(const FileSource& source, const ConverterOptions& options, FileSystem& fs) {
  CheckOptions(options);
  LAKERUN_CHECK(source.kind != FileSourceKind::kMnist || source.split == "train" || source.split == "test",
                "converter: the MNIST split must be \"train\" or \"test\", got \"", source.split, "\"");
  const std::string folder = source.path.empty() || source.path.back() == '/' ? source.path : source.path + "/";
  LAKERUN_CHECK(options.cache_dir.rfind(folder, 0) != 0 || source.kind == FileSourceKind::kCsv,
                "converter: cache_dir ", options.cache_dir, " lies inside the source folder ", source.path,
                ": its entries would be read as input; put the cache elsewhere");
  std::string described = StrCat("files ", KindName(source.kind), " ", source.path, " split ",
                                 source.kind == FileSourceKind::kMnist ? source.split : "", "\n");
  ListInputs(fs, source.path, &described);
  described += StrCat("world ", options.world_size, " rg ", options.row_group_rows, " file ", options.rows_per_file,
                      "\n");
  ConvertedDataset out;
  out.key = HashHex(described);
  out.path = JoinPath(options.cache_dir, out.key);
  if (fs.Exists(JoinPath(out.path, kCompleteMarker))) {
    // The importer's layout: part-*.parquet files, counted from the entry itself.
    for (const FileInfo& entry : fs.List(out.path)) out.files += entry.name.rfind("part-", 0) == 0 ? 1 : 0;
    out.rows = OpenTable(out.path, {}, fs)->num_rows();
    out.reused = true;
    return out;
  }
  PublishEntry(fs, out.path, described, [&](const std::string& tmp) {
    importer::ImportOptions import;
    import.format = importer::OutputFormat::kParquet;
    import.codec = pq::Codec::kSnappy;  // as Convert writes: the fastest to decode
    import.row_group_rows = options.row_group_rows;
    import.rows_per_file = options.rows_per_file;
    import.files_multiple_of = static_cast<int>(options.world_size);
    import.fs = &fs;
    const std::string written = JoinPath(tmp, "data");
    importer::ImportResult result;
    switch (source.kind) {
      case FileSourceKind::kMnist:
        result = importer::ImportMnist(source.path, written, import, {source.split}).at(0);
        break;
      case FileSourceKind::kImageFolder: result = importer::ImportImageFolder(source.path, written, import); break;
      case FileSourceKind::kCsv: result = importer::ImportCsv(source.path, written, import); break;
    }
    // The entry holds the part files themselves, as Convert's entries do.
    for (const FileInfo& entry : fs.List(result.path)) {
      fs.Rename(JoinPath(result.path, entry.name), JoinPath(tmp, entry.name));
    }
    fs.RemoveAll(written);
    out.rows = static_cast<uint64_t>(result.rows);
    out.files = result.files;
  });
  return out;
}

ConvertedDataset ConvertTable(const std::string& table_path, const TableOptions& table,
                              const ConverterOptions& options, FileSystem& fs) {
  const auto source = OpenTable(table_path, table, fs);
  return Convert(*source, source->Fingerprint(), options, fs);
}

void ClearConverterCache(const std::string& cache_dir, const std::string& key, FileSystem& fs) {
  if (!key.empty()) {
    fs.RemoveAll(JoinPath(cache_dir, key));
    return;
  }
  if (!fs.Exists(cache_dir)) return;
  for (const FileInfo& entry : fs.List(cache_dir)) {
    if (entry.is_directory) fs.RemoveAll(JoinPath(cache_dir, entry.name));
  }
}

}  // namespace lakerun::data
