// libFuzzer driver for one target of fuzz_targets.cc, chosen at compile time by LAKERUN_FUZZ_TARGET. lakerun::Error
// is the documented way to reject bad input and is swallowed; any other exception escapes and libFuzzer reports it
// as a crash (deadly signal from std::terminate), as do sanitizer findings, timeouts and out-of-memory.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_targets.h"
#include "lakerun/base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const lakerun::parquet::fuzz::FuzzTarget* target = [] {
    const auto* t = lakerun::parquet::fuzz::FindTarget(LAKERUN_FUZZ_TARGET);
    if (t == nullptr) {
      std::fprintf(stderr, "unknown fuzz target %s\n", LAKERUN_FUZZ_TARGET);
      std::abort();
    }
    return t;
  }();
  try {
    target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const lakerun::Error&) {
    // rejected cleanly
  }
  return 0;
}
