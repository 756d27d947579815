// Reader for the IDX files Fashion-MNIST (and MNIST) ship in, gzipped or not.
//
// An IDX file is a big-endian header — magic 0x00000800 | (type << 8) | ndims, then one uint32 per dimension —
// followed by the raw values. Fashion-MNIST uses unsigned bytes: images are 0x00000803 (count, rows, cols) and
// labels 0x00000801 (count). The reader decompresses with zlib, checks the magic, the dimensions and that the
// payload holds exactly the declared number of bytes, and throws:
//   IoError          the file is missing or unreadable (the message suggests installing dataset-fashion-mnist);
//   CorruptDataError bad magic, a truncated payload, trailing bytes, a broken gzip stream.
// Every message names the path.
//
//   IdxImages train = ReadIdxImages("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz");
//   IdxLabels labels = ReadIdxLabels("/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz");
//
// Torch-free on purpose: FashionMnistData (dataset.h) turns these into tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lakerun::examples {

/// Images as stored: `count` images of `rows` x `cols` bytes, row-major, one after the other.
struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  ///< count * rows * cols bytes
};

/// Labels as stored: one byte per sample.
struct IdxLabels {
  std::vector<uint8_t> labels;
};

inline constexpr uint32_t kIdxImagesMagic = 0x00000803;
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;

/// Reads an idx3-ubyte image file (gzipped or plain).
IdxImages ReadIdxImages(const std::string& path);
/// Reads an idx1-ubyte label file (gzipped or plain).
IdxLabels ReadIdxLabels(const std::string& path);

/// The default location of the Debian package's files.
inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

}  // namespace lakerun::examples
