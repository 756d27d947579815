#include "track/ids.h"

#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>

#include "lakerun/base/file_system.h"

namespace lakerun::track {
namespace {

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(std::random_device{}() ^
                             static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return rng;
}
std::mutex& RngMutex() {
  static std::mutex mu;
  return mu;
}

uint64_t Random64() {
  std::lock_guard<std::mutex> lock(RngMutex());
  return Rng()();
}

}  // namespace

int64_t SystemClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string NewUuidHex() {
  uint64_t hi = Random64();
  uint64_t lo = Random64();
  hi = (hi & ~0xF000ull) | 0x4000ull;                    // version 4
  lo = (lo & ~(0xC000ull << 48)) | (0x8000ull << 48);    // variant 10xx
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

std::string NewExperimentId() {
  // 10^17 .. 10^18-1: always 18 digits, like MLflow's _generate_unique_integer_id.
  const uint64_t v = 100000000000000000ull + Random64() % 900000000000000000ull;
  return std::to_string(v);
}

std::string NewRunName() {
  static const char* const kAdjectives[] = {"able", "bold", "brave", "bright", "calm", "clever", "crisp", "eager",
                                            "fair", "gentle", "keen", "lucky", "merry", "nimble", "quiet", "rapid",
                                            "sharp", "silent", "smooth", "sunny", "swift", "tidy", "vivid", "wise"};
  static const char* const kNouns[] = {"ant", "bass", "bat", "bear", "crane", "deer", "doe", "eel", "finch", "fox",
                                       "gnu", "hare", "hawk", "lark", "lynx", "mole", "moth", "newt", "owl", "ram",
                                       "seal", "slug", "swan", "wolf"};
  const uint64_t r = Random64();
  return std::string(kAdjectives[r % 24]) + "-" + kNouns[(r >> 8) % 24] + "-" + std::to_string((r >> 16) % 1000);
}

StoreOptions WithDefaults(StoreOptions options) {
  if (!options.clock_ms) options.clock_ms = SystemClockMs;
  if (!options.new_run_id) options.new_run_id = NewUuidHex;
  if (!options.new_experiment_id) options.new_experiment_id = NewExperimentId;
  if (options.file_system == nullptr) options.file_system = &LocalFileSystem();
  return options;
}

}  // namespace lakerun::track
