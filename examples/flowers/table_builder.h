// The example's table: encoded images in one Delta table partitioned by `split` (train / val / test).
//
//   columns: image (binary: the JPEG or PNG bytes), label (long: class index), split (string, partition column)
//   table configuration: flowers.source ("fashion-mnist" or "images:<dir>"), flowers.classes (class names joined
//   by '/'), flowers.channels (1 for grey sources, 3 otherwise)
//
// Two sources:
//   - Fashion-MNIST's IDX files: each 28x28 grey image upscaled (bilinear) to image_size x image_size and encoded
//     as a grey JPEG; t10k is the test split, a seeded val_fraction of the training images the val split;
//   - a folder of images in class sub-folders (DIR/<class>/<name>.jpg|jpeg|png), the bytes stored unchanged; each
//     file goes to test / val / train by a seeded hash of its relative path (test_fraction, val_fraction).
// Rows are written in a seeded random order, so classes are interleaved even before the loader shuffles.
// The table appears atomically: it is written beside `path` and renamed into place.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace lakerun::examples::flowers {

struct TableBuildOptions {
  /// Folder of class sub-folders; empty: Fashion-MNIST from fashion_mnist_dir.
  std::string images_dir;
  std::string fashion_mnist_dir = "/usr/share/datasets/fashion-mnist";
  /// Fashion-MNIST: side of the upscaled images, and JPEG quality.
  int image_size = 64;
  int jpeg_quality = 90;
  /// At most this many images from each source split (Fashion-MNIST: train and t10k; a folder: in total).
  /// 0: all.
  int64_t limit = 0;
  double val_fraction = 0.1;
  /// Image folders only (Fashion-MNIST has its own test set).
  double test_fraction = 0.1;
  uint64_t seed = 0;
  /// Rows per row group (the loader's I/O and cache unit) and per data file.
  int64_t row_group_rows = 1024;
  int64_t rows_per_file = 8192;
  /// Where progress lines go; nullptr: none.
  std::ostream* progress = nullptr;
};

/// What a built table holds (read back from its Delta metadata).
struct TableInfo {
  std::string path;
  std::string source;
  std::vector<std::string> classes;
  int channels = 3;
  int64_t train_rows = 0;
  int64_t val_rows = 0;
  int64_t test_rows = 0;
};

/// The source string a table built with `options` records ("fashion-mnist" or "images:<dir>").
std::string SourceName(const TableBuildOptions& options);

/// Builds the table at `path` (which must not exist). Throws InvalidArgument naming the folder for an empty or
/// malformed image folder or a split left empty, and the importer's errors for bad IDX files.
TableInfo BuildTable(const std::string& path, const TableBuildOptions& options);

/// Reads the metadata of a table built by BuildTable; std::nullopt when `path` holds no Delta table. Throws
/// InvalidArgument when it is a Delta table this example did not build.
std::optional<TableInfo> ReadTableInfo(const std::string& path);

}  // namespace lakerun::examples::flowers
