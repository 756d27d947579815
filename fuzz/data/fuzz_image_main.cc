// libFuzzer driver for the image target. lakerun::Error is the documented way to reject bad input and is swallowed;
// any other exception escapes and libFuzzer reports it as a crash, as it does sanitizer findings, timeouts and
// running out of memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "image_target.h"
#include "lakerun/base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    lakerun::data::fuzz::FuzzImage(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const lakerun::Error&) {
    // rejected cleanly
  }
  return 0;
}
