// The cost of checking page CRCs, each time against the same read with checking off, in one run (docs/data.md,
// "Page checksums"). Each round runs on and off alternately `--tries` times each and keeps each side's fastest (a
// shared machine's interruptions only ever add time); ratios are medians over the rounds of verified / unverified
// seconds (1.00 = free, 1.05 = 5% slower), in wall time and in the process's CPU time.
//   1. Parquet scan: every column chunk of every row group decoded into a reused ColumnData (one thread) with
//      ReaderOptions::verify_crc on vs off, for the Fashion-MNIST table compressed with snappy (as the loader benchmark
//      writes it; images hardly compress, so the CRC covers nearly every decoded byte) and stored uncompressed (the
//      worst case: decoding is a copy), values copied (every stored byte is touched with checking off too); and the
//      uncompressed table decoded as views of the mapped file, where checking off reads almost nothing, so the ratio
//      is the check's whole pass against a walk of the length prefixes.
//   2. The loader's first epoch (every row group decoded once, batches of 100, shuffled) over both tables, mapped as
//      the loader maps a Delta table's files and already in the page cache, on 1 and 2 decoding threads, with
//      TableOptions::verify_page_checksums on vs off.
//   3. The same first epoch (2 decoding threads) with the table's file dropped from the page cache before each run
//      (posix_fadvise DONTNEED; a new source maps it), as a job's first epoch over a table it has not read lately.
//
//   data_page_crc_bench [--rows N] [--rounds R] [--tries T]
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "lakerun/base/crc32.h"
#include "lakerun/base/file_system.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/parquet/file_reader.h"
#include "mnist_table.h"

