// `lakerun table convert`: materialise a source into the converter's cache (lakerun::data::Convert*), laid out for
// training on N ranks, and reuse it while the source and the options are unchanged.
//
//   lakerun table convert table PATH --cache-dir DIR [--columns a,b] [--version V] [--filter 'label<5']
//   lakerun table convert mnist SOURCE_DIR --cache-dir DIR [--split train|test]
//   lakerun table convert images DIR --cache-dir DIR
//   lakerun table convert csv FILE --cache-dir DIR
//   lakerun table convert clear --cache-dir DIR [--key KEY]
//
// Common options: --world-size N, --row-group-rows N, --rows-per-file N. Prints the entry's folder (readable with
// lakerun::data::OpenTable) and whether it was reused.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "lakerun/base/error.h"
#include "lakerun/data/converter.h"

namespace lakerun::cli {
namespace {

struct ConvertFlags {
  data::ConverterOptions options;

  void Add(CLI::App* app) {
    app->add_option("--cache-dir", options.cache_dir, "folder of the converter's cache (one sub-folder per entry)")
        ->required();
    app->add_option("--world-size", options.world_size, "the number of files is a multiple of N (the ranks)")
        ->check(CLI::PositiveNumber);
    app->add_option("--row-group-rows", options.row_group_rows, "rows per row group: the loader's unit of I/O")
        ->check(CLI::PositiveNumber);
    app->add_option("--rows-per-file", options.rows_per_file, "at most about this many rows per file")
        ->check(CLI::PositiveNumber);
  }
};

void Print(const data::ConvertedDataset& d) {
  std::printf("%s %s: %llu rows in %lld files (key %s)\n", d.reused ? "reused" : "converted", d.path.c_str(),
              static_cast<unsigned long long>(d.rows), static_cast<long long>(d.files), d.key.c_str());
}

int RunTableConvert(int argc, char** argv) {
  CLI::App app("convert a table or files into the converter's cache, laid out for training on N ranks", argv[0]);
  app.require_subcommand(1);

  ConvertFlags flags;  // bound in every converting subcommand; one of them parses
  std::string table_path;
  std::vector<std::string> columns, filters;
  std::optional<int64_t> version;
  CLI::App* table = app.add_subcommand("table", "a Parquet file, a folder of Parquet files or a Delta table");
  table->add_option("PATH", table_path, "the table")->required();
  table->add_option("--columns", columns, "columns to keep, in this order (default: all)")->delimiter(',');
  table->add_option("--filter", filters, "rows to convert, e.g. \"label < 5 and split = 'train'\" (= != < <= > >= "
                                         "IN, IS [NOT] NULL, AND, OR, NOT; strings in single quotes); repeated "
                                         "--filter options are AND-ed");
  table->add_option("--version", version, "Delta table version (default: the latest)");
  flags.Add(table);

  std::string mnist_source, split = "train";
  CLI::App* mnist = app.add_subcommand("mnist", "MNIST / Fashion-MNIST IDX files of one split");
  mnist->add_option("SOURCE_DIR", mnist_source, "directory with {train,t10k}-{images,labels}-*-ubyte[.gz]")
      ->required();
  mnist->add_option("--split", split, "train or test")->check(CLI::IsMember({"train", "test"}));
  flags.Add(mnist);

  std::string images_dir;
  CLI::App* images = app.add_subcommand("images", "a folder of JPEG/PNG images in class sub-folders");
  images->add_option("DIR", images_dir, "DIR/<class>/<image>")->required();
  flags.Add(images);

  std::string csv_file;
  CLI::App* csv = app.add_subcommand("csv", "a CSV file with a header line (types inferred: long, double, string)");
  csv->add_option("FILE", csv_file, "the CSV file")->required();
  flags.Add(csv);

  std::string clear_dir, clear_key;
  CLI::App* clear = app.add_subcommand("clear", "remove one entry of the cache, or all of them");
  clear->add_option("--cache-dir", clear_dir, "the converter's cache folder")->required();
  clear->add_option("--key", clear_key, "the entry to remove (default: every entry)");

  CLI11_PARSE(app, argc, argv);
  if (table->parsed()) {
    data::TableOptions t;
    t.columns = columns;
    std::vector<data::Filter> parsed;
    for (const std::string& f : filters) {
      try {
        parsed.push_back(data::Filter::Parse(f));
      } catch (const InvalidArgument& e) {
        LAKERUN_THROW(InvalidArgument, "--filter '", f, "': ", e.what());
      }
    }
    t.filter = data::Filter::And(std::move(parsed));
    t.delta_version = version;
    Print(data::ConvertTable(table_path, t, flags.options));
  } else if (mnist->parsed()) {
    Print(data::ConvertFiles({data::FileSourceKind::kMnist, mnist_source, split}, flags.options));
  } else if (images->parsed()) {
    Print(data::ConvertFiles({data::FileSourceKind::kImageFolder, images_dir}, flags.options));
  } else if (csv->parsed()) {
    Print(data::ConvertFiles({data::FileSourceKind::kCsv, csv_file}, flags.options));
  } else if (clear->parsed()) {
    data::ClearConverterCache(clear_dir, clear_key);
    std::printf("removed %s\n", clear_key.empty() ? ("every entry of " + clear_dir).c_str()
                                                  : (clear_dir + "/" + clear_key).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace lakerun::cli

LAKERUN_REGISTER_COMMAND("table convert", "convert a table, IDX, image-folder or CSV files into a cached training layout",
                         lakerun::cli::RunTableConvert);
