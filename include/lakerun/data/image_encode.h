// Pixels to JPEG bytes: for building image tables (and test data) that the loader's image collation decodes.
#pragma once

#include <cstdint>
#include <string>

namespace lakerun::data {

/// Encodes a row-major `height` x `width` image of `channels` (1: grey, 3: RGB) interleaved bytes as a baseline
/// JPEG at `quality` (1-100) with libjpeg's defaults. Throws InvalidArgument for bad dimensions, channels or quality,
/// CorruptDataError if libjpeg reports an error.
std::string EncodeJpeg(const uint8_t* pixels, int height, int width, int channels, int quality);

}  // namespace lakerun::data
