// Fashion-MNIST held in memory as normalized float tensors.
//
//   FashionMnistOptions options;
//   options.data_dir = "/usr/share/datasets/fashion-mnist";
//   FashionMnist data = LoadFashionMnist(options);
//   data.train_images  // [60000, 1, 28, 28] float32, (x / 255 - mean) / std
//   data.train_labels  // [60000] int64 in [0, 10)
//
// Reads the four IDX files (idx_reader.h) and checks that images and labels agree in count and that every label
// is a class index. Normalization is the same sequence of float ops as torchvision's ToTensor + Normalize, so a
// Python peer computing it the same way gets bit-identical inputs.
#pragma once

#include <ATen/ATen.h>

#include <string>

namespace lakerun::examples {

struct FashionMnistOptions {
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  /// MNIST's statistics, as in PyTorch's MNIST example (Fashion-MNIST's own are 0.2860 / 0.3530).
  double mean = 0.1307;
  double std = 0.3081;
};

struct FashionMnist {
  at::Tensor train_images;
  at::Tensor train_labels;
  at::Tensor test_images;
  at::Tensor test_labels;
};

inline constexpr int64_t kFashionMnistClasses = 10;

/// Loads and normalizes the train and test splits. Throws IoError / CorruptDataError naming the file at fault.
FashionMnist LoadFashionMnist(const FashionMnistOptions& options);

/// `<dir>/<stem>.gz` if it exists, else `<dir>/<stem>` if that exists, else the .gz path (whose open then fails
/// with a message naming it).
std::string ResolveIdxPath(const std::string& dir, const std::string& stem);

}  // namespace lakerun::examples
