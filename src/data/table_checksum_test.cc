// Page CRCs through the loader: a damaged page of a Parquet table fails the epoch with the reader's error (file, row
// group, column, page, offset) at the consumer, and no sample of that page's row group is ever yielded.
#include <ATen/ATen.h>

#include <set>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;

constexpr int64_t kRows = 400;
constexpr int64_t kGroupRows = 50;
constexpr int kDamagedGroup = 3;

// id = row, image = 16 bytes derived from it; row groups of kGroupRows.
void WriteTable(const std::string& path, pq::Codec codec = pq::Codec::kZstd) {
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("id", pq::PhysicalType::kInt64),
       pq::Leaf("image", pq::PhysicalType::kFixedLenByteArray, pq::Repetition::kRequired, {}, 16)});
  pq::WriterOptions options;
  options.codec = codec;
  pq::ParquetWriter writer(LocalFileSystem(), path, schema, options);
  for (int64_t begin = 0; begin < kRows; begin += kGroupRows) {
    std::vector<int64_t> ids;
    std::vector<std::string> images;
    for (int64_t i = begin; i < begin + kGroupRows; ++i) {
      ids.push_back(i);
      std::string image(16, '\0');
      for (size_t k = 0; k < image.size(); ++k) image[k] = static_cast<char>(i * 31 + static_cast<int64_t>(k) * 7);
      images.push_back(image);
    }
    writer.WriteRowGroup({pq::ColumnData::Int64s(ids),
                          pq::ColumnData::FixedBytes(pq::PhysicalType::kFixedLenByteArray, 16, images)});
  }
  writer.Close();
}

// Flips one byte in the stored bytes of the last page of row group kDamagedGroup's "image" chunk; returns that
// page's header offset.
uint64_t DamageAPage(const std::string& path) {
  const auto pages = pq::ParquetFile::Open(LocalFileSystem(), path)->ReadPageHeaders(kDamagedGroup, 1);
  const pq::PageSummary& page = pages.back();
  std::string bytes = LocalFileSystem().ReadFile(path);
  bytes[page.offset + page.header_size + static_cast<size_t>(page.compressed_size) / 2] ^= 0x40;
  LocalFileSystem().WriteAtomically(path, bytes);
  return page.offset;
}

LoaderOptions Shuffled(size_t threads) {
  LoaderOptions o;
  o.batch_size = 16;
  o.num_threads = threads;
  o.seed = 3;
  o.shuffle = {true, 2, 2};
  o.timeout = std::chrono::seconds(30);
  return o;
}

TEST(TableChecksumTest, ADamagedPageFailsTheEpochAndNoSampleOfItsRowGroupIsYielded) {
  testing::TempDir dir;
  const std::string path = dir.Join("t.parquet");
  WriteTable(path);
  const uint64_t offset = DamageAPage(path);
  for (bool mapped : {false, true}) {
    for (size_t threads : {0, 2}) {
      SCOPED_TRACE(::testing::Message() << "mapped=" << mapped << " threads=" << threads);
      TableOptions t;
      t.memory_map = mapped;
      Loader loader(OpenTable(path, t), Shuffled(threads));
      std::set<int64_t> yielded;
      try {
        while (auto batch = loader.Next()) {
          const at::Tensor& id = batch->at("id");
          yielded.insert(id.data_ptr<int64_t>(), id.data_ptr<int64_t>() + id.numel());
        }
        ADD_FAILURE() << "the epoch ended without an error";
      } catch (const CorruptDataError& e) {
        EXPECT_THAT(e.what(), ::testing::HasSubstr(path + ": row group " + std::to_string(kDamagedGroup) +
                                                   ", column 'image', page "));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("at offset " + std::to_string(offset) + ": page CRC mismatch"));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("epoch 0 batch "));
      }
      for (int64_t id = kDamagedGroup * kGroupRows; id < (kDamagedGroup + 1) * kGroupRows; ++id) {
        ASSERT_EQ(yielded.count(id), 0u) << "sample " << id << " of the damaged row group was yielded";
      }
      EXPECT_THROW_WITH(loader.Next(), CorruptDataError, "page CRC mismatch");  // stays failed
    }
  }
}

TEST(TableChecksumTest, VerificationOffYieldsEverySampleOfADamagedPageUnchecked) {
  testing::TempDir dir;
  const std::string path = dir.Join("t.parquet");
  WriteTable(path, pq::Codec::kUncompressed);  // the damaged bytes decode, as wrong values
  DamageAPage(path);
  TableOptions t;
  t.verify_page_checksums = false;
  Loader loader(OpenTable(path, t), Shuffled(2));
  int64_t samples = 0;
  while (auto batch = loader.Next()) samples += batch->size();
  EXPECT_EQ(samples, kRows);
}

TEST(TableChecksumTest, TablesWrittenWithoutChecksumsLoad) {
  testing::TempDir dir;
  const std::string path = dir.Join("bare.parquet");
  pq::WriterOptions options;
  options.page_checksums = false;
  pq::ParquetWriter writer(LocalFileSystem(), path, pq::Schema::FromFields({pq::Leaf("id", pq::PhysicalType::kInt64)}),
                           options);
  writer.WriteRowGroup({pq::ColumnData::Int64s({4, 5, 6})});
  writer.Close();
  Loader loader(OpenTable(path), Shuffled(0));
  auto batch = loader.Next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->size(), 3);
}

}  // namespace
}  // namespace lakerun::data
