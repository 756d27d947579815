// `lakerun table import`: turn datasets into Delta tables (or Parquet directories) that lakerun trains from.
//
//   lakerun table import fashion-mnist OUT [--source DIR] [--split train|test|all]
//   lakerun table import mnist OUT --source DIR
//   lakerun table import images DIR OUT
//   lakerun table import csv FILE OUT
//
// Common options: --format delta|parquet, --files-multiple-of N (use the number of GPUs you will train on),
// --rows-per-file N, --row-group-rows N, --row-group-bytes N[K|M|G], --codec NAME, --layout bytes|fixed-list.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "lakerun/base/error.h"
#include "lakerun/format/import/import.h"

namespace lakerun::cli {
namespace {

int64_t ParseBytes(const std::string& text) {
  LAKERUN_CHECK(!text.empty(), "--row-group-bytes needs a value");
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    LAKERUN_THROW(InvalidArgument, "--row-group-bytes: cannot parse '", text, "' (e.g. 64M)");
  }
  const std::string unit = text.substr(used);
  double scale = 1;
  if (unit == "K" || unit == "KB" || unit == "KiB") scale = 1024;
  else if (unit == "M" || unit == "MB" || unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
  else LAKERUN_CHECK(unit.empty(), "--row-group-bytes: unknown unit '", unit, "' in '", text, "'");
  LAKERUN_CHECK(value > 0, "--row-group-bytes must be positive, got '", text, "'");
  return static_cast<int64_t>(value * scale);
}

void PrintResult(const importer::ImportResult& r) {
  std::printf("wrote %s: %lld rows in %d files (%.1f MB) in %.2f s (%.0f rows/s)\n", r.path.c_str(),
              static_cast<long long>(r.rows), r.files, static_cast<double>(r.bytes) / 1e6, r.seconds,
              r.seconds > 0 ? static_cast<double>(r.rows) / r.seconds : 0.0);
}

struct CommonFlags {
  std::string format = "delta";
  int files_multiple_of = 1;
  int64_t rows_per_file = 0;
  int64_t row_group_rows = 0;
  std::string row_group_bytes = "32M";
  std::string codec = "zstd";
  std::string layout = "bytes";
  bool no_progress = false;

  void Add(CLI::App* app) {
    app->add_option("--format", format, "output: a Delta table (delta) or a directory of Parquet files (parquet)")
        ->check(CLI::IsMember({"delta", "parquet"}));
    app->add_option("--files-multiple-of", files_multiple_of,
                    "the number of data files is a multiple of N; give the number of GPUs (ranks) you train on")
        ->check(CLI::PositiveNumber);
    app->add_option("--rows-per-file", rows_per_file, "at most this many rows per file (0: as few files as allowed)");
    app->add_option("--row-group-rows", row_group_rows, "rows per row group (overrides --row-group-bytes)");
    app->add_option("--row-group-bytes", row_group_bytes, "target uncompressed bytes per row group, e.g. 32M");
    app->add_option("--codec", codec, "Parquet codec: zstd (default), snappy, gzip, lz4_raw, brotli, uncompressed");
    app->add_option("--layout", layout, "MNIST images as 784-byte binaries (bytes) or a [28,28] list (fixed-list)")
        ->check(CLI::IsMember({"bytes", "fixed-list"}));
    app->add_flag("--no-progress", no_progress, "do not print progress on stderr");
  }

  importer::ImportOptions Options() const {
    importer::ImportOptions o;
    o.format = format == "parquet" ? importer::OutputFormat::kParquet : importer::OutputFormat::kDelta;
    o.files_multiple_of = files_multiple_of;
    o.rows_per_file = rows_per_file;
    o.row_group_rows = row_group_rows;
    o.row_group_bytes = ParseBytes(row_group_bytes);
    o.codec = parquet::ParseCodec(codec);
    o.image_layout = layout == "fixed-list" ? importer::ImageLayout::kFixedList : importer::ImageLayout::kBytes;
    o.progress = !no_progress;
    return o;
  }
};

int RunTableImport(int argc, char** argv) {
  CLI::App app("import a dataset as a Delta table (or Parquet files)", argv[0]);
  app.require_subcommand(1);
  CommonFlags flags;

  std::string mnist_out, mnist_source = "/usr/share/datasets/fashion-mnist", split = "all";
  CLI::App* fashion = app.add_subcommand("fashion-mnist", "Fashion-MNIST IDX files -> OUT/train and OUT/test");
  fashion->add_option("OUT", mnist_out, "output directory")->required();
  fashion->add_option("--source", mnist_source, "directory with the (gzipped) IDX files");
  fashion->add_option("--split", split, "train, test or all")->check(CLI::IsMember({"train", "test", "all"}));
  flags.Add(fashion);

  std::string digits_out, digits_source, digits_split = "all";
  CLI::App* mnist = app.add_subcommand("mnist", "MNIST IDX files -> OUT/train and OUT/test");
  mnist->add_option("OUT", digits_out, "output directory")->required();
  mnist->add_option("--source", digits_source, "directory with the (gzipped) IDX files")->required();
  mnist->add_option("--split", digits_split, "train, test or all")->check(CLI::IsMember({"train", "test", "all"}));
  flags.Add(mnist);

  std::string images_dir, images_out;
  CLI::App* images = app.add_subcommand("images", "a folder of JPEG/PNG images in class sub-folders");
  images->add_option("DIR", images_dir, "DIR/<class>/<image>")->required();
  images->add_option("OUT", images_out, "output table")->required();
  flags.Add(images);

  std::string csv_file, csv_out;
  CLI::App* csv = app.add_subcommand("csv", "a CSV file with a header line (types inferred: long, double, string)");
  csv->add_option("FILE", csv_file, "the CSV file")->required();
  csv->add_option("OUT", csv_out, "output table")->required();
  flags.Add(csv);

  CLI11_PARSE(app, argc, argv);
  const importer::ImportOptions options = flags.Options();
  if (fashion->parsed() || mnist->parsed()) {
    const bool is_fashion = fashion->parsed();
    const std::string& which = is_fashion ? split : digits_split;
    std::vector<std::string> splits =
        which == "all" ? std::vector<std::string>{"train", "test"} : std::vector<std::string>{which};
    for (const auto& r : importer::ImportMnist(is_fashion ? mnist_source : digits_source,
                                               is_fashion ? mnist_out : digits_out, options, splits)) {
      PrintResult(r);
    }
  } else if (images->parsed()) {
    PrintResult(importer::ImportImageFolder(images_dir, images_out, options));
  } else if (csv->parsed()) {
    PrintResult(importer::ImportCsv(csv_file, csv_out, options));
  }
  return 0;
}

}  // namespace
}  // namespace lakerun::cli

LAKERUN_REGISTER_COMMAND("table import", "import Fashion-MNIST/MNIST, image folders or CSV as a Delta table",
                         lakerun::cli::RunTableImport);
