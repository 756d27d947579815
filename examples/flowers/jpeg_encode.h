// Grey images to JPEG bytes, for turning Fashion-MNIST into a stand-in "flowers" table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lakerun::examples::flowers {

/// Bilinear resampling of a grey `height` x `width` image (row-major bytes) to `size` x `size`, with pixel centres
/// aligned (as PIL's and torchvision's bilinear resize without antialiasing).
std::vector<uint8_t> ResizeGrey(const uint8_t* pixels, int height, int width, int size);

/// Encodes a grey image as a baseline JPEG (one component) at `quality` (1-100) with libjpeg.
/// Throws InvalidArgument for bad dimensions or quality, CorruptDataError if libjpeg reports an error.
std::string EncodeGreyJpeg(const uint8_t* pixels, int height, int width, int quality);

}  // namespace lakerun::examples::flowers
