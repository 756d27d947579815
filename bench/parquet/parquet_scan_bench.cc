// lakerun's side of the Parquet scan benchmark (bench/parquet/run_bench.mjs drives it and measures DuckDB).
//
//   parquet_scan_bench scan [--threads N] [--reps R] [--fresh] [--bytes dictionary|views|copied] [--mmap] FILE...
//       Decodes every column chunk of every row group of each file (ParquetFile::ReadColumnChunk into a ColumnData
//       and ReadScratch reused per thread, as a loader would; --fresh: a new ColumnData per chunk) and folds every
//       decoded value into a checksum, as DuckDB's `SELECT sum(col)...` does: sums of numbers, of string and blob
//       lengths, of list elements. Prints one JSON line per file: rows, decoded bytes (values x width + string/blob
//       payload, no offsets or levels), checksum, the best and median wall time of R runs after one warm-up, and
//       the least process CPU time (user + system, all threads) of those runs.
//       With N > 1, (row group, column) tasks run on a lakerun::ThreadPool of N-1 workers plus the calling thread.
//       --bytes picks the form of BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY values (ColumnReadOptions): `dictionary`
//       (default; views into the pages, and indices + dictionary for all-dictionary chunks, the form DuckDB's scan
//       keeps: string_t views into its page buffers and dictionary vectors), `views` (views, dictionaries expanded to
//       one view per value) or `copied` (every value copied into offsets + bytes). The string fold sums lengths:
//       per value from views or offsets, or per dictionary entry once and then per index. --mmap opens the files
//       with ReaderOptions::memory_map (chunks decode from the mapping instead of a pread copy).
//   parquet_scan_bench write DIR
//       Writes the lakerun-written benchmark files into DIR (2 M rows x 8 float32 + int64 label): PLAIN + snappy
//       (page v1), and BYTE_STREAM_SPLIT/DELTA_BINARY_PACKED + zstd (page v2).
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/base/thread_pool.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/writer.h"

namespace {

using namespace lakerun;           // NOLINT: benchmark program
using namespace lakerun::parquet;  // NOLINT

struct Fold {
  double checksum = 0;
  uint64_t decoded_bytes = 0;
};

/// Sums n values with 8 independent accumulators, so the fold runs at memory speed instead of one add's latency per
/// value (the compiler vectorises it); the checksum only has to agree with DuckDB's to ~1e-6.
template <typename T, typename Acc>
Acc Sum(const T* v, int64_t n) {
  Acc acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += static_cast<Acc>(v[i + k]);
  }
  for (; i < n; ++i) acc[0] += static_cast<Acc>(v[i]);
  Acc total = 0;
  for (Acc a : acc) total += a;
  return total;
}

