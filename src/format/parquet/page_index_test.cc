// The page index: written by ParquetWriter, read back and checked by ParquetFile, used by PagesMayMatch.
#include <gtest/gtest.h>

#include <random>

#include "format/parquet/fuzz_entry_points.h"
#include "format/parquet/metadata_thrift.h"
#include "lakerun_testing/matchers.h"
#include "parquet_test_util.h"

namespace lakerun::parquet {
namespace {

using format::Filter;
using testing::MemFile;
using testing::RewriteFooter;

constexpr int64_t kRows = 10000;

// x: INT64 0..9999 (100 rows a page), y: INT32 row / 2 (200 rows a page), both required and sorted.
MemFile SortedFile(WriterOptions options = {}) {
  options.page_bytes = 800;
  options.dictionary = false;
  options.codec = Codec::kUncompressed;
  std::vector<int64_t> x(kRows);
  std::vector<int32_t> y(kRows);
  for (int64_t i = 0; i < kRows; ++i) {
    x[static_cast<size_t>(i)] = i;
    y[static_cast<size_t>(i)] = static_cast<int32_t>(i / 2);
  }
  MemFile f;
  f.Write(Schema::FromFields({Leaf("x", PhysicalType::kInt64), Leaf("y", PhysicalType::kInt32)}),
          {ColumnData::Int64s(x), ColumnData::Int32s(y)}, options);
  return f;
}

std::string Text(const std::vector<RowRange>& ranges) {
  std::string s;
  for (const RowRange& r : ranges) s += "[" + std::to_string(r.begin) + "," + std::to_string(r.end) + ")";
  return s;
}

std::vector<RowRange> Pages(const ParquetFile& file, const std::string& filter, int row_group = 0) {
  return PagesMayMatch(file, row_group, Filter::Parse(filter));
}

TEST(PageIndexTest, WriterStoresOneEntryPerDataPage) {
  MemFile f = SortedFile();
  auto file = f.Open();
  const ColumnChunkMeta& chunk = file->metadata().row_groups[0].columns[0];
  ASSERT_TRUE(chunk.offset_index.has_value());
  ASSERT_TRUE(chunk.column_index.has_value());
  // After the row group's chunks, before the footer.
  const int64_t chunks_end = file->metadata().row_groups[0].columns[1].start_offset() +
                             file->metadata().row_groups[0].columns[1].total_compressed_size;
  EXPECT_GE(chunk.column_index->offset, chunks_end);
  EXPECT_LT(static_cast<uint64_t>(chunk.offset_index->offset), file->file_size() - 8 - file->metadata().footer_length);

  const OffsetIndex pages = *file->ReadOffsetIndex(0, 0);
  ASSERT_EQ(pages.page_locations.size(), 100u);
  // Each location is a page header as the chunk holds it.
  const std::string bytes = f.Bytes();
  for (size_t i = 0; i < pages.page_locations.size(); ++i) {
    const PageLocation& p = pages.page_locations[i];
    EXPECT_EQ(p.first_row_index, static_cast<int64_t>(i) * 100);
    size_t header_size = 0;
    const PageHeader h = ParsePageHeader(std::string_view(bytes).substr(static_cast<size_t>(p.offset)), "t",
                                         static_cast<uint64_t>(p.offset), 64, &header_size);
    EXPECT_EQ(h.type, static_cast<int32_t>(PageType::kDataPage));
    EXPECT_EQ(h.num_values, 100);
    EXPECT_EQ(static_cast<int64_t>(header_size) + h.compressed_page_size, p.compressed_page_size);
  }
  const ColumnIndex stats = *file->ReadColumnIndex(0, 0);
  ASSERT_EQ(stats.num_pages(), 100u);
  EXPECT_EQ(stats.boundary_order, BoundaryOrder::kAscending);
  const ColumnDescriptor& x = file->schema().column(0);
  for (size_t i = 0; i < stats.num_pages(); ++i) {
    EXPECT_FALSE(stats.null_pages[i]);
    EXPECT_EQ(DecodeStatValue(x, stats.min_values[i])->as_int(), static_cast<int64_t>(i) * 100);
    EXPECT_EQ(DecodeStatValue(x, stats.max_values[i])->as_int(), static_cast<int64_t>(i) * 100 + 99);
    EXPECT_EQ((*stats.null_counts)[i], 0);
  }
  EXPECT_EQ(file->ReadOffsetIndex(0, 1)->page_locations.size(), 50u);
}

TEST(PageIndexTest, SortedColumnPrunesToExactlyThePagesHoldingTheRange) {
  MemFile f = SortedFile();
  auto file = f.Open();
  EXPECT_EQ(Text(Pages(*file, "x < 250")), "[0,300)");
  EXPECT_EQ(Text(Pages(*file, "x >= 9950")), "[9900,10000)");
  EXPECT_EQ(Text(Pages(*file, "x = 5000")), "[5000,5100)");
  EXPECT_EQ(Text(Pages(*file, "x in (5, 9999)")), "[0,100)[9900,10000)");
  EXPECT_EQ(Text(Pages(*file, "x > 99999")), "");
  EXPECT_EQ(Text(Pages(*file, "x != 5")), "[0,10000)");  // no page holds 5 alone
  EXPECT_EQ(Text(Pages(*file, "x >= 0")), "[0,10000)");
  EXPECT_EQ(RowCount(Pages(*file, "x < 250")), 300);
}

TEST(PageIndexTest, AndIntersectsOrUnitesNotNegatesAcrossColumnsWithOtherPageBoundaries) {
  MemFile f = SortedFile();
  auto file = f.Open();
  // y's pages hold 200 rows: y < 100 is rows [0, 200); x >= 150 is x's pages from row 100.
  EXPECT_EQ(Text(Pages(*file, "x >= 150 and y < 100")), "[100,200)");
  EXPECT_EQ(Text(Pages(*file, "x < 100 or y >= 4950")), "[0,100)[9800,10000)");
  EXPECT_EQ(Text(Pages(*file, "not (x >= 100)")), "[0,100)");
  EXPECT_EQ(Text(Pages(*file, "not (x >= 100 or y < 4950)")), "");
  EXPECT_EQ(Text(Pages(*file, "(x < 100 or x >= 9900) and y > 4900")), "[9900,10000)");
}

TEST(PageIndexTest, NullPagesAndNullCountsDecideIsNull) {
  // n: null on rows 0..1999 and on odd rows from 6000; 250 slots a page at most.
  std::vector<int16_t> def;
  std::vector<int64_t> values;
  for (int64_t i = 0; i < kRows; ++i) {
    const bool null = i < 2000 || (i >= 6000 && i % 2 == 1);
    def.push_back(null ? 0 : 1);
    if (!null) values.push_back(i);
  }
  WriterOptions options;
  options.page_bytes = 1000;
  MemFile f;
  f.Write(Schema::FromFields({Leaf("n", PhysicalType::kInt64, Repetition::kOptional)}),
          {ColumnData::Int64s(values).set_def_levels(def, 1)}, options);
  auto file = f.Open();
  const OffsetIndex pages = *file->ReadOffsetIndex(0, 0);
  const ColumnIndex stats = *file->ReadColumnIndex(0, 0);
  ASSERT_GT(pages.page_locations.size(), 10u);
  // Expected from the data: the pages holding a null (IS NULL) or a value (IS NOT NULL).
  std::vector<RowRange> with_null, with_value;
  for (size_t i = 0; i < pages.page_locations.size(); ++i) {
    const int64_t begin = pages.page_locations[i].first_row_index;
    const int64_t end = i + 1 < pages.page_locations.size() ? pages.page_locations[i + 1].first_row_index : kRows;
    bool any_null = false, any_value = false;
    for (int64_t r = begin; r < end; ++r) (def[static_cast<size_t>(r)] == 0 ? any_null : any_value) = true;
    EXPECT_EQ(stats.null_pages[i], !any_value) << "page " << i;
    auto add = [&](std::vector<RowRange>& v) {
      if (!v.empty() && v.back().end == begin) v.back().end = end;
      else v.push_back({begin, end});
    };
    if (any_null) add(with_null);
    if (any_value) add(with_value);
  }
  EXPECT_EQ(Text(Pages(*file, "n is null")), Text(with_null));
  EXPECT_EQ(Text(Pages(*file, "n is not null")), Text(with_value));
  EXPECT_EQ(Pages(*file, "n is not null").front().begin, 2000 / 250 * 250);
  EXPECT_EQ(Pages(*file, "n is null").back().end, kRows);
  EXPECT_EQ(Pages(*file, "n < 100").size(), 0u);  // rows 0..1999 are null: no page holds n < 100
}

// Whatever the data and filter, every row the filter matches lies in a range PagesMayMatch keeps.
TEST(PageIndexTest, NeverDropsAMatchingRow) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t rows = 3000;
    std::vector<int16_t> def_a;
    std::vector<int64_t> a;
    std::vector<std::string> b;
    for (int64_t i = 0; i < rows; ++i) {
      const bool null = rng() % 5 == 0;
      def_a.push_back(null ? 0 : 1);
      if (!null) a.push_back(static_cast<int64_t>(rng() % 1000) + (trial % 2 ? i : 0));
      b.push_back(std::string(1, static_cast<char>('a' + rng() % 26)) + std::to_string(i / 300));
    }
    WriterOptions options;
    options.page_bytes = 300 + trial * 40;
    MemFile f;
    f.Write(Schema::FromFields({Leaf("a", PhysicalType::kInt64, Repetition::kOptional),
                                Leaf("b", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::String())}),
            {ColumnData::Int64s(a).set_def_levels(def_a, 1), ColumnData::ByteArrays(b)}, options);
    auto file = f.Open();
    for (const std::string text : {"a < 300", "a >= 2500 or b < 'c'", "a is null and b > 'x5'",
                                   "not (a > 10 and a < 900)", "b in ('q3', 'z9') or a = 17", "a != 4"}) {
      const Filter filter = Filter::Parse(text);
      const std::vector<RowRange> kept = PagesMayMatch(*file, 0, filter);
      size_t value = 0;
      for (int64_t r = 0; r < rows; ++r) {
        const bool present = def_a[static_cast<size_t>(r)] == 1;
        const Value av = present ? Value::Int(a[value++]) : Value::Null();
        const Value bv = Value::String(b[static_cast<size_t>(r)]);
        const bool match = format::Matches(filter, [&](const std::string& c) { return c == "a" ? av : bv; });
        if (match) ASSERT_TRUE(Overlaps(kept, r, r + 1)) << text << " drops row " << r << " (trial " << trial << ")";
      }
    }
  }
}

