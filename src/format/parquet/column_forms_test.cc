// The views and dictionary forms of byte values (ColumnReadOptions): the same values and levels as the copied form
// for every encoding, codec and page version; views outliving the file, the scratch and the reused output; the
// dictionary form and its fallback when a chunk mixes dictionary and plain pages.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "format/parquet/parquet_test_util.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;
using testing::SameColumn;

constexpr int32_t kWidth = 5;

struct Rows {
  std::vector<std::string> strings;  // non-null values of "s"
  std::vector<std::string> fixed;    // non-null values of "f"
  std::vector<int16_t> s_def, f_def;
  std::vector<std::string> tags;     // values of the list "tags"
  std::vector<int16_t> t_def, t_rep;
};

// `n` rows; `distinct` bounds the number of different strings (small: dictionary-friendly); every 7th "s" and every
// 5th "f" is null; "tags" holds lists of 0-3 strings (empty and null lists included).
Rows MakeRows(int n, int distinct, int salt) {
  Rows r;
  for (int i = 0; i < n; ++i) {
    const int k = (i * 7919 + salt) % distinct;
    if (i % 7 == 3) {
      r.s_def.push_back(0);
    } else {
      r.s_def.push_back(1);
      r.strings.push_back("value-" + std::to_string(k) + std::string(static_cast<size_t>(k % 13), 'x'));
    }
    if (i % 5 == 1) {
      r.f_def.push_back(0);
    } else {
      r.f_def.push_back(1);
      std::string v(kWidth, '\0');
      for (int b = 0; b < kWidth; ++b) v[static_cast<size_t>(b)] = static_cast<char>((k * 31 + b * 7 + salt) & 0xff);
      r.fixed.push_back(v);
    }
    const int len = i % 11 == 0 ? -1 : i % 4;  // -1: a null list
    if (len <= 0) {
      r.t_def.push_back(len < 0 ? 0 : 1);
      r.t_rep.push_back(0);
    }
    for (int e = 0; e < len; ++e) {
      r.t_def.push_back(3);
      r.t_rep.push_back(e == 0 ? 0 : 1);
      r.tags.push_back("t" + std::to_string((k + e) % 9));
    }
  }
  return r;
}

// The rows of `a`, then those of `b`.
Rows Concat(Rows a, const Rows& b) {
  auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(a.strings, b.strings);
  append(a.fixed, b.fixed);
  append(a.s_def, b.s_def);
  append(a.f_def, b.f_def);
  append(a.tags, b.tags);
  append(a.t_def, b.t_def);
  append(a.t_rep, b.t_rep);
  return a;
}

Schema TestSchema() {
  return Schema::FromFields(
      {Leaf("s", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String()),
       Leaf("f", PhysicalType::kFixedLenByteArray, Repetition::kOptional, {}, kWidth),
       ListOf("tags", Leaf("element", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String()))});
}

std::vector<ColumnData> Columns(const Rows& r) {
  std::vector<ColumnData> cols;
  cols.push_back(ColumnData::ByteArrays(r.strings).set_def_levels(r.s_def, 1));
  cols.push_back(ColumnData::FixedBytes(PhysicalType::kFixedLenByteArray, kWidth, r.fixed).set_def_levels(r.f_def, 1));
  ColumnData tags = ColumnData::ByteArrays(r.tags);
  tags.set_def_levels(r.t_def, 3).set_rep_levels(r.t_rep, 1);
  cols.push_back(std::move(tags));
  return cols;
}

void WriteGroups(MemFile& f, const std::vector<Rows>& groups, const WriterOptions& options) {
  ParquetWriter w(*f.fs, f.path, TestSchema(), options);
  for (const Rows& g : groups) w.WriteRowGroup(Columns(g));
  w.Close();
}

ColumnReadOptions Views() {
  ColumnReadOptions o;
  o.byte_views = true;
  return o;
}
ColumnReadOptions ViewsAndDictionary() {
  ColumnReadOptions o;
  o.byte_views = true;
  o.dictionary = true;
  return o;
}
ColumnReadOptions CopiedDictionary() {
  ColumnReadOptions o;
  o.dictionary = true;
  return o;
}