/// Touches every decoded value of a chunk (the work DuckDB's sum()/strlen()/list_sum() does).
Fold FoldChunk(const ColumnData& d) {
  Fold f;
  const int64_t n = d.num_values();
  const auto un = static_cast<uint64_t>(n);
  switch (d.type()) {
    case PhysicalType::kBoolean:
      f.checksum = static_cast<double>(Sum<uint8_t, int64_t>(d.values<uint8_t>(), n));
      f.decoded_bytes = un;
      break;
    case PhysicalType::kInt32:
      f.checksum = static_cast<double>(Sum<int32_t, int64_t>(d.values<int32_t>(), n));
      f.decoded_bytes = un * 4;
      break;
    case PhysicalType::kInt64:
      f.checksum = static_cast<double>(Sum<int64_t, int64_t>(d.values<int64_t>(), n));
      f.decoded_bytes = un * 8;
      break;
    case PhysicalType::kFloat:
      f.checksum = Sum<float, double>(d.values<float>(), n);
      f.decoded_bytes = un * 4;
      break;
    case PhysicalType::kDouble:
      f.checksum = Sum<double, double>(d.values<double>(), n);
      f.decoded_bytes = un * 8;
      break;
    case PhysicalType::kByteArray: {
      // Per-value lengths, as strlen()/octet_length() look at every string.
      int64_t s = 0;
      if (d.has_dictionary()) {
        // Dictionary form: each entry's length once, then one lookup per value (DuckDB's dictionary vectors).
        const ColumnData& dict = d.dictionary();
        std::vector<int64_t> lengths(static_cast<size_t>(dict.num_values()));
        for (size_t k = 0; k < lengths.size(); ++k) lengths[k] = static_cast<int64_t>(dict.bytes_at(k).size());
        const uint32_t* idx = d.dictionary_indices();
        for (int64_t i = 0; i < n; ++i) s += lengths[idx[i]];
      } else if (d.has_views()) {
        const std::string_view* v = d.views();
        for (int64_t i = 0; i < n; ++i) s += static_cast<int64_t>(v[i].size());
      } else {
        const auto& off = d.offsets();
        for (int64_t i = 0; i < n; ++i) s += off[static_cast<size_t>(i) + 1] - off[static_cast<size_t>(i)];
      }
      f.checksum = static_cast<double>(s);
      f.decoded_bytes = static_cast<uint64_t>(s);
      break;
    }
    case PhysicalType::kInt96:
    case PhysicalType::kFixedLenByteArray:
      f.checksum = static_cast<double>(n) * d.value_width();
      f.decoded_bytes = un * static_cast<uint64_t>(d.value_width());
      break;
  }
  return f;
}

struct ScanResult {
  int64_t rows = 0;
  Fold fold;
};

/// Reused decode memory, one set per thread, kept across chunks and scans (as a training loader keeps it).
struct ThreadState {
  ColumnData data;
  ReadScratch scratch;
};
thread_local ThreadState tls_state;

ScanResult ScanOnce(const std::string& path, ThreadPool* pool, bool fresh, const ColumnReadOptions& form,
                    const ReaderOptions& reader) {
  auto file = ParquetFile::Open(LocalFileSystem(), path, reader);
  const int groups = file->num_row_groups();
  const int cols = file->schema().num_columns();
  const size_t tasks = static_cast<size_t>(groups) * static_cast<size_t>(cols);
  std::vector<Fold> folds(tasks);
  auto run = [&](size_t t) {
    const int rg = static_cast<int>(t / static_cast<size_t>(cols));
    const int col = static_cast<int>(t % static_cast<size_t>(cols));
    if (fresh) {
      folds[t] = FoldChunk(file->ReadColumnChunk(rg, col, form));
    } else {
      file->ReadColumnChunk(rg, col, &tls_state.data, &tls_state.scratch, form);
      folds[t] = FoldChunk(tls_state.data);
    }
  };
  if (pool) {
    pool->ParallelFor(tasks, run);
  } else {
    for (size_t t = 0; t < tasks; ++t) run(t);
  }
  ScanResult r;
  r.rows = file->num_rows();
  for (const Fold& f : folds) {
    r.fold.checksum += f.checksum;
    r.fold.decoded_bytes += f.decoded_bytes;
  }
  return r;
}

