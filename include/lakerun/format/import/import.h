// Dataset importers: turn files users already have into Delta tables (or plain Parquet directories) that lakerun
// trains from. `lakerun table import` (src/cli/table_import_command.cc) is the command-line front end.
//
//   ImportOptions opts;
//   opts.files_multiple_of = 8;                      // e.g. 8 GPUs: 8, 16, ... files
//   auto results = ImportMnist("/usr/share/datasets/fashion-mnist", "/data/fmnist", opts);  // train + test tables
//   ImportImageFolder("/data/flowers", "/data/flowers_table", opts);
//   ImportCsv("/data/iris.csv", "/data/iris_table", opts);
//
// Every importer validates its input and throws CorruptDataError (or InvalidArgument) naming the file, and the
// line or record at fault.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/types.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::importer {

enum class OutputFormat { kDelta, kParquet };

/// How MNIST-style images are stored.
enum class ImageLayout {
  /// One BYTE_ARRAY of rows*cols bytes per image (default: cheapest to read into a uint8 tensor).
  kBytes,
  /// A fixed-size list of rows*cols integers with the shape [rows, cols] in the Parquet key-value metadata
  /// (parquet::ShapeMetadataKey("image")); elements are UINT_8 in Parquet output, Delta type short in Delta output.
  kFixedList,
};

struct ImportOptions {
  OutputFormat format = OutputFormat::kDelta;
  parquet::Codec codec = parquet::Codec::kZstd;
  /// Row-group size: rows, or (when 0) bytes of uncompressed data.
  int64_t row_group_rows = 0;
  int64_t row_group_bytes = 32ll << 20;
  /// Rows per data file before rounding (0: as few files as files_multiple_of allows).
  int64_t rows_per_file = 0;
  /// The number of data files is a multiple of this (give the expected world size: at least one file per GPU).
  int files_multiple_of = 1;
  ImageLayout image_layout = ImageLayout::kBytes;
  /// Progress: a bar when stderr is a terminal, plain lines otherwise; off when false.
  bool progress = false;
  FileSystem* fs = nullptr;  ///< default UriFileSystem(): local paths and object-store URIs
};

struct ImportResult {
  std::string path;  ///< the table (or Parquet directory) written
  int64_t rows = 0;
  int files = 0;
  int64_t bytes = 0;  ///< data bytes written
  double seconds = 0;  ///< wall time of the whole import, reading the input included
};

/// One IDX file (big-endian; magic 0x00000800 | type << 8 | dims), gzipped or not.
struct IdxArray {
  std::vector<int64_t> dims;
  std::string data;  ///< unsigned bytes, row-major
};
/// Reads an IDX file of unsigned bytes (type 0x08) and validates its magic, dimensions and size.
IdxArray ReadIdx(const std::string& path, FileSystem& fs = UriFileSystem());

/// MNIST / Fashion-MNIST: `source_dir` holds {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]. Writes
/// `out`/train and `out`/test with columns image and label (long). `splits` selects "train", "test" or both.
std::vector<ImportResult> ImportMnist(const std::string& source_dir, const std::string& out,
                                      const ImportOptions& options,
                                      const std::vector<std::string>& splits = {"train", "test"});

/// A folder of images in class sub-folders (DIR/<class>/<file>.jpg|jpeg|png): columns image (the encoded bytes),
/// label (long, index in sorted class order), class (string), file (string, relative path).
ImportResult ImportImageFolder(const std::string& dir, const std::string& out, const ImportOptions& options);

/// A CSV file with a header line: each column typed long, double or string by inference over all rows (an empty
/// field is null); RFC 4180 quoting.
ImportResult ImportCsv(const std::string& file, const std::string& out, const ImportOptions& options);

}  // namespace lakerun::importer