// Same levels and values (through bytes_at) as `want`, and the same bytes once materialized.
void ExpectSameValues(const ColumnData& want, ColumnData got, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.num_values(), want.num_values());
  EXPECT_EQ(got.def_levels(), want.def_levels());
  EXPECT_EQ(got.rep_levels(), want.rep_levels());
  for (int64_t i = 0; i < want.num_values(); ++i) {
    ASSERT_EQ(got.bytes_at(i), want.bytes_at(i)) << "value " << i;
  }
  got.Materialize();
  EXPECT_FALSE(got.has_views());
  EXPECT_FALSE(got.has_dictionary());
  EXPECT_TRUE(SameColumn(got, want));
  if (want.type() == PhysicalType::kByteArray) {
    EXPECT_EQ(got.offsets(), want.offsets());
  }
}

// (codec, page version, encoding of "s"/"tags" and "f"; kPlainDictionary: dictionary pages).
using FormParam = std::tuple<Codec, int, Encoding>;

class ColumnFormsTest : public ::testing::TestWithParam<FormParam> {};

// Writer options of one parameter set: many small pages per chunk; dictionary pages for kPlainDictionary.
WriterOptions PagedOptions(const FormParam& param) {
  const auto [codec, page_version, encoding] = param;
  WriterOptions options;
  options.codec = codec;
  options.page_version = page_version;
  options.page_bytes = 700;
  options.dictionary = encoding == Encoding::kPlainDictionary;
  return options;
}

TEST_P(ColumnFormsTest, ViewsAndDictionaryFormsHoldTheCopiedValues) {
  const Encoding encoding = std::get<2>(GetParam());
  WriterOptions options = PagedOptions(GetParam());
  if (!options.dictionary) {
    const bool fixed_ok = encoding != Encoding::kDeltaLengthByteArray;
    options.column_encoding["s"] = encoding;
    options.column_encoding["tags.list.element"] = encoding;
    options.column_encoding["f"] =
        fixed_ok ? encoding : Encoding::kPlain;  // DELTA_LENGTH_BYTE_ARRAY is for BYTE_ARRAY only
  }
  if (encoding == Encoding::kByteStreamSplit) {  // fixed widths only
    options.column_encoding["s"] = Encoding::kPlain;
    options.column_encoding["tags.list.element"] = Encoding::kDeltaByteArray;
  }
  MemFile f;
  WriteGroups(f, {MakeRows(1500, 40, 1), MakeRows(900, 60, 2)}, options);
  auto file = f.Open();
  for (int rg = 0; rg < file->num_row_groups(); ++rg) {
    for (int col = 0; col < file->schema().num_columns(); ++col) {
      const std::string where = "row group " + std::to_string(rg) + ", column " + std::to_string(col);
      const ColumnData copied = file->ReadColumnChunk(rg, col);
      ASSERT_FALSE(copied.has_views());
      ASSERT_FALSE(copied.has_dictionary());

      ColumnData views = file->ReadColumnChunk(rg, col, Views());
      EXPECT_TRUE(views.has_views()) << where;
      EXPECT_FALSE(views.has_dictionary()) << where;
      EXPECT_TRUE(views.value_buffer().empty()) << where;
      ExpectSameValues(copied, views, where + ", views");

      ColumnData dict = file->ReadColumnChunk(rg, col, ViewsAndDictionary());
      EXPECT_EQ(dict.has_dictionary(), options.dictionary) << where;
      if (dict.has_dictionary()) {
        EXPECT_TRUE(dict.dictionary().has_views()) << where;
        const int64_t entries = dict.dictionary().num_values();
        for (int64_t i = 0; i < dict.num_values(); ++i) ASSERT_LT(dict.dictionary_indices()[i], entries);
      } else {
        EXPECT_TRUE(dict.has_views()) << where;
      }
      ExpectSameValues(copied, dict, where + ", views + dictionary");

      ColumnData copied_dict = file->ReadColumnChunk(rg, col, CopiedDictionary());
      EXPECT_EQ(copied_dict.has_dictionary(), options.dictionary) << where;
      EXPECT_FALSE(copied_dict.has_views()) << where;
      ExpectSameValues(copied, copied_dict, where + ", copied dictionary");
    }
  }
}

