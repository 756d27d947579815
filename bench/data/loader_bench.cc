// Loader throughput and memory, each against a peer measured in the same run:
//   1. Fashion-MNIST table (60k x 784-byte image + label) to uint8 tensors on 1 and 2 threads, vs the raw Parquet
//      scan (lakerun::parquet decoding every column chunk) of the same file;
//   2. vs PyTorch's DataLoader (TensorDataset in memory, batch 100, shuffle) under /usr/bin/python3, one of its
//      epochs in each round of section 1;
//   3. JPEG decode + resize + crop + flip to [B, 3, H, W] vs raw libjpeg-turbo decode of the same bytes;
//   4. peak RSS over 5 epochs vs after epoch 1.
//
//   data_loader_bench [--rows N] [--epochs E] [--jpegs N] [--no-python] [--only 1..10] [--rounds R]
#include <jpeglib.h>
#include <dirent.h>
#include <sys/resource.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "lakerun/base/file_system.h"
#include "lakerun/base/thread_pool.h"
#include "lakerun/data/image_encode.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"

#include "epoch_peer.h"
#include "mnist_table.h"

namespace {

namespace pq = lakerun::parquet;
using Clock = std::chrono::steady_clock;
using lakerun::data::Loader;
using lakerun::data::LoaderOptions;
using lakerun::bench::LoadImages;
using lakerun::bench::WriteMnistTable;

// CPU milliseconds the loader's decoding threads ("lakerun-data-N") have run so far (/proc/self/task/*/schedstat,
// nanosecond resolution).
double DecodingThreadsCpuMs() {
  double ms = 0;
  DIR* tasks = opendir("/proc/self/task");
  while (dirent* task = tasks != nullptr ? readdir(tasks) : nullptr) {
    if (task->d_name[0] == '.') continue;
    const std::string dir = std::string("/proc/self/task/") + task->d_name;
    std::string name;
    std::getline(std::ifstream(dir + "/comm"), name);
    if (name.rfind("lakerun-data", 0) != 0) continue;
    double run_ns = 0;
    std::ifstream(dir + "/schedstat") >> run_ns;
    ms += run_ns * 1e-6;
  }
  if (tasks != nullptr) closedir(tasks);
  return ms;
}

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// CPU seconds of the whole process (every thread, user + system): a machine shared with other work stretches wall
// time far more than CPU time.
double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// Rows per second of decoding every column chunk of `path` (threads: row groups in parallel). `views`: byte values
// as views into the decompressed pages instead of copies; `mapped`: decoded from the file mapped into memory instead
// of read chunk by chunk (views + mapped is the loader's form with the default TableOptions).
double RawScan(const std::string& path, size_t threads, bool views = false, bool mapped = false) {
  pq::ReaderOptions reader;
  reader.memory_map = mapped;
  auto file = pq::ParquetFile::Open(lakerun::LocalFileSystem(), path, reader);
  lakerun::ThreadPool pool(threads > 1 ? threads - 1 : 0, "raw-scan");
  std::vector<uint64_t> sink(file->num_row_groups());
  pq::ColumnReadOptions read;
  read.byte_views = views;
  const auto start = Clock::now();
  pool.ParallelFor(file->num_row_groups(), [&](size_t rg) {
    for (int c = 0; c < file->schema().num_columns(); ++c) {
      const pq::ColumnData data = file->ReadColumnChunk(static_cast<int>(rg), c, read);
      sink[rg] += data.has_views() ? static_cast<uint8_t>(data.views()[data.num_values() / 2][0])
                                   : data.value_buffer().data()[data.value_buffer().size() / 2];
    }
  });
  const double s = Seconds(start);
  return static_cast<double>(file->num_rows()) / s;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Minor page faults of the process so far (first touches of fresh memory).
int64_t MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

struct EpochRates {
  double cold = 0;  // first epoch: every row group decoded once
  double warm = 0;  // best later epoch (row groups served from the cache)
  double cold_first_batch_ms = 0;  // the first epoch's wait for its first batch
  double cold_ms = 0;
  double cold_decoding_cpu_ms = 0;  // CPU time of the decoding threads during the first epoch
  int64_t cold_faults = 0;          // minor page faults of the process during the first epoch (fresh memory touched)
  size_t units = 0;                 // units of the source the loader read (Loader::source())
};

EpochRates LoaderRates(const std::shared_ptr<lakerun::data::RowSource>& source, LoaderOptions options, int epochs) {
  Loader loader(source, options);
  EpochRates rates;
  rates.units = loader.source().num_units();
  for (int e = 0; e < epochs; ++e) {
    loader.SetEpoch(e);
    int64_t seen = 0, checksum = 0;
    const double decoding_cpu = DecodingThreadsCpuMs();
    const int64_t faults = MinorFaults();
    const auto start = Clock::now();
    double first_batch = -1;
    while (auto batch = loader.Next()) {
      if (first_batch < 0) first_batch = Seconds(start);
      seen += batch->size();
      checksum += batch->at("label").data_ptr<int64_t>()[0];
    }
    const double rate = seen / Seconds(start);
    if (e == 0) {
      rates.cold = rate;
      rates.cold_first_batch_ms = first_batch * 1e3;
      rates.cold_ms = Seconds(start) * 1e3;
      rates.cold_decoding_cpu_ms = DecodingThreadsCpuMs() - decoding_cpu;
      rates.cold_faults = MinorFaults() - faults;
    } else {
      rates.warm = std::max(rates.warm, rate);
    }
    if (checksum == -1) std::printf("impossible\n");
  }
  return rates;
}

// CPU seconds of the calling thread.
double ThreadCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int64_t PeakRssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::string EncodeJpeg(const uint8_t* rgb, int h, int w) {
  return lakerun::data::EncodeJpeg(rgb, h, w, /*channels=*/3, /*quality=*/90);
}

// Raw libjpeg-turbo: decode every image to RGB at full size, one thread. Images per second.
double RawJpegDecode(const std::vector<std::string>& jpegs) {
  std::vector<uint8_t> pixels;
  uint64_t sink = 0;
  const auto start = Clock::now();
  for (const std::string& bytes : jpegs) {
    jpeg_decompress_struct cinfo;
    jpeg_error_mgr err;
    cinfo.err = jpeg_std_error(&err);
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&cinfo);
    pixels.resize(static_cast<size_t>(cinfo.output_width) * cinfo.output_height * 3);
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = pixels.data() + static_cast<size_t>(cinfo.output_scanline) * cinfo.output_width * 3;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    sink += pixels[pixels.size() / 2];
  }
  const double s = Seconds(start);
  if (sink == 1) std::printf(" ");
  return jpegs.size() / s;
}

// PyTorch's DataLoader over `images` and `labels`, written to `dir` for it, under LAKERUN_PYTHON or
// /usr/bin/python3 (Debian's python3-torch).
std::unique_ptr<lakerun::bench::EpochPeer> StartTorchDataLoaderPeer(const std::string& dir,
                                                                    const std::vector<uint8_t>& images,
                                                                    const std::vector<int64_t>& labels, int64_t rows) {
  const std::string img_path = dir + "/images.u8", lab_path = dir + "/labels.i64";
  std::ofstream(img_path, std::ios::binary).write(reinterpret_cast<const char*>(images.data()), images.size());
  std::ofstream(lab_path, std::ios::binary)
      .write(reinterpret_cast<const char*>(labels.data()), labels.size() * sizeof(int64_t));
  const char* env_python = std::getenv("LAKERUN_PYTHON");
  return std::make_unique<lakerun::bench::EpochPeer>(
      std::vector<std::string>{env_python ? env_python : "/usr/bin/python3",
                               std::string(LAKERUN_BENCH_DIR) + "/torch_dataloader_peer.py", img_path, lab_path,
                               std::to_string(rows)},
      /*timeout_s=*/600);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 60000, jpeg_count = 3000;
  int epochs = 5;
  bool python = true;
  int only = 0;  // run one section (for profiling); 0 = all
  int rounds = 11;  // alternating rounds per section: their medians move far less than those of 5 on a shared VM
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--rows" && i + 1 < argc) rows = std::stoll(argv[++i]);
    else if (arg == "--epochs" && i + 1 < argc) epochs = std::stoi(argv[++i]);
    else if (arg == "--jpegs" && i + 1 < argc) jpeg_count = std::stoll(argv[++i]);
    else if (arg == "--no-python") python = false;
    else if (arg == "--only" && i + 1 < argc) only = std::stoi(argv[++i]);
    else if (arg == "--rounds" && i + 1 < argc) rounds = std::max(1, std::stoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--rows N] [--epochs E] [--jpegs N] [--no-python] [--only SECTION] [--rounds R]\n",
                   argv[0]);
      return 2;
    }
  }
  at::set_num_threads(1);
  char tmpl[] = "/tmp/lakerun-data-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string table = dir + "/fashion_mnist.parquet";

  std::vector<uint8_t> images;
  std::vector<int64_t> labels;
  std::string origin;
  LoadImages(rows, &images, &labels, &origin);
  WriteMnistTable(table, images, labels, 10000);
  std::printf("table: %lld rows x (784-byte image + int64 label) from %s, snappy, row groups of 10000\n",
              static_cast<long long>(rows), origin.c_str());

  // 1. Loader vs raw scan. Rounds alternate peer and loader so both see the same machine load; each round gives a
  // ratio, and the medians of rates and of per-round ratios are printed (the machine may be shared).
  // Mapped, as a Delta table's data files are by default (a loose Parquet file is read with pread unless asked).
  lakerun::data::TableOptions mapped_options;
  mapped_options.memory_map = true;
  auto source = lakerun::data::OpenTable(table, mapped_options);
  struct Series {
    std::vector<double> raw, raw_views, raw_mapped, cold, warm, cold_ratio, cold_ratio_views, cold_ratio_mapped,
        warm_ratio, cold_faults, torch_cold_ratio, torch_warm_ratio;  // torch_*: against PyTorch's DataLoader (2.)
  };
  Series series[2];
  const bool s1 = only == 0 || only == 1 || only == 2;
  // 2. PyTorch's DataLoader over the same rows in memory, one of its epochs per round, between the raw scans and
  // the loader's epochs of section 1, so its ratios are medians of per-round ratios too.
  std::unique_ptr<lakerun::bench::EpochPeer> torch_peer;
  std::vector<double> torch_rates;
  if (python && (only == 0 || only == 2)) torch_peer = StartTorchDataLoaderPeer(dir, images, labels, rows);
  for (int round = 0; s1 && round < rounds; ++round) {
    const double torch_rate = torch_peer && torch_peer->ok() ? torch_peer->Epoch(600) : 0;
    if (torch_rate > 0) torch_rates.push_back(torch_rate);
    for (size_t threads : {1, 2}) {
      Series& ser = series[threads - 1];
      const double raw = RawScan(table, threads);
      const double raw_views = RawScan(table, threads, /*views=*/true);
      const double raw_mapped = RawScan(table, threads, /*views=*/true, /*mapped=*/true);
      LoaderOptions o;
      o.batch_size = 100;
      o.num_threads = threads;
      o.seed = 7;
      const EpochRates rates = LoaderRates(source, o, 2);  // a new loader: epoch 1 cold, epoch 2 warm
      ser.raw.push_back(raw);
      ser.raw_views.push_back(raw_views);
      ser.raw_mapped.push_back(raw_mapped);
      ser.cold.push_back(rates.cold);
      ser.warm.push_back(rates.warm);
      ser.cold_ratio.push_back(rates.cold / raw);
      ser.cold_ratio_views.push_back(rates.cold / raw_views);
      ser.cold_ratio_mapped.push_back(rates.cold / raw_mapped);
      ser.warm_ratio.push_back(rates.warm / raw);
      ser.cold_faults.push_back(static_cast<double>(rates.cold_faults));
      if (torch_rate > 0) {
        ser.torch_cold_ratio.push_back(rates.cold / torch_rate);
        ser.torch_warm_ratio.push_back(rates.warm / torch_rate);
      }
    }
  }
  if (s1) {
    std::printf("\n[1] samples/s to ready uint8 tensors [100, 784] + int64 [100], shuffled, batch 100 (medians of %d "
                "alternating rounds; ratios are medians of per-round ratios)\n", rounds);
    for (size_t threads : {1, 2}) {
      const Series& ser = series[threads - 1];
      std::printf("    %zu thread(s): raw parquet scan %.0f rows/s (byte values copied), %.0f rows/s (as views), %.0f "
                  "rows/s (views from the mapped file, the loader's form)\n",
                  threads, Median(ser.raw), Median(ser.raw_views), Median(ser.raw_mapped));
      std::printf("      loader cold epoch %.0f samples/s = %.2fx raw scan (%.2fx the views scan, %.2fx the mapped "
                  "views scan); warm epochs %.0f samples/s = %.2fx raw scan\n",
                  Median(ser.cold), Median(ser.cold_ratio), Median(ser.cold_ratio_views),
                  Median(ser.cold_ratio_mapped), Median(ser.warm), Median(ser.warm_ratio));
      // The loader keeps the decoded table (47 MB) for the warm epochs; when the allocator has no freed memory to
      // hand back, the first epoch touches fresh pages, which this kind of virtual machine makes slow.
      const double best_ratio = *std::max_element(ser.cold.begin(), ser.cold.end()) /
                                *std::max_element(ser.raw.begin(), ser.raw.end());
      std::printf("      fastest cold epoch / fastest raw scan %.2fx; page faults in the cold epochs: median %.0f, "
                  "most %.0f\n", best_ratio, Median(ser.cold_faults),
                  *std::max_element(ser.cold_faults.begin(), ser.cold_faults.end()));
    }
  }
  if (only == 0 || only == 5) {
    LoaderOptions o;
    o.batch_size = 100;
    o.num_threads = 2;
    o.cache_bytes = 16 << 20;  // smaller than the decoded table (~47 MB): whole row groups are decoded again
    o.fit_units_to_cache = false;
    const double raw2 = RawScan(table, 2);
    const EpochRates rates = LoaderRates(source, o, 1);  // every epoch re-decodes alike: one is enough
    std::printf("\n[5] loader 2 threads, 16 MiB cache (< table), whole row groups (fit_units_to_cache = false): %.0f "
                "samples/s (%.2fx raw scan 2 threads)\n", rates.cold, rates.cold / raw2);
    // The default: the loader reads the row groups in slices that let one shuffle window's units fit in the cache.
    o.fit_units_to_cache = true;
    const EpochRates sliced = LoaderRates(source, o, 2);
    std::printf("    same cache, the default (row groups read in %zu slices): first epoch %.0f samples/s (%.2fx raw "
                "scan), next %.0f samples/s\n", sliced.units, sliced.cold, sliced.cold / raw2, sliced.warm);
  }

  // --only 6: cold epochs only, for profiling (perf record -g data_loader_bench --only 6).
  if (only == 6) {
    for (int round = 0; round < 10; ++round) {
      LoaderOptions o;
      o.batch_size = 100;
      o.num_threads = 1;
      o.seed = 7;
      const EpochRates r = LoaderRates(source, o, 1);
      std::printf("cold 1 thread: %.0f samples/s; first batch after %.1f ms, epoch %.1f ms, decoding thread busy "
                  "%.1f ms\n", r.cold, r.cold_first_batch_ms, r.cold_ms, r.cold_decoding_cpu_ms);
    }
  }
  // --only 9: cold and warm epochs on 0 (inline in Next()), 1 and 2 decoding threads: the cost of hand-offs.
  if (only == 9) {
    for (int round = 0; round < 3; ++round) {
      for (size_t threads : {0, 1, 2}) {
        LoaderOptions o;
        o.batch_size = 100;
        o.num_threads = threads;
        o.seed = 7;
        const EpochRates r = LoaderRates(source, o, 3);
        std::printf("%zu threads: cold %.0f warm %.0f samples/s\n", threads, r.cold, r.warm);
      }
    }
  }
  // --only 10: alternating raw scans and cold epochs on 1 and 2 threads, wall-clock rates and CPU time per round.
  if (only == 10) {
    std::vector<double> ratio[2], cpu_ratio[2];
    for (int round = 0; round < rounds; ++round) {
      for (size_t threads : {1, 2}) {
        double cpu = ProcessCpuSeconds();
        int64_t faults = MinorFaults();
        const double raw = RawScan(table, threads);
        const double raw_cpu = ProcessCpuSeconds() - cpu;
        const int64_t raw_faults = MinorFaults() - faults;
        LoaderOptions o;
        o.batch_size = 100;
        o.num_threads = threads;
        o.seed = 7;
        Loader loader(source, o);
        loader.SetEpoch(0);
        cpu = ProcessCpuSeconds();
        const double main_cpu_start = ThreadCpuSeconds();
        faults = MinorFaults();
        const auto start = Clock::now();
        int64_t seen = 0;
        while (auto batch = loader.Next()) seen += batch->size();
        const double cold = static_cast<double>(seen) / Seconds(start);
        const double cold_cpu = ProcessCpuSeconds() - cpu;
        const double main_cpu = ThreadCpuSeconds() - main_cpu_start;
        const int64_t cold_faults = MinorFaults() - faults;
        ratio[threads - 1].push_back(cold / raw);
        cpu_ratio[threads - 1].push_back(raw_cpu / cold_cpu);
        std::printf("round %d, %zu thread(s): raw %.0f rows/s (%.1f ms CPU, %lld faults), cold %.0f samples/s "
                    "(%.1f ms CPU of which %.1f ms Next()'s thread, %lld faults): %.2fx wall, %.2fx CPU\n",
                    round, threads, raw, raw_cpu * 1e3, static_cast<long long>(raw_faults), cold, cold_cpu * 1e3,
                    main_cpu * 1e3, static_cast<long long>(cold_faults), cold / raw, raw_cpu / cold_cpu);
      }
    }
    for (size_t threads : {1, 2}) {
      std::printf("%zu thread(s): cold / raw scan median %.2fx (wall), raw CPU / cold CPU median %.2fx\n", threads,
                  Median(ratio[threads - 1]), Median(cpu_ratio[threads - 1]));
    }
  }
  // --only 11: the loader's decode alone (every unit read as the cache reads it, all held) vs the raw scan.
  if (only == 11) {
    for (int round = 0; round < rounds; ++round) {
      double cpu = ProcessCpuSeconds();
      auto start = Clock::now();
      const double raw = RawScan(table, 1);
      const double raw_ms = Seconds(start) * 1e3, raw_cpu = (ProcessCpuSeconds() - cpu) * 1e3;
      lakerun::data::UnitReadOptions views;
      views.allow_views = getenv("LR_NOVIEWS") == nullptr;
      std::vector<std::shared_ptr<const lakerun::data::UnitData>> held;
      cpu = ProcessCpuSeconds();
      int64_t faults = MinorFaults();
      start = Clock::now();
      for (size_t u = 0; u < source->num_units(); ++u) held.push_back(source->ReadUnitWith(u, views));
      const double ms = Seconds(start) * 1e3, ucpu = (ProcessCpuSeconds() - cpu) * 1e3;
      std::printf("raw scan %.1f ms (%.1f CPU), units %.1f ms (%.1f CPU, %lld faults) %.0f\n", raw_ms, raw_cpu, ms,
                  ucpu, static_cast<long long>(MinorFaults() - faults), raw);
    }
  }
  // --only 12: warm epochs only (collation and hand-offs), for profiling; LAKERUN_BENCH_THREADS decoding threads.
  if (only == 12) {
    LoaderOptions o;
    o.batch_size = 100;
    o.num_threads = getenv("LAKERUN_BENCH_THREADS") ? std::stoul(getenv("LAKERUN_BENCH_THREADS")) : 0;
    o.seed = 7;
    const EpochRates r = LoaderRates(source, o, 1 + rounds * 4);
    std::printf("%zu threads: cold %.0f, best warm %.0f samples/s\n", o.num_threads, r.cold, r.warm);
  }
  if (only == 7) {
    for (int round = 0; round < 10; ++round) std::printf("raw 1 thread: %.0f rows/s\n", RawScan(table, 1));
  }
  if (only == 8) {
    for (int round = 0; round < 10; ++round) {
      std::printf("raw 1 thread, views: %.0f rows/s\n", RawScan(table, 1, true));
    }
  }

  // 2. vs PyTorch DataLoader: its epochs ran in section 1's rounds.
  if (torch_peer) {
    std::printf("\n[2] vs PyTorch DataLoader (TensorDataset in memory, batch 100, shuffle=True, same rows; one of its "
                "epochs per round of [1], medians of per-round ratios)\n");
    if (!torch_peer->ok() || torch_rates.empty()) {
      std::printf("    torch DataLoader peer failed: %s\n", torch_peer->error().c_str());
    } else {
      const double fastest = *std::max_element(torch_rates.begin(), torch_rates.end());
      std::printf("    torch DataLoader: %.0f samples/s (fastest epoch %.0f); loader 1 thread: cold %.2fx, warm "
                  "%.2fx; 2 threads: cold %.2fx, warm %.2fx\n",
                  Median(torch_rates), fastest, Median(series[0].torch_cold_ratio), Median(series[0].torch_warm_ratio),
                  Median(series[1].torch_cold_ratio), Median(series[1].torch_warm_ratio));
      std::printf("    fastest against fastest: loader 1 thread cold %.2fx, 2 threads cold %.2fx\n",
                  *std::max_element(series[0].cold.begin(), series[0].cold.end()) / fastest,
                  *std::max_element(series[1].cold.begin(), series[1].cold.end()) / fastest);
    }
  }

  // 3. JPEG decode + resize vs raw libjpeg-turbo decode.
  if (only == 0 || only == 3) {
    const int side = 112;
    std::vector<std::string> jpegs;
    std::vector<uint8_t> rgb(side * side * 3);
    for (int64_t i = 0; i < jpeg_count; ++i) {
      const uint8_t* src = images.data() + (i % rows) * 784;
      for (int y = 0; y < side; ++y) {
        for (int x = 0; x < side; ++x) {
          const uint8_t v = src[(y * 28 / side) * 28 + x * 28 / side];
          uint8_t* p = &rgb[(y * side + x) * 3];
          p[0] = v;
          p[1] = static_cast<uint8_t>(255 - v);
          p[2] = static_cast<uint8_t>((x * 2 + y) & 0xff);
        }
      }
      jpegs.push_back(EncodeJpeg(rgb.data(), side, side));
    }
    pq::Schema schema = pq::Schema::FromFields({pq::Leaf("jpeg", pq::PhysicalType::kByteArray),
                                                pq::Leaf("label", pq::PhysicalType::kInt64)});
    const std::string jpeg_table = dir + "/jpegs.parquet";
    {
      pq::ParquetWriter writer(lakerun::LocalFileSystem(), jpeg_table, schema);
      std::vector<int64_t> jl(labels.begin(), labels.begin() + std::min<int64_t>(rows, jpeg_count));
      jl.resize(jpeg_count, 0);
      writer.WriteRowGroup({pq::ColumnData::ByteArrays(jpegs), pq::ColumnData::Int64s(jl)});
      writer.Close();
    }
    auto jsource = lakerun::data::OpenTable(jpeg_table);
    std::vector<double> raws, rates1, rates2, ratios1, ratios2;
    for (int round = 0; round < rounds; ++round) {
      const double raw = RawJpegDecode(jpegs);
      raws.push_back(raw);
      for (size_t threads : {1, 2}) {
        LoaderOptions o;
        o.batch_size = 100;
        o.num_threads = threads;
        lakerun::data::ImageOptions io;
        io.resize = 104;
        io.crop_height = io.crop_width = 96;
        io.random_crop = true;
        io.flip_probability = 0.5f;
        o.images["jpeg"] = io;
        const double rate = LoaderRates(jsource, o, 1).cold;
        (threads == 1 ? rates1 : rates2).push_back(rate);
        (threads == 1 ? ratios1 : ratios2).push_back(rate / raw);
      }
    }
    std::printf("\n[3] JPEG %dx%d RGB (%lld images) -> uint8 [B, 3, 96, 96]: resize 104, random crop 96, flip 0.5 "
                "(medians of %d alternating rounds)\n",
                side, side, static_cast<long long>(jpeg_count), rounds);
    std::printf("    raw libjpeg-turbo decode (full size, 1 thread): %.0f images/s\n", Median(raws));
    std::printf("    loader 1 thread: %.0f images/s (%.2fx raw decode); 2 threads: %.0f images/s (%.2fx)\n",
                Median(rates1), Median(ratios1), Median(rates2), Median(ratios2));
  }

  // 4. Peak RSS over epochs.
  if (only == 0 || only == 4) {
    LoaderOptions o;
    o.batch_size = 100;
    o.num_threads = 2;
    Loader loader(source, o);
    ResetPeakRss();
    int64_t after_first = 0, after_last = 0;
    for (int e = 0; e < epochs; ++e) {
      loader.SetEpoch(e);
      while (auto batch = loader.Next()) {
      }
      if (e == 0) after_first = PeakRssKb();
      after_last = PeakRssKb();
    }
    std::printf("\n[4] peak RSS (VmHWM, reset before epoch 1): after epoch 1 %lld KiB, after epoch %d %lld KiB "
                "(%.3fx)\n",
                static_cast<long long>(after_first), epochs, static_cast<long long>(after_last),
                static_cast<double>(after_last) / after_first);
  }
  lakerun::LocalFileSystem().RemoveAll(dir);
  return 0;
}