/// User + system CPU seconds of the whole process (all threads) so far. On a machine shared with other work, CPU
/// time per scan is a steadier measure of per-core cost than wall time.
double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int Scan(int argc, char** argv) {
  int threads = 1, reps = 7;
  bool fresh = false;
  std::string bytes = "dictionary";
  ReaderOptions reader;
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--fresh") fresh = true;
    else if (a == "--bytes" && i + 1 < argc) bytes = argv[++i];
    else if (a == "--mmap") reader.memory_map = true;
    else files.push_back(a);
  }
  LAKERUN_CHECK(threads >= 1 && reps >= 1, "--threads and --reps must be positive");
  LAKERUN_CHECK(bytes == "copied" || bytes == "views" || bytes == "dictionary",
                "--bytes must be copied, views or dictionary, got '", bytes, "'");
  ColumnReadOptions form;
  form.byte_views = bytes != "copied";
  form.dictionary = bytes == "dictionary";
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(static_cast<size_t>(threads - 1), "scan");
  for (const std::string& path : files) {
    ScanResult result = ScanOnce(path, pool.get(), fresh, form, reader);  // warm-up (page cache, allocator)
    std::vector<double> times, cpu;
    for (int r = 0; r < reps; ++r) {
      const double c0 = ProcessCpuSeconds();
      const auto t0 = std::chrono::steady_clock::now();
      result = ScanOnce(path, pool.get(), fresh, form, reader);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      cpu.push_back(ProcessCpuSeconds() - c0);
    }
    std::sort(times.begin(), times.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("{\"file\":\"%s\",\"bytes\":\"%s\",\"mmap\":%s,\"threads\":%d,\"rows\":%lld,\"decoded_bytes\":%llu,"
                "\"checksum\":%.17g,\"best_s\":%.6f,\"median_s\":%.6f,\"cpu_s\":%.6f}\n",
                path.c_str(), bytes.c_str(), reader.memory_map ? "true" : "false", threads, static_cast<long long>(result.rows),
                static_cast<unsigned long long>(result.fold.decoded_bytes), result.fold.checksum, times.front(),
                times[times.size() / 2], cpu.front());
    std::fflush(stdout);
  }
  return 0;
}

uint32_t XorShift(uint32_t& x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}

int Write(const std::string& dir) {
  constexpr int64_t kRows = 2000000;
  constexpr int64_t kGroup = 122880;  // DuckDB's default row group, so both writers' files have the same shape
  std::vector<SchemaNode> fields;
  for (int c = 0; c < 8; ++c) fields.push_back(Leaf("f" + std::to_string(c), PhysicalType::kFloat));
  fields.push_back(Leaf("label", PhysicalType::kInt64));
  const Schema schema = Schema::FromFields(fields);

  struct Variant {
    const char* name;
    WriterOptions options;
  };
  WriterOptions plain;
  plain.codec = Codec::kSnappy;
  plain.dictionary = false;
  WriterOptions v2;
  v2.codec = Codec::kZstd;
  v2.page_version = 2;
  v2.dictionary = false;
  for (int c = 0; c < 8; ++c) v2.column_encoding["f" + std::to_string(c)] = Encoding::kByteStreamSplit;
  v2.column_encoding["label"] = Encoding::kDeltaBinaryPacked;
  for (const Variant& v : {Variant{"lakerun_dense_plain_snappy.parquet", plain},
                           Variant{"lakerun_dense_v2_bss_zstd.parquet", v2}}) {
    ParquetWriter writer(LocalFileSystem(), JoinPath(dir, v.name), schema, v.options);
    uint32_t seed = 12345;
    for (int64_t start = 0; start < kRows; start += kGroup) {
      const int64_t n = std::min(kGroup, kRows - start);
      std::vector<ColumnData> cols;
      for (int c = 0; c < 8; ++c) {
        std::vector<float> f(static_cast<size_t>(n));
        for (auto& x : f) x = static_cast<float>(XorShift(seed)) / 4294967296.0f;
        cols.push_back(ColumnData::Floats(f));
      }
      std::vector<int64_t> label(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) label[static_cast<size_t>(i)] = (start + i) % 1000;
      cols.push_back(ColumnData::Int64s(label));
      writer.WriteRowGroup(cols);
    }
    writer.Close();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::strcmp(argv[1], "scan") == 0) return Scan(argc, argv);
    if (argc == 3 && std::strcmp(argv[1], "write") == 0) return Write(argv[2]);
    std::fprintf(stderr,
                 "usage: parquet_scan_bench scan [--threads N] [--reps R] [--fresh] [--bytes dictionary|views|copied] "
                 "[--mmap] FILE... | write DIR\n");
    return 2;
  } catch (const lakerun::Error& e) {
    std::fprintf(stderr, "parquet_scan_bench: %s\n", e.what());
    return 1;
  }
}