TEST(PageIndexTest, FilesWithoutAnIndexComeBackWhole) {
  WriterOptions off;
  off.page_index = false;
  MemFile f = SortedFile(off);
  auto file = f.Open();
  EXPECT_FALSE(file->metadata().row_groups[0].columns[0].offset_index.has_value());
  EXPECT_FALSE(file->ReadColumnIndex(0, 0).has_value());
  EXPECT_FALSE(file->ReadOffsetIndex(0, 0).has_value());
  EXPECT_EQ(Text(Pages(*file, "x < 250")), "[0,10000)");
  // Without statistics: an offset index but no column index, so nothing to prune by.
  WriterOptions no_stats;
  no_stats.statistics = false;
  MemFile g = SortedFile(no_stats);
  auto plain = g.Open();
  EXPECT_TRUE(plain->ReadOffsetIndex(0, 0).has_value());
  EXPECT_FALSE(plain->ReadColumnIndex(0, 0).has_value());
  EXPECT_EQ(Text(Pages(*plain, "x < 250")), "[0,10000)");
  EXPECT_THROW_WITH(Pages(*plain, "nope < 1"), InvalidArgument, "'nope'");
}

TEST(PageIndexTest, RepeatedColumnsCountRowsNotValues) {
  // LIST<INT32> of 3 elements a row: pages start on rows.
  Schema schema = Schema::FromFields({ListOf("v", Leaf("element", PhysicalType::kInt32))});
  std::vector<Value> rows;
  for (int i = 0; i < 3000; ++i) rows.push_back(Value::Struct({{"v", Value::List({Value::Int(i), Value::Int(i), Value::Int(i)})}}));
  WriterOptions options;
  options.page_bytes = 600;
  MemFile f;
  f.WriteRows(schema, rows, options);
  auto file = f.Open();
  const OffsetIndex pages = *file->ReadOffsetIndex(0, 0);
  ASSERT_GT(pages.page_locations.size(), 5u);
  const ColumnIndex stats = *file->ReadColumnIndex(0, 0);
  for (size_t i = 0; i < pages.page_locations.size(); ++i) {
    // Row r holds value r, so a page's min is its first row.
    EXPECT_EQ(DecodeStatValue(file->schema().column(0), stats.min_values[i])->as_int(),
              pages.page_locations[i].first_row_index);
  }
  EXPECT_EQ(f.ReadAll().size(), 3000u);
}