namespace {

namespace pq = lakerun::parquet;
using Clock = std::chrono::steady_clock;

struct Cost {
  double wall_s = 0;
  double cpu_s = 0;
};

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

template <typename F>
Cost Measure(F&& run) {
  const double cpu = ProcessCpuSeconds();
  const auto start = Clock::now();
  run();
  return {std::chrono::duration<double>(Clock::now() - start).count(), ProcessCpuSeconds() - cpu};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Decodes every column chunk of `path`: values copied out of the pages (touching one value of each), or, with
// `views`, as views of the mapped file.
Cost Scan(const std::string& path, bool verify, bool views) {
  pq::ReaderOptions reader;
  reader.verify_crc = verify;
  reader.memory_map = views;
  pq::ColumnReadOptions form;
  form.byte_views = views;
  uint64_t sink = 0;
  const Cost cost = Measure([&] {
    auto file = pq::ParquetFile::Open(lakerun::LocalFileSystem(), path, reader);
    pq::ColumnData data;
    pq::ReadScratch scratch;
    for (int rg = 0; rg < file->num_row_groups(); ++rg) {
      for (int c = 0; c < file->schema().num_columns(); ++c) {
        file->ReadColumnChunk(rg, c, &data, &scratch, form);
        if (!views) sink += data.value_buffer().data()[data.value_buffer().size() / 2];
        if (views) sink += data.num_values();
      }
    }
  });
  if (sink == 1) std::printf(" ");
  return cost;
}

// The loader's first epoch over a source (a new loader each time: every row group is decoded once).
Cost FirstEpoch(const std::shared_ptr<lakerun::data::RowSource>& source, size_t threads) {
  lakerun::data::LoaderOptions o;
  o.batch_size = 100;
  o.num_threads = threads;
  o.seed = 7;
  lakerun::data::Loader loader(source, o);
  loader.SetEpoch(0);
  int64_t seen = 0;
  const Cost cost = Measure([&] {
    while (auto batch = loader.Next()) seen += batch->size();
  });
  if (seen == 0) std::printf("empty epoch\n");
  return cost;
}

// Drops `path`'s pages from the page cache (nothing may map it), so that the next read comes from the disk. Returns
// false when the kernel refuses.
bool EvictFromPageCache(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = fdatasync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  close(fd);
  return ok;
}

// The first epoch of a table whose file is not in the page cache: a source opened after the eviction (its mapping
// faults every page in from the disk), as a job's first epoch over a table it has not read before.
Cost ColdFirstEpoch(const std::string& path, const lakerun::data::TableOptions& options, size_t threads) {
  if (!EvictFromPageCache(path)) std::printf("(could not evict %s from the page cache)\n", path.c_str());
  return FirstEpoch(lakerun::data::OpenTable(path, options), threads);
}

struct Ratios {
  std::vector<double> wall, cpu;
  std::vector<double> off_wall;  // seconds of the unverified runs
  void Add(const Cost& on, const Cost& off) {
    wall.push_back(on.wall_s / off.wall_s);
    cpu.push_back(on.cpu_s / off.cpu_s);
    off_wall.push_back(off.wall_s);
  }
  void Print(const char* what) const {
    std::printf("    %-44s %.3fx wall, %.3fx CPU  (unverified: %.1f ms)\n", what, Median(wall), Median(cpu),
                Median(off_wall) * 1e3);
  }
};

double Crc32GbPerSecond() {
  const std::string bytes(64 << 20, 'x');
  uint32_t crc = 0;
  const Cost c = Measure([&] {
    for (int i = 0; i < 4; ++i) crc = lakerun::Crc32(bytes, crc);
  });
  if (crc == 1) std::printf(" ");
  return 4.0 * static_cast<double>(bytes.size()) / c.wall_s / 1e9;
}

// Runs `run(verify)` `tries` times each way, alternating (verified first when `verified_first`), and adds each
// side's fastest to `ratios` (a shared machine's interruptions only ever add time).
template <typename Run>
void MeasurePair(Ratios* ratios, int tries, bool verified_first, Run&& run) {
  Cost best[2] = {{1e9, 1e9}, {1e9, 1e9}};  // [verified]
  for (int t = 0; t < 2 * tries; ++t) {
    const bool verify = (t % 2 == 0) == verified_first;
    const Cost c = run(verify);
    best[verify].wall_s = std::min(best[verify].wall_s, c.wall_s);
    best[verify].cpu_s = std::min(best[verify].cpu_s, c.cpu_s);
  }
  ratios->Add(best[1], best[0]);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 60000;
  int rounds = 11, tries = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rows" && i + 1 < argc) rows = std::stoll(argv[++i]);
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--tries" && i + 1 < argc) tries = std::max(1, std::stoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--rows N] [--rounds R] [--tries T]\n", argv[0]);
      return 2;
    }
  }
  at::set_num_threads(1);
  char tmpl[] = "/tmp/lakerun-crc-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::vector<uint8_t> images;
  std::vector<int64_t> labels;
  std::string origin;
  lakerun::bench::LoadImages(rows, &images, &labels, &origin);
  const std::string snappy = dir + "/snappy.parquet", plain = dir + "/uncompressed.parquet";
  lakerun::bench::WriteMnistTable(snappy, images, labels, 10000, pq::Codec::kSnappy);
  lakerun::bench::WriteMnistTable(plain, images, labels, 10000, pq::Codec::kUncompressed);
  std::printf("table: %lld rows x (784-byte image + int64 label) from %s, row groups of 10000, page CRCs written\n",
              static_cast<long long>(rows), origin.c_str());
  std::printf("Crc32: %.1f GB/s over 64 MiB (%s)\n", Crc32GbPerSecond(), lakerun::Crc32Implementation());

  lakerun::data::TableOptions checked, unchecked;
  checked.memory_map = unchecked.memory_map = true;
  unchecked.verify_page_checksums = false;
  Ratios scan[2], epoch[2][2], views_scan, cold[2];  // [table], [table][threads - 1]
  {
    // Per table: the source with checking on, then off (mapped for the whole section).
    const std::vector<std::shared_ptr<lakerun::data::RowSource>> sources[2] = {
        {lakerun::data::OpenTable(snappy, checked), lakerun::data::OpenTable(snappy, unchecked)},
        {lakerun::data::OpenTable(plain, checked), lakerun::data::OpenTable(plain, unchecked)}};
    for (int round = 0; round < rounds; ++round) {
      const bool on_first = round % 2 == 0;  // which goes first alternates too
      for (int t = 0; t < 2; ++t) {
        const std::string& path = t == 0 ? snappy : plain;
        MeasurePair(&scan[t], tries, on_first, [&](bool verify) { return Scan(path, verify, false); });
        if (t == 1) MeasurePair(&views_scan, tries, on_first, [&](bool verify) { return Scan(path, verify, true); });
        for (size_t threads : {1, 2}) {
          MeasurePair(&epoch[t][threads - 1], tries, on_first,
                      [&](bool verify) { return FirstEpoch(sources[t][verify ? 0 : 1], threads); });
        }
      }
    }
  }
  // Nothing maps the files any more, so their pages can leave the page cache.
  for (int round = 0; round < rounds; ++round) {
    for (int t = 0; t < 2; ++t) {
      MeasurePair(&cold[t], tries, round % 2 == 0, [&](bool verify) {
        return ColdFirstEpoch(t == 0 ? snappy : plain, verify ? checked : unchecked, 2);
      });
    }
  }
  std::printf("\nverified / unverified, medians of %d rounds (each side's fastest of %d alternating tries):\n", rounds,
              tries);
  std::printf("[1] Parquet scan, 1 thread, values copied\n");
  scan[0].Print("snappy table");
  scan[1].Print("uncompressed table (worst case)");
  views_scan.Print("uncompressed table, views of the mapped file");
  std::printf("[2] loader first epoch (mapped files)\n");
  epoch[0][0].Print("snappy table, 1 decoding thread");
  epoch[0][1].Print("snappy table, 2 decoding threads");
  epoch[1][0].Print("uncompressed table, 1 decoding thread");
  epoch[1][1].Print("uncompressed table, 2 decoding threads");
  std::printf("[3] loader first epoch, the table's file evicted from the page cache first, 2 decoding threads\n");
  cold[0].Print("snappy table");
  cold[1].Print("uncompressed table");
  lakerun::LocalFileSystem().RemoveAll(dir);
  return 0;
}
