// Helpers shared by the parquet tests: write a file into a MemoryFileSystem and read it back.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "format/parquet/metadata_thrift.h"
#include "lakerun/format/parquet/parquet.h"

namespace lakerun::parquet::testing {

struct MemFile {
  std::unique_ptr<FileSystem> fs = NewMemoryFileSystem();
  std::string path = "/t/data.parquet";

  void Write(const Schema& schema, const std::vector<ColumnData>& columns, const WriterOptions& options = {}) {
    ParquetWriter w(*fs, path, schema, options);
    w.WriteRowGroup(columns);
    w.Close();
  }
  void WriteRows(const Schema& schema, const std::vector<Value>& rows, const WriterOptions& options = {}) {
    ParquetWriter w(*fs, path, schema, options);
    w.WriteRows(rows);
    w.Close();
  }
  std::unique_ptr<ParquetFile> Open() const { return ParquetFile::Open(*fs, path); }
  std::string Bytes() const { return fs->ReadFile(path); }
  void SetBytes(const std::string& bytes) { fs->WriteAtomically(path, bytes); }
  std::vector<Value> ReadAll() const {
    auto f = Open();
    TableReader r(*f, {});
    return r.ReadRows(INT64_MAX);
  }
};

inline bool SameColumn(const ColumnData& a, const ColumnData& b) {
  if (a.type() != b.type() || a.num_values() != b.num_values()) return false;
  if (a.def_levels() != b.def_levels() || a.rep_levels() != b.rep_levels()) return false;
  if (a.type() == PhysicalType::kByteArray) {
    for (int64_t i = 0; i < a.num_values(); ++i) {
      if (a.bytes_at(i) != b.bytes_at(i)) return false;
    }
    return true;
  }
  return a.value_buffer().size() == b.value_buffer().size() &&
         std::memcmp(a.value_buffer().data(), b.value_buffer().data(), a.value_buffer().size()) == 0;
}

// Rewrites the footer of `f` with `edit` applied to its metadata.
template <typename Edit>
void RewriteFooter(MemFile& f, Edit edit) {
  std::string bytes = f.Bytes();
  uint32_t len;
  std::memcpy(&len, bytes.data() + bytes.size() - 8, 4);
  const size_t footer_at = bytes.size() - 8 - len;
  FileMetaData md = ParseFileMetaData(std::string_view(bytes).substr(footer_at, len), "x", footer_at, 64);
  edit(md);
  std::string footer = SerializeFileMetaData(md);
  std::string rebuilt = bytes.substr(0, footer_at) + footer;
  const uint32_t new_len = static_cast<uint32_t>(footer.size());
  rebuilt.append(reinterpret_cast<const char*>(&new_len), 4);
  rebuilt += "PAR1";
  f.SetBytes(rebuilt);
}

}  // namespace lakerun::parquet::testing
