#include "dataset.h"

#include <sys/stat.h>

#include "idx_reader.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"

namespace lakerun::examples {
namespace {

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

struct Split {
  at::Tensor images;
  at::Tensor labels;
};

Split LoadSplit(const std::string& dir, const std::string& prefix, const FashionMnistOptions& options) {
  const std::string images_path = ResolveIdxPath(dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = ResolveIdxPath(dir, prefix + "-labels-idx1-ubyte");
  IdxImages images = ReadIdxImages(images_path);
  IdxLabels labels = ReadIdxLabels(labels_path);
  LAKERUN_CHECK_AS(CorruptDataError, static_cast<int64_t>(labels.labels.size()) == images.count, labels_path,
                   " holds ", labels.labels.size(), " labels but ", images_path, " holds ", images.count, " images");
  for (size_t i = 0; i < labels.labels.size(); ++i) {
    LAKERUN_CHECK_AS(CorruptDataError, labels.labels[i] < kFashionMnistClasses, labels_path, ": label ", i, " is ",
                     int{labels.labels[i]}, ", expected a class index in [0, ", kFashionMnistClasses, ")");
  }
  Split split;
  // from_blob borrows the vectors; the arithmetic below makes owned tensors before they go away.
  at::Tensor raw = at::from_blob(images.pixels.data(), {images.count, 1, images.rows, images.cols}, at::kByte);
  split.images = raw.to(at::kFloat).div_(255.0).sub_(options.mean).div_(options.std);
  split.labels =
      at::from_blob(labels.labels.data(), {static_cast<int64_t>(labels.labels.size())}, at::kByte).to(at::kLong);
  return split;
}

}  // namespace

std::string ResolveIdxPath(const std::string& dir, const std::string& stem) {
  const std::string gz = JoinPath(dir, stem + ".gz");
  if (IsFile(gz)) return gz;
  const std::string plain = JoinPath(dir, stem);
  if (IsFile(plain)) return plain;
  return gz;
}

FashionMnist LoadFashionMnist(const FashionMnistOptions& options) {
  LAKERUN_CHECK(options.std > 0, "normalization std must be positive, got ", options.std);
  Split train = LoadSplit(options.data_dir, "train", options);
  Split test = LoadSplit(options.data_dir, "t10k", options);
  return FashionMnist{std::move(train.images), std::move(train.labels), std::move(test.images),
                      std::move(test.labels)};
}

}  // namespace lakerun::examples
