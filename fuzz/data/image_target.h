// The image fuzz target: JPEG/PNG bytes from a table cell through the loader's decode and transform, as
// Collator::Images runs them. Shared by the libFuzzer binary (fuzz_image_main.cc) and the corpus replay test.
//
// Contract: returns normally or throws a lakerun::Error subclass. A crash, a sanitizer report, a hang or any other
// exception type is a bug.
#pragma once

#include <string_view>

namespace lakerun::data::fuzz {

/// Input: 4 parameter bytes, then the image bytes.
///   byte 0: bit 0 grey (1 channel) instead of RGB, bit 1 float output, bit 2 random crop, bit 3 flip always;
///   byte 1: resize of the shorter side, 0-63 (0: keep the decoded size);
///   byte 2: crop side, 0-47 (0: no crop);
///   byte 3: minimum shorter side for JPEG's DCT scaling, 0-31 (0: full size).
/// Images are limited to 2^20 pixels (the limit is part of what is tested; it also bounds the fuzzer's memory).
void FuzzImage(std::string_view data);

}  // namespace lakerun::data::fuzz
