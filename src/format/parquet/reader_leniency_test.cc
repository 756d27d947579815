// Files other writers produce that are odd but valid: the reader must accept them (and still refuse what is
// really corrupt). Pages are assembled by hand; whole files come from ParquetWriter with their footer rewritten.
#include <cstring>

#include "format/parquet/codec.h"
#include "format/parquet/column_chunk_reader.h"
#include "format/parquet/metadata_thrift.h"
#include "format/parquet/parquet_test_util.h"
#include "format/parquet/rle_encoder.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;

// One DATA_PAGE_V2 of INT32 values: `rep` and `def` are the (unprefixed) level sections, `values` the values
// section as stored (already compressed when `codec` compresses), `values_size` its uncompressed size.
std::string PageV2(int32_t num_values, int32_t num_nulls, const std::string& rep, const std::string& def,
                   const std::string& values, size_t values_size) {
  PageHeader h;
  h.type = static_cast<int32_t>(PageType::kDataPageV2);
  h.num_values = num_values;
  h.num_rows = num_values;
  h.num_nulls = num_nulls;
  h.encoding = static_cast<int32_t>(Encoding::kPlain);
  h.repetition_levels_byte_length = static_cast<int32_t>(rep.size());
  h.definition_levels_byte_length = static_cast<int32_t>(def.size());
  h.uncompressed_page_size = static_cast<int32_t>(rep.size() + def.size() + values_size);
  h.compressed_page_size = static_cast<int32_t>(rep.size() + def.size() + values.size());
  h.is_compressed = true;
  h.has_data_header = true;
  std::string out;
  SerializePageHeader(h, &out);
  return out + rep + def + values;
}

ColumnData Decode(const std::string& chunk, int16_t max_def, int16_t max_rep, Codec codec, int64_t num_values) {
  ChunkSpec spec;
  spec.type = PhysicalType::kInt32;
  spec.max_def_level = max_def;
  spec.max_rep_level = max_rep;
  spec.codec = codec;
  spec.num_values = num_values;
  return DecodeColumnChunkBytes(chunk, 4, spec, DecodeContext{});
}

