// The loader's first epoch over the Fashion-MNIST table in S3 (s3rver on loopback) against the emulator's own bulk
// GET throughput for the same bytes, measured with curl in the same run (docs/object-storage.md, "Speed").
//   1. The table (60k rows of 784-byte images and int64 labels, snappy, page CRCs) is written locally as `--files`
//      Parquet files of `--row-group-rows` row groups and uploaded to s3://bench/fmnist/.
//   2. Peer: one curl process GETs every file whole (SigV4-signed, keep-alive), sequentially and with --parallel;
//      the faster of the two counts.
//   3. lakerun: a Loader over s3://bench/fmnist (2 decoding threads, batches of 100, shuffled) runs one epoch; its
//      rate is the files' bytes over the epoch's wall time, decoding included.
// Each side runs `--tries` times and keeps its fastest. Prints the ratio (goal >= 0.8) and the GET requests of one
// epoch next to the number of pages they hold (the goal: far fewer GETs than pages).
//
//   objstore_s3_loader_bench [--files N] [--row-group-rows R] [--tries T]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/objstore/uri_file_system.h"
#include "lakerun_testing/child_process.h"
#include "lakerun_testing/emulators.h"
#include "lakerun_testing/temp_dir.h"
#include "mnist_table.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace pq = lakerun::parquet;

struct Options {
  int files = 4;
  int64_t row_group_rows = 5000;
  int tries = 3;
};

Options ParseFlags(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--files") o.files = value;
    else if (flag == "--row-group-rows") o.row_group_rows = value;
    else if (flag == "--tries") o.tries = value;
    else LAKERUN_THROW(ConfigError, "unknown flag ", flag);
  }
  LAKERUN_CHECK_AS(ConfigError, o.files > 0 && o.row_group_rows > 0 && o.tries > 0, "flags must be positive");
  return o;
}

double Seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Seconds for one curl process to GET every URL (each to /dev/null), `parallel` or one after another.
double CurlSeconds(const std::vector<std::string>& urls, bool parallel, const lakerun::testing::S3Emulator& s3,
                   const std::string& log) {
  std::vector<std::string> argv = {"/usr/bin/curl", "-sSf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user",
                                   s3.access_key_id() + ":" + s3.secret_access_key(),
                                   "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"};  // S3 requires it; curl omits it
  if (parallel) argv.insert(argv.end(), {"--parallel", "--parallel-max", "8"});
  for (const std::string& url : urls) argv.insert(argv.end(), {"-o", "/dev/null", url});
  const auto start = Clock::now();
  const lakerun::testing::ProgramRun run = lakerun::testing::RunProgram(argv, log, std::chrono::seconds(300));
  LAKERUN_CHECK_AS(IoError, run.exit_code == 0, "curl failed: ", run.output);
  return Seconds(start);
}

struct Epoch {
  double seconds = 0;
  uint64_t gets = 0;
  uint64_t samples = 0;
};

Epoch LoaderEpoch(const std::string& uri) {
  lakerun::data::TableOptions table;
  table.columns = {"image", "label"};
  lakerun::data::LoaderOptions options;
  options.batch_size = 100;
  options.num_threads = 2;
  const lakerun::ObjectStoreReads before = lakerun::ObjectStoreReadsSoFar();
  const auto start = Clock::now();
  lakerun::data::Loader loader(lakerun::data::OpenTable(uri, table), options);
  Epoch epoch;
  while (auto batch = loader.Next()) epoch.samples += static_cast<uint64_t>(batch->at("label").size(0));
  epoch.seconds = Seconds(start);
  epoch.gets = lakerun::ObjectStoreReadsSoFar().get_requests - before.get_requests;
  return epoch;
}

