// Nulls and filters in the loader, each against a peer measured in the same run:
//   1. a nullable float column with 10% nulls (fill + mask policy) vs the same column without nulls: loader epoch
//      rate, medians of alternating rounds (target: >= 0.8x);
//   2. a selective filter on the column a table is sorted by (1% of the rows): bytes read from the files vs the
//      files' size, and the filtered epoch's time vs the unfiltered one (target: <= 5% of the bytes);
//   3. the same selective filter on rows in the middle of one large row group: the time to open the table (which
//      applies the filter) with the file's page index vs the same file written without one (the page index lets
//      only the filter column's pages holding those rows be decoded).
//
//   data_table_filter_bench [--rows N] [--rounds R] [--dir D]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lakerun/base/fault_injection.h"
#include "lakerun/base/file_system.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"

namespace {

namespace pq = lakerun::parquet;
using Clock = std::chrono::steady_clock;
using lakerun::data::Filter;
using lakerun::data::Loader;
using lakerun::data::LoaderOptions;
using lakerun::data::OpenTable;
using lakerun::data::TableOptions;

constexpr int64_t kRowGroupRows = 20000;

// id (int64, sorted), x (float, 10% null when `nulls`), f0..f6 (float).
void WriteTable(const std::string& path, int64_t rows, bool nulls, int64_t row_group_rows = kRowGroupRows,
                bool page_index = true) {
  std::vector<pq::SchemaNode> fields = {pq::Leaf("id", pq::PhysicalType::kInt64),
                                        pq::Leaf("x", pq::PhysicalType::kFloat, pq::Repetition::kOptional)};
  for (int k = 0; k < 7; ++k) fields.push_back(pq::Leaf("f" + std::to_string(k), pq::PhysicalType::kFloat));
  pq::WriterOptions options;
  options.row_group_rows = row_group_rows;
  options.dictionary = false;
  options.page_index = page_index;
  pq::ParquetWriter writer(lakerun::LocalFileSystem(), path, pq::Schema::FromFields(fields), options);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (int64_t begin = 0; begin < rows; begin += row_group_rows) {
    const int64_t n = std::min(row_group_rows, rows - begin);
    std::vector<int64_t> ids(n);
    std::vector<float> x;
    std::vector<int16_t> defs(n);
    std::vector<std::vector<float>> f(7, std::vector<float>(n));
    for (int64_t i = 0; i < n; ++i) {
      ids[i] = begin + i;
      const bool null = nulls && (begin + i) % 10 == 3;
      defs[i] = null ? 0 : 1;
      if (!null) x.push_back(uniform(rng));
      for (auto& column : f) column[i] = uniform(rng);
    }
    std::vector<pq::ColumnData> columns = {pq::ColumnData::Int64s(ids)};
    columns.push_back(std::move(pq::ColumnData::Floats(x).set_def_levels(defs, 1)));
    for (auto& column : f) columns.push_back(pq::ColumnData::Floats(column));
    writer.WriteRowGroup(columns);
  }
  writer.Close();
}

// Seconds for one epoch of `columns` through the loader (1 thread, batch 1024, shuffled), and rows seen.
double Epoch(const std::string& path, const TableOptions& table, lakerun::FileSystem& fs, int64_t* rows) {
  const auto start = Clock::now();
  LoaderOptions o;
  o.batch_size = 1024;
  o.num_threads = 1;
  o.nulls["x"] = {};
  Loader loader(OpenTable(path, table, fs), o);
  *rows = 0;
  double checksum = 0;
  while (auto b = loader.Next()) {
    *rows += b->size();
    checksum += b->at("x")[0].item<float>();
  }
  if (checksum == 12345.678) std::printf(" ");  // keeps the batches alive to the end
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Median seconds of `rounds` opens of `path` with `table`, and the rows the open leaves.
double OpenSeconds(const std::string& path, const TableOptions& table, int rounds, uint64_t* rows) {
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    const auto start = Clock::now();
    *rows = OpenTable(path, table)->num_rows();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 2000000;
  int rounds = 7;
  std::string dir = "/tmp/lakerun-table-filter-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rows") rows = std::atoll(argv[i + 1]);
    else if (flag == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (flag == "--dir") dir = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--rows N] [--rounds R] [--dir D]\n", argv[0]);
      return 2;
    }
  }
  lakerun::FileSystem& local = lakerun::LocalFileSystem();
  local.CreateDirs(dir);
  const std::string dense = dir + "/dense.parquet", nullable = dir + "/nullable.parquet";
  WriteTable(dense, rows, false);
  WriteTable(nullable, rows, true);

  std::printf("1. nullable float column (10%% nulls, fill + mask) vs no nulls, %lld rows, %d rounds\n",
              static_cast<long long>(rows), rounds);
  TableOptions all;
  all.columns = {"id", "x", "f0", "f1", "f2", "f3"};
  std::vector<double> ratios, dense_rates, null_rates;
  int64_t n = 0;
  for (int r = 0; r < rounds; ++r) {
    const double td = Epoch(dense, all, local, &n);
    const double tn = Epoch(nullable, all, local, &n);
    dense_rates.push_back(n / td);
    null_rates.push_back(n / tn);
    ratios.push_back(td / tn);
  }
  std::printf("   no nulls %.2f M rows/s, 10%% nulls %.2f M rows/s: ratio %.3f (target >= 0.8) %s\n",
              Median(dense_rates) / 1e6, Median(null_rates) / 1e6, Median(ratios),
              Median(ratios) >= 0.8 ? "met" : "MISSED");

  std::printf("2. filter 'id < %lld' (1%% of rows) on a table sorted by id, row groups of %lld rows\n",
              static_cast<long long>(rows / 100), static_cast<long long>(kRowGroupRows));
  lakerun::FaultInjectingFileSystem counting(local);
  TableOptions filtered = all;
  filtered.filter = Filter::Parse("id < " + std::to_string(rows / 100));
  std::vector<double> t_all, t_filtered;
  uint64_t bytes_all = 0, bytes_filtered = 0;
  int64_t rows_all = 0, rows_filtered = 0;
  for (int r = 0; r < rounds; ++r) {
    counting.ResetBytesRead();
    t_all.push_back(Epoch(nullable, all, counting, &rows_all));
    bytes_all = counting.bytes_read();
    counting.ResetBytesRead();
    t_filtered.push_back(Epoch(nullable, filtered, counting, &rows_filtered));
    bytes_filtered = counting.bytes_read();
  }
  const uint64_t file_bytes = local.Stat(nullable)->size;
  const double share = static_cast<double>(bytes_filtered) / static_cast<double>(file_bytes);
  std::printf("   unfiltered: %lld rows, %.1f MB read, %.3f s; filtered: %lld rows, %.2f MB read (%.2f%% of the "
              "%.1f MB file; target <= 5%%) %s, %.4f s (%.1fx faster)\n",
              static_cast<long long>(rows_all), bytes_all / 1e6, Median(t_all), static_cast<long long>(rows_filtered),
              bytes_filtered / 1e6, 100 * share, file_bytes / 1e6, share <= 0.05 ? "met" : "MISSED",
              Median(t_filtered), Median(t_all) / Median(t_filtered));

  const std::string indexed = dir + "/one_group.parquet", unindexed = dir + "/one_group_no_index.parquet";
  WriteTable(indexed, rows, true, rows, true);
  WriteTable(unindexed, rows, true, rows, false);
  TableOptions middle = all;
  middle.filter = Filter::Parse("id >= " + std::to_string(rows / 2) + " and id < " +
                                std::to_string(rows / 2 + rows / 100));
  std::printf("3. filter '%s' (1%% of rows) inside one row group of %lld rows: opening the table\n",
              middle.filter.ToString().c_str(), static_cast<long long>(rows));
  uint64_t kept_indexed = 0, kept_unindexed = 0;
  const double t_unindexed = OpenSeconds(unindexed, middle, rounds, &kept_unindexed);
  const double t_indexed = OpenSeconds(indexed, middle, rounds, &kept_indexed);
  std::printf("   without a page index %.4f s, with one %.4f s (%.1fx faster); rows kept %llu / %llu %s\n",
              t_unindexed, t_indexed, t_unindexed / t_indexed, static_cast<unsigned long long>(kept_indexed),
              static_cast<unsigned long long>(kept_unindexed), kept_indexed == kept_unindexed ? "equal" : "DIFFER");
  return 0;
}