TEST(PageIndexTest, EveryRowGroupHasItsOwnIndex) {
  Schema schema = Schema::FromFields({Leaf("x", PhysicalType::kInt64)});
  std::vector<Value> rows;
  for (int i = 0; i < 1000; ++i) rows.push_back(Value::Struct({{"x", Value::Int(i)}}));
  WriterOptions options;
  options.row_group_rows = 100;
  options.page_bytes = 160;  // 20 rows a page
  MemFile f;
  f.WriteRows(schema, rows, options);
  auto file = f.Open();
  ASSERT_EQ(file->num_row_groups(), 10);
  for (int rg = 0; rg < 10; ++rg) {
    EXPECT_EQ(file->ReadOffsetIndex(rg, 0)->page_locations.size(), 5u);
    EXPECT_EQ(DecodeStatValue(file->schema().column(0), file->ReadColumnIndex(rg, 0)->min_values[0])->as_int(),
              rg * 100);
  }
  EXPECT_EQ(Text(Pages(*file, "x >= 345 and x < 390", 3)), "[40,100)");
  EXPECT_EQ(Text(Pages(*file, "x < 345", 4)), "");
}

TEST(PageIndexTest, CorruptIndexesNameFileRowGroupAndColumn) {
  {  // an offset index pointing past the data section
    MemFile f = SortedFile();
    RewriteFooter(f, [](FileMetaData& md) { md.row_groups[0].columns[1].offset_index->offset = 1 << 30; });
    auto file = f.Open();
    EXPECT_THROW_WITH(file->ReadOffsetIndex(0, 1), CorruptDataError, f.path, "row group 0", "column 'y'",
                      "offset index", "outside the data section");
    EXPECT_THROW_WITH(Pages(*file, "y < 3"), CorruptDataError, "column 'y'");
    EXPECT_NO_THROW(file->ReadOffsetIndex(0, 0));
  }
  {  // x's column index used for y: 100 pages against y's 50
    MemFile f = SortedFile();
    RewriteFooter(f, [](FileMetaData& md) {
      md.row_groups[0].columns[1].column_index = md.row_groups[0].columns[0].column_index;
    });
    EXPECT_THROW_WITH(f.Open()->ReadColumnIndex(0, 1), CorruptDataError, "row group 0", "column 'y'",
                      "column index lists 100 pages, the offset index 50");
  }
  {  // x's offset index used for y: pages outside y's chunk
    MemFile f = SortedFile();
    RewriteFooter(f, [](FileMetaData& md) {
      md.row_groups[0].columns[1].offset_index = md.row_groups[0].columns[0].offset_index;
    });
    EXPECT_THROW_WITH(f.Open()->ReadOffsetIndex(0, 1), CorruptDataError, "column 'y'", "outside the chunk");
  }
  {  // garbage over the column index bytes
    MemFile f = SortedFile();
    auto clean = f.Open();
    const IndexLocation at = *clean->metadata().row_groups[0].columns[0].column_index;
    std::string bytes = f.Bytes();
    for (int32_t i = 0; i < at.length; ++i) bytes[static_cast<size_t>(at.offset + i)] = '\xff';
    f.SetBytes(bytes);
    EXPECT_THROW_WITH(f.Open()->ReadColumnIndex(0, 0), CorruptDataError, f.path, "row group 0", "column 'x'",
                      "column index");
    EXPECT_THROW(fuzz::ParseFile(bytes), CorruptDataError);
  }
}

TEST(PageIndexTest, ParsersRejectMalformedThriftCleanly) {
  MemFile f = SortedFile();
  auto file = f.Open();
  const std::string bytes = f.Bytes();
  for (const IndexLocation& at : {*file->metadata().row_groups[0].columns[0].column_index,
                                  *file->metadata().row_groups[0].columns[1].offset_index}) {
    const bool offset_index = at.offset == file->metadata().row_groups[0].columns[1].offset_index->offset;
    const std::string clean = bytes.substr(static_cast<size_t>(at.offset), static_cast<size_t>(at.length));
    EXPECT_NO_THROW(fuzz::ParsePageIndex(clean, offset_index));
    for (size_t cut = 0; cut < clean.size(); cut += 7) {  // every truncation is an error, never a crash
      EXPECT_THROW(fuzz::ParsePageIndex(clean.substr(0, cut), offset_index), CorruptDataError) << cut;
    }
    for (size_t i = 0; i < clean.size(); ++i) {  // every flipped byte reads or is rejected as corrupt
      std::string damaged = clean;
      damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
      try {
        fuzz::ParsePageIndex(damaged, offset_index);
      } catch (const CorruptDataError&) {
      }
    }
  }
}

}  // namespace
}  // namespace lakerun::parquet
