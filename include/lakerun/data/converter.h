// Materialising a table into a cached Parquet dataset laid out for training, in the spirit of Petastorm's
// make_spark_converter: the source is read once (with its projection, filters and Delta version), written as
// part-*.parquet files whose count is a multiple of the world size and whose row groups have `row_group_rows` rows,
// and reused by later runs as long as the source and the options are unchanged.
//
//   ConverterOptions c;
//   c.cache_dir = "/scratch/lakerun-cache";
//   c.world_size = 8;
//   ConvertedDataset d = ConvertTable("/data/events", table_options, c);   // d.reused on the second run
//   Loader loader(OpenTable(d.path), loader_options);
//   ClearConverterCache(c.cache_dir, d.key);                             // or every entry: key ""
//   ConvertedDataset csv = ConvertFiles({FileSourceKind::kCsv, "/data/iris.csv"}, c);   // files, not tables
//
// Torch-free.
#pragma once

#include <cstdint>
#include <string>

#include "lakerun/base/file_system.h"
#include "lakerun/data/row_source.h"
#include "lakerun/data/table_source.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::data {

struct ConverterOptions {
  /// Parent folder of the cached datasets (one sub-folder per key).
  std::string cache_dir;
  /// The number of files is a multiple of this.
  int64_t world_size = 1;
  /// Rows per row group of the written files (the loader's I/O unit).
  int64_t row_group_rows = 8192;
  /// Upper bound on rows per file before the file count is rounded up to a multiple of world_size.
  int64_t rows_per_file = int64_t{1} << 20;
};

struct ConvertedDataset {
  std::string path;   ///< folder of part-*.parquet files, readable with OpenTable
  std::string key;    ///< hash of the source's content fingerprint and the options
  bool reused = false;
  uint64_t rows = 0;
  int64_t files = 0;
};

/// Converts `source` (whose content is summarised by `fingerprint`: anything that changes when the data changes)
/// unless cache_dir/<key> already holds a complete conversion. The entry appears atomically (written beside it,
/// then renamed), so a crash leaves no half-written entry that a later run would reuse.
ConvertedDataset Convert(const RowSource& source, const std::string& fingerprint, const ConverterOptions& options,
                         FileSystem& fs = UriFileSystem());

/// OpenTable + Convert; the fingerprint covers the data files (paths, sizes, modification times), the Delta
/// version, the projection and the filters.
ConvertedDataset ConvertTable(const std::string& table_path, const TableOptions& table,
                              const ConverterOptions& options, FileSystem& fs = UriFileSystem());

/// Files that are not tables yet: read as `lakerun table import` reads them (lakerun::importer).
enum class FileSourceKind {
  kMnist,        ///< a folder of {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]: image (binary), label (long)
  kImageFolder,  ///< DIR/<class>/<file>.jpg|jpeg|png: image (encoded bytes), label (long), class, file (string)
  kCsv,          ///< a CSV file with a header line: columns typed long, double or string
};

struct FileSource {
  FileSourceKind kind = FileSourceKind::kCsv;
  std::string path;
  /// MNIST only: "train" or "test" (the t10k files).
  std::string split = "train";
};

/// Converts IDX (MNIST), image-folder or CSV files into cache_dir/<key>, laid out, published and reused as Convert
/// does. The key hashes the kind, the path, every input file's name, size and modification time, and the options.
/// Throws what the importer throws for bad input (CorruptDataError naming the file and the line or record).
ConvertedDataset ConvertFiles(const FileSource& source, const ConverterOptions& options,
                              FileSystem& fs = UriFileSystem());

/// Removes the entry `key` of cache_dir, or every entry when `key` is empty.
void ClearConverterCache(const std::string& cache_dir, const std::string& key = "",
                         FileSystem& fs = UriFileSystem());

}  // namespace lakerun::data