// Slot i of a flat column: its value, or nullopt when null.
std::vector<std::optional<std::string>> Slots(const ColumnData& d) {
  std::vector<std::optional<std::string>> slots;
  int64_t value = 0;
  for (int64_t i = 0; i < d.num_slots(); ++i) {
    const bool defined = d.def_levels().empty() || d.def_levels()[static_cast<size_t>(i)] == d.max_def_level();
    slots.push_back(defined ? std::optional<std::string>(std::string(d.bytes_at(value++))) : std::nullopt);
  }
  return slots;
}

TEST_P(ColumnFormsTest, RowRangesReadOnlyThePagesHoldingThem) {
  const Encoding encoding = std::get<2>(GetParam());
  WriterOptions options = PagedOptions(GetParam());
  if (!options.dictionary) {
    options.column_encoding["s"] = encoding == Encoding::kByteStreamSplit ? Encoding::kPlain : encoding;
    options.column_encoding["f"] =
        encoding == Encoding::kDeltaLengthByteArray ? Encoding::kPlain : encoding;
    options.column_encoding["tags.list.element"] = Encoding::kPlain;
  }
  MemFile f;
  WriteGroups(f, {MakeRows(1500, 40, 1)}, options);
  auto file = f.Open();
  const int64_t rows = 1500;
  for (int col = 0; col < 2; ++col) {  // "s" and "f": no repetition
    const auto all = Slots(file->ReadColumnChunk(0, col));
    ASSERT_EQ(static_cast<int64_t>(all.size()), rows);
    for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, 1}, {37, 400}, {699, 1400}, {1499, 1500},
                              {1400, 1600}, {0, rows}, {2000, 2100}}) {
      for (bool views : {false, true}) {
        SCOPED_TRACE("column " + std::to_string(col) + " rows " + std::to_string(begin) + "-" + std::to_string(end) +
                     (views ? " views" : " copied"));
        ColumnReadOptions o;
        o.byte_views = views;
        o.row_begin = begin;
        o.row_end = end;
        const ColumnData part = file->ReadColumnChunk(0, col, o);
        const auto got = Slots(part);
        const int64_t last = std::min(end, rows);
        ASSERT_LE(part.first_row(), std::min(begin, last));
        ASSERT_GE(part.first_row() + static_cast<int64_t>(got.size()), last);
        for (int64_t r = begin; r < last; ++r) ASSERT_EQ(got[static_cast<size_t>(r - part.first_row())], all[r]) << r;
        if (begin > 0 && end - begin < rows / 2) {
          EXPECT_LT(static_cast<int64_t>(got.size()), rows) << "every page was read for a small range";
        }
      }
    }
  }
  // Exactly the pages holding the range: a range starting on a page boundary does not read the page before it.
  for (int col = 0; col < 2; ++col) {
    ColumnReadOptions first_page;
    first_page.row_begin = 0;
    first_page.row_end = 1;
    const int64_t boundary = file->ReadColumnChunk(0, col, first_page).num_slots();
    ASSERT_LT(boundary, rows) << "column " << col << " has one page";
    ColumnReadOptions next = first_page;
    next.row_begin = boundary;
    next.row_end = boundary + 1;
    EXPECT_EQ(file->ReadColumnChunk(0, col, next).first_row(), boundary) << "column " << col;
    next.row_begin = boundary - 1;
    next.row_end = boundary;
    const ColumnData last_of_first = file->ReadColumnChunk(0, col, next);
    EXPECT_EQ(last_of_first.first_row(), 0) << "column " << col;
    EXPECT_EQ(last_of_first.num_slots(), boundary) << "column " << col;
  }
  ColumnReadOptions o;
  o.row_begin = 10;
  o.row_end = 20;
  EXPECT_THROW_WITH(file->ReadColumnChunk(0, 2, o), InvalidArgument, "repetition levels");
  o.row_begin = 30;
  EXPECT_THROW_WITH(file->ReadColumnChunk(0, 0, o), InvalidArgument, "bad row range");
}