std::string Int32s(const std::vector<int32_t>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

std::string Compressed(Codec codec, const std::string& raw) {
  std::string out;
  Compress(codec, 0, raw, &out);
  return out;
}

TEST(ReaderLeniencyTest, EmptyV2ValuesSectionIsNotDecompressed) {
  // Three nulls: definition levels only, and a values section of 0 bytes although the chunk is compressed.
  const std::vector<int16_t> nulls = {0, 0, 0};
  std::string def;
  EncodeRleHybrid(nulls.data(), 3, 1, &def);
  for (Codec codec : {Codec::kSnappy, Codec::kZstd, Codec::kGzip, Codec::kLz4Raw}) {
    // Followed by a page with values, so the chunk as a whole still decodes through the codec.
    const std::vector<int16_t> present = {1, 0, 1};
    std::string def2;
    EncodeRleHybrid(present.data(), 3, 1, &def2);
    const std::string raw = Int32s({7, 9});
    const std::string chunk = PageV2(3, 3, "", def, "", 0) + PageV2(3, 1, "", def2, Compressed(codec, raw), 8);
    ColumnData d = Decode(chunk, 1, 0, codec, 6);
    EXPECT_EQ(d.num_slots(), 6) << ToString(codec);
    ASSERT_EQ(d.num_values(), 2) << ToString(codec);
    EXPECT_EQ(d.values<int32_t>()[0], 7);
    EXPECT_EQ(d.values<int32_t>()[1], 9);
    EXPECT_EQ(d.def_levels(), (std::vector<int16_t>{0, 0, 0, 1, 0, 1}));
  }
  // A page with no values at all (num_values 0).
  ColumnData empty = Decode(PageV2(0, 0, "", "", "", 0), 1, 0, Codec::kSnappy, 0);
  EXPECT_EQ(empty.num_slots(), 0);
  // Values that are missing are still an error.
  EXPECT_THROW(Decode(PageV2(2, 0, "", "", "", 8), 0, 0, Codec::kSnappy, 2), CorruptDataError);
}

TEST(ReaderLeniencyTest, ZeroRepetitionLevelsInAColumnWithoutRepetitionAreSkipped) {
  const std::string values = Int32s({1, 2, 3});
  // Zero-filled level bytes.
  ColumnData zeros = Decode(PageV2(3, 0, std::string(2, '\0'), "", values, 12), 0, 0, Codec::kUncompressed, 3);
  ASSERT_EQ(zeros.num_values(), 3);
  EXPECT_EQ(zeros.values<int32_t>()[2], 3);
  // Zero levels RLE-encoded at bit width 1, and a nullable column whose definition levels follow them.
  const std::vector<int16_t> zero_levels = {0, 0, 0};
  std::string rep;
  EncodeRleHybrid(zero_levels.data(), 3, 1, &rep);
  ColumnData encoded = Decode(PageV2(3, 0, rep, "", values, 12), 0, 0, Codec::kUncompressed, 3);
  EXPECT_EQ(encoded.num_values(), 3);
  const std::vector<int16_t> defined = {1, 1, 0};
  std::string def;
  EncodeRleHybrid(defined.data(), 3, 1, &def);
  ColumnData nullable =
      Decode(PageV2(3, 1, rep, def, Int32s({4, 5}), 8), 1, 0, Codec::kUncompressed, 3);
  EXPECT_EQ(nullable.def_levels(), (std::vector<int16_t>{1, 1, 0}));
  EXPECT_EQ(nullable.values<int32_t>()[1], 5);
  // A level that is not 0 cannot be ignored.
  const std::vector<int16_t> nonzero = {0, 1, 0};
  std::string bad;
  EncodeRleHybrid(nonzero.data(), 3, 1, &bad);
  EXPECT_THROW_WITH(Decode(PageV2(3, 0, bad, "", values, 12), 0, 0, Codec::kUncompressed, 3), CorruptDataError,
                    "repetition level 1 at slot 1", "column without repetition");
}

TEST(ReaderLeniencyTest, AChunkWithoutValuesIsNotReadEvenAtOffsetZero) {
  Schema schema = Schema::FromFields({Leaf("id", PhysicalType::kInt64),
                                      Leaf("s", PhysicalType::kByteArray, Repetition::kOptional,
                                           LogicalType::String()),
                                      ListOf("l", Leaf("element", PhysicalType::kInt32))});
  MemFile f;
  f.WriteRows(schema, {Value::Struct({{"id", Value::Int(1)},
                                      {"s", Value::String("x")},
                                      {"l", Value::List({Value::Int(2)})}})});
  // What some writers produce for a 0-row file: a row group of 0 rows whose chunks have no pages at offset 0.
  RewriteFooter(f, [](FileMetaData& md) {
    md.num_rows = 0;
    md.row_groups[0].num_rows = 0;
    for (auto& c : md.row_groups[0].columns) {
      c.num_values = 0;
      c.data_page_offset = 0;
      c.dictionary_page_offset.reset();
      c.total_compressed_size = c.total_uncompressed_size = 0;
      c.statistics.reset();
    }
  });
  auto file = f.Open();
  for (int c = 0; c < file->schema().num_columns(); ++c) {
    EXPECT_EQ(file->ReadColumnChunk(0, c).num_slots(), 0) << c;
    ColumnReadOptions range;
    range.row_end = 10;
    range.fetch_range_only = true;
    if (file->schema().column(c).max_rep_level == 0) {
      EXPECT_EQ(file->ReadColumnChunk(0, c, range).num_slots(), 0);
    }
  }
  EXPECT_TRUE(f.ReadAll().empty());
  EXPECT_TRUE(ReadLeadingRows(*file, SelectColumns(file->schema(), {}, f.path), 5).empty());
  // A chunk that claims values at offset 0 is still refused.
  RewriteFooter(f, [](FileMetaData& md) { md.row_groups[0].columns[0].num_values = 1; });
  EXPECT_THROW_WITH(f.Open()->ReadColumnChunk(0, 0), CorruptDataError, "column 'id'", "outside the data section");
}

}  // namespace
}  // namespace lakerun::parquet
