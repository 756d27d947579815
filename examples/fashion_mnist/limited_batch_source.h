// A BatchSource that ends each epoch after at most `limit` batches of another (Trainer::Test has no
// limit_test_batches).
#pragma once

#include <cstdint>

#include "lakerun/train/trainer.h"

namespace lakerun::examples {

class LimitedBatchSource final : public train::BatchSource {
 public:
  /// limit < 0: no limit. `inner` must outlive this object.
  LimitedBatchSource(train::BatchSource& inner, int64_t limit) : inner_(inner), limit_(limit) {}
  void SetEpoch(uint64_t epoch) override {
    inner_.SetEpoch(epoch);
    taken_ = 0;
  }
  std::optional<train::Batch> Next() override {
    if (limit_ >= 0 && taken_ >= limit_) return std::nullopt;
    ++taken_;
    return inner_.Next();
  }
  std::map<std::string, int64_t> state_dict() const override { return inner_.state_dict(); }
  void load_state_dict(const std::map<std::string, int64_t>& state) override { inner_.load_state_dict(state); }

 private:
  train::BatchSource& inner_;
  int64_t limit_;
  int64_t taken_ = 0;
};

}  // namespace lakerun::examples