int Run(const Options& o) {
  lakerun::testing::TempDir dir;
  std::string why_not;
  auto s3 = lakerun::testing::StartS3Emulator(dir.Join("s3"), {"bench"}, &why_not);
  if (!s3) {
    std::printf("skipped: %s\n", why_not.c_str());
    return 0;
  }
  ::setenv("AWS_ENDPOINT_URL", s3->endpoint().c_str(), 1);
  ::setenv("AWS_ACCESS_KEY_ID", s3->access_key_id().c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", s3->secret_access_key().c_str(), 1);
  ::setenv("AWS_REGION", "us-east-1", 1);

  std::vector<uint8_t> images;
  std::vector<int64_t> labels;
  std::string origin;
  lakerun::bench::LoadImages(60000, &images, &labels, &origin);
  const int64_t rows_per_file = 60000 / o.files;
  lakerun::LocalFileSystem().CreateDirs(dir.Join("local"));
  std::vector<std::string> urls;
  uint64_t bytes = 0;
  int64_t pages = 0;
  for (int f = 0; f < o.files; ++f) {
    const std::string local = dir.Join("local/part-" + std::to_string(f) + ".parquet");
    const auto begin = static_cast<size_t>(f * rows_per_file);
    const std::vector<uint8_t> part_images(images.begin() + static_cast<std::ptrdiff_t>(begin * 784),
                                           images.begin() + static_cast<std::ptrdiff_t>((begin + rows_per_file) * 784));
    const std::vector<int64_t> part_labels(labels.begin() + static_cast<std::ptrdiff_t>(begin),
                                           labels.begin() + static_cast<std::ptrdiff_t>(begin + rows_per_file));
    lakerun::bench::WriteMnistTable(local, part_images, part_labels, o.row_group_rows);
    const auto file = pq::ParquetFile::Open(lakerun::LocalFileSystem(), local);
    for (int rg = 0; rg < file->num_row_groups(); ++rg) {
      for (int c = 0; c < file->schema().num_columns(); ++c) {
        pages += static_cast<int64_t>(file->ReadPageHeaders(rg, c).size());
      }
    }
    bytes += file->file_size();
    const std::string key = "fmnist/part-" + std::to_string(f) + ".parquet";
    lakerun::CopyFile(lakerun::LocalFileSystem(), local, lakerun::UriFileSystem(), "s3://bench/" + key);
    urls.push_back(s3->endpoint() + "/bench/" + key);
  }
  std::printf("table: %s, %d files, %.1f MB, %lld pages, row groups of %lld rows; s3rver at %s\n", origin.c_str(),
              o.files, static_cast<double>(bytes) / 1e6, static_cast<long long>(pages),
              static_cast<long long>(o.row_group_rows), s3->endpoint().c_str());

  double curl_best = 1e30;
  double loader_best = 1e30;
  double local_best = 1e30;
  Epoch last;
  for (int t = 0; t < o.tries; ++t) {
    const double sequential = CurlSeconds(urls, false, *s3, dir.Join("curl.log"));
    const double parallel = CurlSeconds(urls, true, *s3, dir.Join("curl.log"));
    curl_best = std::min({curl_best, sequential, parallel});
    last = LoaderEpoch("s3://bench/fmnist");
    LAKERUN_CHECK_AS(InternalError, last.samples == 60000, "the epoch gave ", last.samples, " samples");
    loader_best = std::min(loader_best, last.seconds);
    local_best = std::min(local_best, LoaderEpoch(dir.Join("local")).seconds);
    std::printf("try %d: curl %.3f s sequential, %.3f s parallel; loader epoch %.3f s, %llu GETs\n", t + 1, sequential,
                parallel, last.seconds, static_cast<unsigned long long>(last.gets));
  }
  const double curl_rate = static_cast<double>(bytes) / curl_best / 1e6;
  const double loader_rate = static_cast<double>(bytes) / loader_best / 1e6;
  std::printf("curl bulk GET (peer)          %8.1f MB/s\n", curl_rate);
  std::printf("lakerun loader first epoch    %8.1f MB/s  (decoded, shuffled, batched)\n", loader_rate);
  std::printf("ratio loader / curl           %8.2f   (goal >= 0.8)\n", loader_rate / curl_rate);
  std::printf("same loader, local files      %8.1f MB/s  (memory-mapped: the decoding bound of this machine)\n",
              static_cast<double>(bytes) / local_best / 1e6);
  std::printf("GET requests per epoch        %8llu   for %lld pages (%.3f per page)\n",
              static_cast<unsigned long long>(last.gets), static_cast<long long>(pages),
              static_cast<double>(last.gets) / static_cast<double>(pages));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(ParseFlags(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "objstore_s3_loader_bench: %s\n", e.what());
    return 1;
  }
}
