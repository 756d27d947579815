#include "table_setup.h"

#include <unistd.h>

#include <chrono>
#include <exception>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/import/import.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::examples {
namespace {

const char* const kSplits[] = {"train", "test"};

// Imports `split` into a temporary sibling of its final directory, then renames it into place.
void ImportSplit(const TableSetupOptions& options, const std::string& split) {
  FileSystem& fs = UriFileSystem();
  const std::string staging = JoinPath(options.table, StrCat(".import-", split, "-", ::getpid()));
  fs.RemoveAll(staging);
  importer::ImportOptions import;  // the defaults of `lakerun table import fashion-mnist`
  importer::ImportMnist(options.idx_dir, staging, import, {split});
  const std::string final_dir = JoinPath(options.table, split);
  try {
    fs.Rename(JoinPath(staging, split), final_dir);
  } catch (const Error&) {
    if (!SplitPresent(options.table, split)) throw;  // nobody else imported it meanwhile: a real failure
  }
  fs.RemoveAll(staging);
}

}  // namespace

bool SplitPresent(const std::string& table, const std::string& split) {
  const auto info = UriFileSystem().Stat(JoinPath(JoinPath(table, split), "_delta_log"));
  return info.has_value() && info->is_directory;
}

TableSetupResult EnsureFashionMnistTables(const TableSetupOptions& options, train::RankSync& sync) {
  TableSetupResult result;
  std::exception_ptr failure;
  if (sync.rank() == 0) {
    try {
      std::vector<std::string> missing;
      for (const char* split : kSplits) {
        if (!SplitPresent(options.table, split)) missing.push_back(split);
      }
      if (!missing.empty()) {
        const std::string images = JoinPath(options.idx_dir, "train-images-idx3-ubyte.gz");
        const std::string plain = JoinPath(options.idx_dir, "train-images-idx3-ubyte");
        LAKERUN_CHECK_AS(IoError, UriFileSystem().Exists(images) || UriFileSystem().Exists(plain),
                         "no Fashion-MNIST table at ", options.table, " and no IDX files to import it from in ",
                         options.idx_dir, " (", images, " is missing): apt-get install dataset-fashion-mnist, or "
                         "pass --idx-dir, or import the table with `lakerun table import fashion-mnist ",
                         options.table, "`");
        UriFileSystem().CreateDirs(options.table);
        const auto start = std::chrono::steady_clock::now();
        for (const std::string& split : missing) ImportSplit(options, split);
        result.imported = missing;
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    } catch (...) {
      failure = std::current_exception();
    }
  }
  // Every rank takes part, whatever rank 0's outcome, so nobody waits for a rank that already gave up.
  const bool ok = sync.All(failure == nullptr);
  if (failure) std::rethrow_exception(failure);
  LAKERUN_CHECK_AS(DistError, ok, "rank ", sync.rank(), ": rank 0 failed to import the Fashion-MNIST table at ",
                   options.table, " (its error is in rank 0's output)");
  return result;
}

}  // namespace lakerun::examples
