#include "mnist_table.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "lakerun/base/file_system.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"

namespace lakerun::bench {
namespace {

namespace pq = lakerun::parquet;

std::string ReadGz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return {};
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, n);
  gzclose(f);
  return out;
}

}  // namespace

void LoadImages(int64_t rows, std::vector<uint8_t>* images, std::vector<int64_t>* labels, std::string* origin) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  const std::string img = ReadGz(dir + "train-images-idx3-ubyte.gz");
  const std::string lab = ReadGz(dir + "train-labels-idx1-ubyte.gz");
  images->resize(rows * 784);
  labels->resize(rows);
  if (img.size() >= 16 + 784 && lab.size() > 8) {
    const int64_t have = static_cast<int64_t>((img.size() - 16) / 784);
    for (int64_t i = 0; i < rows; ++i) {
      std::memcpy(images->data() + i * 784, img.data() + 16 + (i % have) * 784, 784);
      (*labels)[i] = static_cast<uint8_t>(lab[8 + i % have]);
    }
    *origin = "Fashion-MNIST train set";
  } else {
    uint64_t x = 1;
    for (auto& b : *images) b = static_cast<uint8_t>((x = x * 6364136223846793005ULL + 1) >> 56);
    for (int64_t i = 0; i < rows; ++i) (*labels)[i] = i % 10;
    *origin = "synthetic bytes (Fashion-MNIST not found)";
  }
}

void WriteMnistTable(const std::string& path, const std::vector<uint8_t>& images, const std::vector<int64_t>& labels,
                     int64_t row_group_rows, pq::Codec codec) {
  pq::Schema schema = pq::Schema::FromFields(
      {pq::Leaf("image", pq::PhysicalType::kFixedLenByteArray, pq::Repetition::kRequired, {}, 784),
       pq::Leaf("label", pq::PhysicalType::kInt64)});
  pq::WriterOptions options;
  options.codec = codec;
  pq::ParquetWriter writer(lakerun::LocalFileSystem(), path, schema, options);
  const int64_t rows = static_cast<int64_t>(labels.size());
  for (int64_t begin = 0; begin < rows; begin += row_group_rows) {
    const int64_t n = std::min(row_group_rows, rows - begin);
    writer.WriteRowGroup({pq::ColumnData::FromRaw(pq::PhysicalType::kFixedLenByteArray, 784,
                                                  images.data() + begin * 784, n),
                          pq::ColumnData::FromRaw(pq::PhysicalType::kInt64, 0, labels.data() + begin, n)});
  }
  writer.Close();
}

}  // namespace lakerun::bench
