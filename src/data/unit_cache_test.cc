#include "unit_cache.h"

#include <atomic>
#include <thread>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

// A source of `units` units of 10 int64 rows (80 bytes each) that counts its reads.
class CountingSource : public RowSource {
 public:
  explicit CountingSource(size_t units) : units_(units) {}
  const std::vector<ColumnInfo>& columns() const override { return columns_; }
  uint64_t num_rows() const override { return units_ * 10; }
  size_t num_units() const override { return units_; }
  uint64_t unit_start(size_t unit) const override { return unit * 10; }
  std::shared_ptr<const UnitData> ReadUnit(size_t unit) const override {
    ++reads;
    if (unit == fail_unit) LAKERUN_THROW(CorruptDataError, DescribeUnit(unit), ": bad");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    auto buffer = std::make_shared<std::vector<int64_t>>(10, static_cast<int64_t>(unit));
    auto out = std::make_shared<UnitData>();
    out->rows = 10;
    out->columns.push_back({reinterpret_cast<const uint8_t*>(buffer->data()), 80, nullptr, buffer});
    out->bytes = 80;
    return out;
  }
  std::string DescribeUnit(size_t unit) const override { return "unit " + std::to_string(unit); }
  mutable std::atomic<int> reads{0};
  size_t fail_unit = SIZE_MAX;

 private:
  size_t units_;
  std::vector<ColumnInfo> columns_{{"x", ElementType::kInt64, {}}};
};

TEST(UnitCacheTest, ConcurrentGetsOfOneUnitDecodeItOnce) {
  CountingSource source(4);
  UnitCache cache(source, 1 << 20, std::chrono::seconds(10));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (size_t u = 0; u < 4; ++u) {
        auto data = cache.Get(u);
        ASSERT_EQ(reinterpret_cast<const int64_t*>(data->columns[0].data)[3], static_cast<int64_t>(u));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(source.reads.load(), 4);
  EXPECT_EQ(cache.cached_bytes(), 320u);
}

TEST(UnitCacheTest, EvictsLeastRecentlyUsedBeyondTheBudget) {
  CountingSource source(4);
  UnitCache cache(source, 200, std::chrono::seconds(10));  // room for two 80-byte units
  cache.Get(0);
  cache.Get(1);
  cache.Get(0);  // 1 is now the least recently used
  cache.Get(2);  // evicts 1
  EXPECT_LE(cache.cached_bytes(), 200u);
  EXPECT_EQ(source.reads.load(), 3);
  cache.Get(0);
  EXPECT_EQ(source.reads.load(), 3);
  cache.Get(1);
  EXPECT_EQ(source.reads.load(), 4);
}

TEST(UnitCacheTest, ServesUnitsLargerThanTheBudgetWithoutKeepingThem) {
  CountingSource source(2);
  UnitCache cache(source, 10, std::chrono::seconds(10));
  auto held = cache.Get(0);
  EXPECT_EQ(held->rows, 10u);
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

TEST(UnitCacheTest, FailedReadsPropagateAndAreRetried) {
  CountingSource source(2);
  source.fail_unit = 1;
  UnitCache cache(source, 1 << 20, std::chrono::seconds(10));
  EXPECT_THROW_WITH(cache.Get(1), CorruptDataError, "unit 1");
  EXPECT_THROW_WITH(cache.Get(1), CorruptDataError, "unit 1");
  EXPECT_EQ(source.reads.load(), 2);
}

}  // namespace
}  // namespace lakerun::data