INSTANTIATE_TEST_SUITE_P(
    All, ColumnFormsTest,
    ::testing::Combine(::testing::Values(Codec::kUncompressed, Codec::kSnappy, Codec::kZstd), ::testing::Values(1, 2),
                       ::testing::Values(Encoding::kPlainDictionary, Encoding::kPlain, Encoding::kDeltaLengthByteArray,
                                         Encoding::kDeltaByteArray, Encoding::kByteStreamSplit)),
    [](const ::testing::TestParamInfo<FormParam>& info) {
      return ToString(std::get<0>(info.param)) + "_v" + std::to_string(std::get<1>(info.param)) + "_" +
             ToString(std::get<2>(info.param));
    });

// Expected non-null values of "s" in the order they are stored.
void ExpectStrings(const ColumnData& d, const std::vector<std::string>& want) {
  ASSERT_EQ(d.num_values(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(d.bytes_at(static_cast<int64_t>(i)), want[i]) << "value " << i;
}

TEST(ColumnViewsTest, ViewsOutliveTheFileTheScratchAndTheReusedOutput) {
  for (Codec codec : {Codec::kUncompressed, Codec::kSnappy}) {
    SCOPED_TRACE(ToString(codec));
    MemFile f;
    WriterOptions options;
    options.codec = codec;
    options.dictionary = false;
    options.page_bytes = 500;
    const Rows a = MakeRows(800, 500, 3), b = MakeRows(800, 500, 4);
    WriteGroups(f, {a, b}, options);
    ColumnData kept_a, kept_b;
    {
      auto file = f.Open();
      ReadScratch scratch;
      ColumnData out;
      file->ReadColumnChunk(0, 0, &out, &scratch, Views());
      kept_a = out;  // a copy shares the page memory
      // Reading into the same output and scratch must not recycle memory a copy still holds.
      file->ReadColumnChunk(1, 0, &out, &scratch, Views());
      ExpectStrings(out, b.strings);
      ExpectStrings(kept_a, a.strings);
      kept_b = std::move(out);
    }
    // File, scratch and output are gone; the views still read their pages.
    ASSERT_TRUE(kept_a.has_views());
    ExpectStrings(kept_a, a.strings);
    ExpectStrings(kept_b, b.strings);
    EXPECT_EQ(kept_a.def_levels(), a.s_def);
  }
}

TEST(ColumnViewsTest, PageMemoryIsReusedOnceNoResultHoldsIt) {
  MemFile f;
  WriterOptions options;
  options.codec = Codec::kSnappy;
  options.dictionary = false;
  const Rows a = MakeRows(3000, 3000, 5), b = MakeRows(3000, 3000, 6);
  WriteGroups(f, {a, b}, options);
  auto file = f.Open();
  ReadScratch scratch;
  ColumnData out;
  for (int round = 0; round < 6; ++round) {
    file->ReadColumnChunk(round % 2, 0, &out, &scratch, Views());
    ExpectStrings(out, round % 2 == 0 ? a.strings : b.strings);
  }
  // One block per chunk, recycled chunk after chunk: the pool does not grow with the number of reads.
  EXPECT_EQ(scratch.view_buffers.size(), 1u);
}

TEST(ColumnDictionaryTest, AllDictionaryChunkKeepsIndicesAndTheDictionary) {
  MemFile f;
  WriterOptions options;
  options.page_bytes = 300;
  const Rows r = MakeRows(2000, 25, 7);
  WriteGroups(f, {r}, options);
  auto file = f.Open();
  for (const ColumnReadOptions& form : {ViewsAndDictionary(), CopiedDictionary()}) {
    ColumnData d = file->ReadColumnChunk(0, 0, form);
    ASSERT_TRUE(d.has_dictionary());
    EXPECT_EQ(d.has_views(), false);
    EXPECT_EQ(d.dictionary().has_views(), form.byte_views);
    std::set<std::string> distinct(r.strings.begin(), r.strings.end());
    EXPECT_EQ(d.dictionary().num_values(), static_cast<int64_t>(distinct.size()));
    EXPECT_EQ(d.def_levels(), r.s_def);
    ExpectStrings(d, r.strings);
    // The dictionary outlives the column it came from.
    std::shared_ptr<const ColumnData> dictionary = d.shared_dictionary();
    const std::string first(d.bytes_at(0));
    d = ColumnData();
    file.reset();
    bool found = false;
    for (int64_t k = 0; k < dictionary->num_values(); ++k) found = found || dictionary->bytes_at(k) == first;
    EXPECT_TRUE(found);
    file = f.Open();
  }
}

// One row group whose "s" chunk mixes dictionary and PLAIN pages: few distinct strings first (dictionary-encoded
// pages that pay), then distinct ones that outgrow the dictionary's limit. Returns the rows.
Rows WriteMixedDictionaryChunk(MemFile& f, int page_version, bool page_checksums) {
  WriterOptions options;
  options.page_version = page_version;
  options.page_bytes = 400;
  options.dictionary_page_bytes = 600;
  options.page_checksums = page_checksums;
  Rows r = Concat(MakeRows(1500, 20, 8), MakeRows(1500, 3000, 9));
  WriteGroups(f, {r}, options);
  return r;
}

TEST(ColumnDictionaryTest, ChunkMixingDictionaryAndPlainPagesFallsBackToValues) {
  for (int page_version : {1, 2}) {
    SCOPED_TRACE(page_version);
    MemFile f;
    const Rows r = WriteMixedDictionaryChunk(f, page_version, /*page_checksums=*/false);
    auto file = f.Open();
    const auto& encodings = file->metadata().row_groups[0].columns[0].encodings;
    auto has = [&](Encoding e) { return std::find(encodings.begin(), encodings.end(), e) != encodings.end(); };
    ASSERT_TRUE(has(Encoding::kPlain));
    ASSERT_TRUE(has(Encoding::kRleDictionary) || has(Encoding::kPlainDictionary));
    const ColumnData copied = file->ReadColumnChunk(0, 0);
    ExpectStrings(copied, r.strings);
    for (const ColumnReadOptions& form : {ViewsAndDictionary(), CopiedDictionary(), Views()}) {
      ColumnData d = file->ReadColumnChunk(0, 0, form);
      EXPECT_FALSE(d.has_dictionary());
      EXPECT_EQ(d.has_views(), form.byte_views);
      ExpectSameValues(copied, d, form.byte_views ? "views" : "copied");
    }
  }
}

// A row range decodes the chunk's dictionary page only when one of its pages is dictionary-encoded: a range in the
// PLAIN part reads nothing of it (shown by a damaged dictionary page), a range in the dictionary part still checks it.
TEST(ColumnDictionaryTest, RowRangeDecodesTheDictionaryOnlyWhenItNeedsIt) {
  for (int page_version : {1, 2}) {
    SCOPED_TRACE(page_version);
    MemFile f;
    const Rows r = WriteMixedDictionaryChunk(f, page_version, /*page_checksums=*/true);
    const ColumnData whole = f.Open()->ReadColumnChunk(0, 0);
    const ColumnChunkMeta meta = f.Open()->metadata().row_groups[0].columns[0];
    ASSERT_TRUE(meta.dictionary_page_offset.has_value());
    std::string bytes = f.Bytes();
    bytes[static_cast<size_t>(meta.data_page_offset) - 1] ^= 0x5a;  // the dictionary page's last byte
    f.SetBytes(bytes);
    ReaderOptions reader;
    reader.verify_crc = true;
    auto file = ParquetFile::Open(*f.fs, f.path, reader);
    const auto rows = static_cast<int64_t>(r.s_def.size());
    for (bool views : {false, true}) {
      ColumnReadOptions o;
      o.byte_views = views;
      o.row_begin = rows - 100;  // distinct strings: PLAIN pages
      o.row_end = rows;
      const ColumnData tail = file->ReadColumnChunk(0, 0, o);
      const auto want = Slots(whole), got = Slots(tail);
      for (int64_t row = o.row_begin; row < rows; ++row) {
        ASSERT_EQ(got[static_cast<size_t>(row - tail.first_row())], want[static_cast<size_t>(row)]) << row;
      }
      o.row_begin = 0;  // the first rows: dictionary-encoded
      o.row_end = 10;
      EXPECT_THROW_WITH(file->ReadColumnChunk(0, 0, o), CorruptDataError, "page CRC mismatch");
    }
    EXPECT_THROW_WITH(file->ReadColumnChunk(0, 0), CorruptDataError, "page CRC mismatch");
  }
}

TEST(ColumnViewsTest, FixedWidthTypesIgnoreTheOptionsAndSpacedRefusesViews) {
  MemFile f;
  f.Write(Schema::FromFields({Leaf("x", PhysicalType::kInt64), Leaf("b", PhysicalType::kByteArray)}),
          {ColumnData::Int64s({5, 6, 5, 7}), ColumnData::ByteArrays({"a", "bb", "a", "ccc"})});
  auto file = f.Open();
  ColumnData x = file->ReadColumnChunk(0, 0, ViewsAndDictionary());
  EXPECT_FALSE(x.has_views());
  EXPECT_FALSE(x.has_dictionary());
  EXPECT_EQ(x.values<int64_t>()[3], 7);
  ColumnData b = file->ReadColumnChunk(0, 1, Views());
  ASSERT_TRUE(b.has_views());
  EXPECT_EQ(b.views()[3], "ccc");
  b.set_type(PhysicalType::kFixedLenByteArray, 1);  // a fixed width, still views
  EXPECT_THROW_WITH(b.Spaced(), InvalidArgument, "Materialize");
}

TEST(ColumnViewsTest, WriterTakesMaterializedViewsOnly) {
  MemFile f;
  const Schema schema = Schema::FromFields({Leaf("b", PhysicalType::kByteArray)});
  f.Write(schema, {ColumnData::ByteArrays({"a", "bb", "a", "ccc"})});
  ColumnData b = f.Open()->ReadColumnChunk(0, 0, ViewsAndDictionary());
  ASSERT_TRUE(b.has_dictionary());
  MemFile g;
  EXPECT_THROW_WITH(g.Write(schema, {b}), InvalidArgument, "column 'b'", "Materialize");
  b.Materialize();
  g.Write(schema, {b});
  EXPECT_TRUE(SameColumn(g.Open()->ReadColumnChunk(0, 0), f.Open()->ReadColumnChunk(0, 0)));
}

TEST(MemoryMapTest, MappedLocalFilesReadTheSameAndViewsOutliveTheFile) {
  lakerun::testing::TempDir dir;
  for (Codec codec : {Codec::kUncompressed, Codec::kSnappy}) {
    SCOPED_TRACE(ToString(codec));
    const std::string path = dir.Join(ToString(codec) + ".parquet");
    WriterOptions options;
    options.codec = codec;
    options.page_bytes = 600;
    const Rows a = MakeRows(1200, 30, 9), b = MakeRows(700, 900, 10);
    {
      ParquetWriter w(LocalFileSystem(), path, TestSchema(), options);
      w.WriteRowGroup(Columns(a));
      w.WriteRowGroup(Columns(b));
      w.Close();
    }
    ReaderOptions mapped;
    mapped.memory_map = true;
    auto read = ParquetFile::Open(LocalFileSystem(), path);
    ColumnData kept;
    {
      auto file = ParquetFile::Open(LocalFileSystem(), path, mapped);
      ReadScratch scratch;
      for (int rg = 0; rg < 2; ++rg) {
        for (int col = 0; col < file->schema().num_columns(); ++col) {
          const ColumnData want = read->ReadColumnChunk(rg, col);
          ColumnData copied;
          file->ReadColumnChunk(rg, col, &copied, &scratch);
          EXPECT_TRUE(SameColumn(copied, want));
          for (const ColumnReadOptions& form : {Views(), ViewsAndDictionary()}) {
            ExpectSameValues(want, file->ReadColumnChunk(rg, col, form), "mapped");
          }
        }
      }
      kept = file->ReadColumnChunk(1, 0, Views());
    }
    // The mapping (uncompressed) or page memory (snappy) outlives the file.
    ExpectStrings(kept, b.strings);
  }
  // Files of other file systems are read as usual.
  MemFile f;
  WriteGroups(f, {MakeRows(50, 5, 11)}, {});
  ReaderOptions mapped;
  mapped.memory_map = true;
  auto file = ParquetFile::Open(*f.fs, f.path, mapped);
  EXPECT_TRUE(SameColumn(file->ReadColumnChunk(0, 0), f.Open()->ReadColumnChunk(0, 0)));
}

}  // namespace
}  // namespace lakerun::parquet
