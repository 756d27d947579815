#include "objstore/object_store.h"

#include <algorithm>
#include <random>

#include "lakerun/base/error.h"

namespace lakerun::objstore {
namespace {

std::string RandomHex() {
  std::random_device device;
  std::mt19937_64 rng((static_cast<uint64_t>(device()) << 32) ^ device());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 2; ++i) {
    uint64_t bits = rng();
    for (int j = 0; j < 16; ++j, bits >>= 4) out.push_back(kHex[bits & 15]);
  }
  return out;
}

}  // namespace

std::optional<ObjectInfo> ObjectStore::HeadWithTail(const std::string& key, size_t n, std::string* tail) {
  std::optional<ObjectInfo> info = Head(key);
  if (!info) return std::nullopt;
  const uint64_t take = std::min<uint64_t>(n, info->size);
  tail->resize(static_cast<size_t>(take));
  if (take > 0) GetRange(key, info->size - take, tail->size(), tail->data());
  return info;
}

ConditionalPut ObjectStore::ProbeConditionalPut() {
  std::lock_guard<std::mutex> lock(probe_mu_);
  if (conditional_put_ != ConditionalPut::kUnknown) return conditional_put_;
  const std::string key = "_lakerun_probe/" + RandomHex();
  const std::string body = "lakerun put-if-absent probe";
  LAKERUN_CHECK_AS(IoError, Put(key, body, /*if_absent=*/true), root_uri(), "/", key,
                   ": the put-if-absent probe found its freshly named object already there");
  bool second = false;
  try {
    second = Put(key, body, /*if_absent=*/true);
  } catch (...) {
    Delete(key);
    throw;
  }
  Delete(key);
  conditional_put_ = second ? ConditionalPut::kIgnored : ConditionalPut::kHonoured;
  return conditional_put_;
}

}  // namespace lakerun::objstore
