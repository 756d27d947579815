#include "lakerun/data/epoch_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "lakerun/base/error.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::data {
namespace {

constexpr RemainderPolicy kPolicies[] = {RemainderPolicy::kPad, RemainderPolicy::kDrop};

std::vector<uint64_t> RankSamples(const EpochPlan& plan, uint64_t skip = 0) {
  std::vector<uint64_t> out;
  for (uint64_t i = skip; i < plan.size(); ++i) out.push_back(plan.SampleAt(i));
  return out;
}

uint64_t Batches(uint64_t samples, uint64_t batch, bool drop_last) {
  return drop_last ? samples / batch : (samples + batch - 1) / batch;
}

// Every (rows, world size, policy, shuffle shape) combination: equal sizes, exact coverage, world-size independent
// order.
TEST(EpochPlanTest, EveryRankGetsTheSameCountAndCoverageIsExact) {
  for (uint64_t n : {0, 1, 2, 3, 5, 7, 8, 9, 13, 63, 64, 100, 257, 1000}) {
    for (uint64_t world = 1; world <= 8; ++world) {
      for (RemainderPolicy policy : kPolicies) {
        for (ShuffleOptions shuffle : {ShuffleOptions{true, 1, 1}, ShuffleOptions{true, 16, 4},
                                       ShuffleOptions{false, 1024, 8}}) {
          SCOPED_TRACE(testing::Message() << "n=" << n << " world=" << world << " " << ToString(policy)
                                          << " block=" << shuffle.block_size);
          const auto global = GlobalOrder(n, 99, 2, shuffle).Materialize();
          std::map<uint64_t, int> counts;
          std::vector<uint64_t> concatenated;
          const uint64_t expected = SamplesPerRank(n, world, policy);
          for (uint64_t rank = 0; rank < world; ++rank) {
            EpochPlan plan(n, world, rank, policy, 99, 2, shuffle);
            ASSERT_EQ(plan.size(), expected);
            for (uint64_t batch : {1, 3, 32}) {
              for (bool drop_last : {false, true}) {
                ASSERT_EQ(Batches(plan.size(), batch, drop_last), Batches(expected, batch, drop_last));
              }
            }
            for (uint64_t s : RankSamples(plan)) {
              ASSERT_LT(s, n);
              ++counts[s];
              concatenated.push_back(s);
            }
          }
          if (policy == RemainderPolicy::kDrop) {
            // Nothing repeats; exactly n - n mod world samples, the global order's prefix.
            ASSERT_EQ(counts.size(), n - n % world);
            for (const auto& [s, c] : counts) ASSERT_EQ(c, 1) << s;
            ASSERT_TRUE(std::equal(concatenated.begin(), concatenated.end(), global.begin()));
          } else {
            // Nothing is skipped; repeats only to fill the last positions (from the start of the order).
            ASSERT_EQ(counts.size(), n);
            ASSERT_EQ(concatenated.size(), expected * world);
            for (uint64_t p = 0; p < concatenated.size(); ++p) ASSERT_EQ(concatenated[p], global[p % n]);
          }
        }
      }
    }
  }
}

TEST(EpochPlanTest, FewerRowsThanRanksPadsByRepetition) {
  for (uint64_t rank = 0; rank < 8; ++rank) {
    EpochPlan pad(3, 8, rank, RemainderPolicy::kPad, 1, 0);
    ASSERT_EQ(pad.size(), 1u);
    EXPECT_LT(pad.SampleAt(0), 3u);
    EpochPlan drop(3, 8, rank, RemainderPolicy::kDrop, 1, 0);
    EXPECT_EQ(drop.size(), 0u);
  }
}

TEST(EpochPlanTest, ResumeOnTheSameWorldYieldsExactlyTheRest) {
  for (uint64_t n : {1, 10, 97, 1000}) {
    for (uint64_t world : {1, 2, 3, 8}) {
      for (RemainderPolicy policy : kPolicies) {
        const uint64_t per_rank = SamplesPerRank(n, world, policy);
        for (uint64_t yielded = 0; yielded <= per_rank; yielded += std::max<uint64_t>(1, per_rank / 7)) {
          for (uint64_t rank = 0; rank < world; ++rank) {
            EpochPlan fresh(n, world, rank, policy, 5, 1, {true, 8, 2});
            LoaderState saved{1, 5, n, world, rank, yielded, world, 0};
            const Continuation c = ContinueFrom(saved, world);
            EpochPlan resumed(n, world, rank, policy, 5, 1, {true, 8, 2}, c.from);
            ASSERT_EQ(RankSamples(resumed, c.skip), RankSamples(fresh, yielded))
                << "n=" << n << " world=" << world << " rank=" << rank << " yielded=" << yielded;
          }
        }
      }
    }
  }
}

// Changing the world size mid-epoch: the new ranks yield exactly the samples the old ranks had not yielded.
TEST(EpochPlanTest, ElasticResumeCoversExactlyTheNotYetYieldedSamples) {
  for (uint64_t n : {10, 97, 1000}) {
    for (uint64_t old_world : {1, 3, 4}) {
      for (uint64_t new_world : {1, 2, 5, 8}) {
        for (RemainderPolicy policy : kPolicies) {
          const uint64_t per_rank = SamplesPerRank(n, old_world, policy);
          const uint64_t yielded = per_rank / 3;
          std::multiset<uint64_t> remaining;
          for (uint64_t rank = 0; rank < old_world; ++rank) {
            for (uint64_t s : RankSamples(EpochPlan(n, old_world, rank, policy, 5, 1), yielded)) remaining.insert(s);
          }
          std::multiset<uint64_t> got;
          uint64_t size = UINT64_MAX;
          for (uint64_t rank = 0; rank < new_world; ++rank) {
            const Continuation c = ContinueFrom(LoaderState{1, 5, n, old_world, 0, yielded, old_world, 0}, new_world);
            EpochPlan plan(n, new_world, rank, policy, 5, 1, {}, c.from);
            if (size == UINT64_MAX) size = plan.size();
            ASSERT_EQ(plan.size(), size);
            for (uint64_t s : RankSamples(plan, c.skip)) got.insert(s);
          }
          SCOPED_TRACE(testing::Message() << n << " " << old_world << "->" << new_world << " " << ToString(policy));
          if (policy == RemainderPolicy::kDrop) {
            // Every yielded sample was not yet yielded, at most new_world - 1 of them are dropped.
            ASSERT_LE(got.size(), remaining.size());
            ASSERT_LT(remaining.size() - got.size(), new_world);
            ASSERT_TRUE(std::includes(remaining.begin(), remaining.end(), got.begin(), got.end()));
          } else {
            // Every not-yet-yielded sample comes, padding adds fewer than new_world repeats.
            ASSERT_TRUE(std::includes(got.begin(), got.end(), remaining.begin(), remaining.end()));
            ASSERT_LT(got.size() - remaining.size(), new_world);
          }
        }
      }
    }
  }
}

TEST(EpochPlanTest, ElasticPlanResumesAgainOnItsOwnWorldSize) {
  const uint64_t n = 500;
  const Continuation first = ContinueFrom(LoaderState{0, 1, n, 4, 0, 30, 4, 0}, 3);
  for (uint64_t rank = 0; rank < 3; ++rank) {
    EpochPlan plan(n, 3, rank, RemainderPolicy::kPad, 1, 0, {}, first.from);
    const Continuation again = ContinueFrom(
        LoaderState{0, 1, n, 3, rank, 20, first.from.world_size, first.from.samples_yielded}, 3);
    EpochPlan resumed(n, 3, rank, RemainderPolicy::kPad, 1, 0, {}, again.from);
    EXPECT_EQ(again.skip, 20u);
    EXPECT_EQ(RankSamples(resumed, again.skip), RankSamples(plan, 20));
  }
  EXPECT_THROW_WITH(ContinueFrom(LoaderState{0, 1, n, 3, 2, 20, 4, 30}, 5), NotImplemented, "rank 2",
                    "resuming it again on 5 ranks");
}

// The loader plans batches with AppendSamples: the rows SampleAt gives, for fresh and resumed plans (elastic too), with
// padding and without, shuffled or not, from any start and in pieces of any size.
TEST(EpochPlanTest, AppendSamplesGivesWhatSampleAtGives) {
  for (uint64_t n : {1, 7, 97, 1000}) {
    for (uint64_t world : {1, 3, 4}) {
      for (RemainderPolicy policy : kPolicies) {
        for (ShuffleOptions shuffle : {ShuffleOptions{true, 16, 4}, ShuffleOptions{false, 1024, 8}}) {
          const uint64_t per_rank = SamplesPerRank(n, world, policy);
          for (uint64_t yielded : {uint64_t{0}, per_rank / 3}) {
            for (uint64_t new_world : {world, uint64_t{2}}) {
              const Continuation c =
                  ContinueFrom(LoaderState{1, 5, n, world, 0, yielded, world, 0}, new_world);
              for (uint64_t rank = 0; rank < new_world; ++rank) {
                SCOPED_TRACE(testing::Message() << "n=" << n << " world=" << world << "->" << new_world
                                                << " rank=" << rank << " " << ToString(policy)
                                                << " yielded=" << yielded);
                EpochPlan plan(n, new_world, rank, policy, 5, 1, shuffle, c.from);
                const std::vector<uint64_t> expected = RankSamples(plan);
                for (uint64_t piece : {uint64_t{1}, uint64_t{10}, plan.size() + 1}) {
                  std::vector<uint64_t> got;
                  for (uint64_t begin = 0; begin < plan.size(); begin += piece) {
                    plan.AppendSamples(begin, std::min(plan.size(), begin + piece), &got);
                  }
                  ASSERT_EQ(got, expected) << "pieces of " << piece;
                }
              }
            }
          }
        }
      }
    }
  }
  EpochPlan plan(10, 2, 1, RemainderPolicy::kPad, 0, 0);
  std::vector<uint64_t> out;
  plan.AppendSamples(3, 3, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_THROW_WITH(plan.AppendSamples(4, 6, &out), InvalidArgument, "rank 1", "[4, 6)");
}

TEST(EpochPlanTest, RejectsBadRankAndResumePoint) {
  EXPECT_THROW_WITH(EpochPlan(10, 2, 2, RemainderPolicy::kPad, 0, 0), InvalidArgument, "rank 2",
                    "world size 2");
  EXPECT_THROW_WITH(EpochPlan(10, 2, 1, RemainderPolicy::kPad, 0, 0, {}, {2, 6}), InvalidArgument, "rank 1",
                    "past the end");
  EpochPlan plan(10, 2, 1, RemainderPolicy::kPad, 0, 0);
  EXPECT_THROW_WITH(plan.SampleAt(5), InvalidArgument, "rank 1");
}

}  // namespace
}  // namespace lakerun::data
