#include "lakerun/data/shuffle.h"

#include <algorithm>
#include <utility>

#include "lakerun/base/error.h"

namespace lakerun::data {
namespace {
// Streams keep the random values of different decisions independent.
constexpr uint64_t kBlockStream = 0x626c6f636bULL;   // "block"
constexpr uint64_t kWindowStream = 0x77696e646fULL;  // "windo"
}  // namespace

uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t CounterRandom(uint64_t seed, uint64_t epoch, uint64_t stream, uint64_t index) {
  uint64_t h = Mix64(seed);
  h = Mix64(h ^ epoch);
  h = Mix64(h ^ stream);
  return Mix64(h ^ index);
}

uint64_t Bounded(uint64_t random, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(random) * n) >> 64);
}

GlobalOrder::GlobalOrder(uint64_t num_samples, uint64_t seed, uint64_t epoch, ShuffleOptions options)
    : num_samples_(num_samples), seed_(seed), epoch_(epoch), options_(options) {
  LAKERUN_CHECK(options.block_size > 0, "shuffle block_size must be positive, got ", options.block_size);
  LAKERUN_CHECK(options.window_blocks > 0, "shuffle window_blocks must be positive, got ", options.window_blocks);
  if (!options_.enabled || num_samples_ == 0) return;
  const uint64_t block = options_.block_size;
  const uint64_t num_blocks = (num_samples_ + block - 1) / block;
  block_order_.resize(num_blocks);
  for (uint64_t i = 0; i < num_blocks; ++i) block_order_[i] = i;
  for (uint64_t i = num_blocks; i > 1; --i) {
    const uint64_t j = Bounded(CounterRandom(seed_, epoch_, kBlockStream, i - 1), i);
    std::swap(block_order_[i - 1], block_order_[j]);
  }
  const uint64_t num_windows = (num_blocks + options_.window_blocks - 1) / options_.window_blocks;
  window_starts_.reserve(num_windows + 1);
  uint64_t pos = 0;
  for (uint64_t b = 0; b < num_blocks; ++b) {
    if (b % options_.window_blocks == 0) window_starts_.push_back(pos);
    const uint64_t id = block_order_[b];
    pos += std::min(block, num_samples_ - id * block);
  }
  window_starts_.push_back(pos);
  LAKERUN_INTERNAL_ASSERT(pos == num_samples_);
}

void GlobalOrder::LoadWindow(uint64_t window) const {
  const uint64_t block = options_.block_size;
  const uint64_t first = window * options_.window_blocks;
  const uint64_t last = std::min<uint64_t>(block_order_.size(), first + options_.window_blocks);
  window_samples_.clear();
  window_samples_.reserve(window_starts_[window + 1] - window_starts_[window]);
  for (uint64_t b = first; b < last; ++b) {
    const uint64_t begin = block_order_[b] * block;
    const uint64_t end = std::min(num_samples_, begin + block);
    for (uint64_t s = begin; s < end; ++s) window_samples_.push_back(s);
  }
  // Index streams by window so every window's permutation is independent of the others. CounterRandom(seed, epoch,
  // stream, index) is Mix64(key ^ index) with the key below, mixed once per window rather than once per sample.
  const uint64_t stream = kWindowStream ^ Mix64(window);
  const uint64_t key = Mix64(Mix64(Mix64(seed_) ^ epoch_) ^ stream);
  for (uint64_t i = window_samples_.size(); i > 1; --i) {
    const uint64_t j = Bounded(Mix64(key ^ (i - 1)), i);
    std::swap(window_samples_[i - 1], window_samples_[j]);
  }
  cached_window_ = window;
}

uint64_t GlobalOrder::At(uint64_t pos) const {
  LAKERUN_CHECK(pos < num_samples_, "position ", pos, " is past the end of an epoch of ", num_samples_, " samples");
  if (!options_.enabled) return pos;
  if (cached_window_ == UINT64_MAX || pos < window_starts_[cached_window_] ||
      pos >= window_starts_[cached_window_ + 1]) {
    const auto it = std::upper_bound(window_starts_.begin(), window_starts_.end(), pos);
    LoadWindow(static_cast<uint64_t>(it - window_starts_.begin()) - 1);
  }
  return window_samples_[pos - window_starts_[cached_window_]];
}

std::vector<uint64_t> GlobalOrder::Materialize() const {
  std::vector<uint64_t> out(num_samples_);
  for (uint64_t i = 0; i < num_samples_; ++i) out[i] = At(i);
  return out;
}

}  // namespace lakerun::data
