#include "lakerun/data/epoch_plan.h"

#include "lakerun/base/error.h"

namespace lakerun::data {

const char* ToString(RemainderPolicy policy) {
  return policy == RemainderPolicy::kPad ? "pad" : "drop";
}

uint64_t SamplesPerRank(uint64_t num_samples, uint64_t world_size, RemainderPolicy policy) {
  LAKERUN_CHECK(world_size > 0, "world size must be positive");
  return policy == RemainderPolicy::kPad ? (num_samples + world_size - 1) / world_size : num_samples / world_size;
}

EpochPlan::EpochPlan(uint64_t num_samples, uint64_t world_size, uint64_t rank, RemainderPolicy policy,
                     uint64_t seed, uint64_t epoch, ShuffleOptions shuffle, ResumePoint from)
    : num_samples_(num_samples), rank_(rank), from_(from), order_(num_samples, seed, epoch, shuffle) {
  LAKERUN_CHECK(world_size > 0, "world size must be positive, got 0 (rank ", rank, ")");
  LAKERUN_CHECK(rank < world_size, "rank ", rank, " is out of range for world size ", world_size);
  if (from_.world_size == 0) from_ = ResumePoint{world_size, 0};
  origin_per_rank_ = SamplesPerRank(num_samples, from_.world_size, policy);
  LAKERUN_CHECK(from_.samples_yielded <= origin_per_rank_, "rank ", rank, ": resume point of ",
                from_.samples_yielded, " samples per rank is past the end of the epoch (", origin_per_rank_,
                " samples per rank on ", from_.world_size, " ranks, ", num_samples, " samples)");
  remaining_per_origin_rank_ = origin_per_rank_ - from_.samples_yielded;
  remaining_ = remaining_per_origin_rank_ * from_.world_size;
  per_rank_ = SamplesPerRank(remaining_, world_size, policy);
}

uint64_t EpochPlan::PositionAt(uint64_t i) const {
  LAKERUN_CHECK(i < per_rank_, "rank ", rank_, ": sample ", i, " is past the end of its ", per_rank_,
                " samples this epoch");
  // Index into the concatenated list of not-yet-yielded positions; padding wraps around to its start.
  const uint64_t j = (rank_ * per_rank_ + i) % remaining_;
  const uint64_t origin_rank = j / remaining_per_origin_rank_;
  const uint64_t offset = j % remaining_per_origin_rank_;
  return origin_rank * origin_per_rank_ + from_.samples_yielded + offset;
}

uint64_t EpochPlan::SampleAt(uint64_t i) const {
  // Positions past N (padding of the origin plan) repeat the epoch's first samples.
  return order_.At(PositionAt(i) % num_samples_);
}

void EpochPlan::AppendSamples(uint64_t begin, uint64_t end, std::vector<uint64_t>* out) const {
  if (begin >= end) return;
  LAKERUN_CHECK(end <= per_rank_, "rank ", rank_, ": samples [", begin, ", ", end, ") run past the end of its ",
                per_rank_, " samples this epoch");
  // PositionAt's (origin rank, offset) for `begin`, then advanced one position at a time.
  const uint64_t j = (rank_ * per_rank_ + begin) % remaining_;
  uint64_t origin_rank = j / remaining_per_origin_rank_;
  uint64_t offset = j % remaining_per_origin_rank_;
  out->reserve(out->size() + (end - begin));
  for (uint64_t i = begin; i < end; ++i) {
    uint64_t position = origin_rank * origin_per_rank_ + from_.samples_yielded + offset;
    if (position >= num_samples_) position %= num_samples_;
    out->push_back(order_.At(position));
    if (++offset == remaining_per_origin_rank_) {
      offset = 0;
      if (++origin_rank == from_.world_size) origin_rank = 0;
    }
  }
}

}  // namespace lakerun::data

namespace lakerun::data {

Continuation ContinueFrom(const LoaderState& saved, uint64_t world_size) {
  LAKERUN_CHECK(world_size > 0, "world size must be positive");
  const bool plan_is_fresh = saved.origin_world_size == saved.world_size;
  if (plan_is_fresh) {
    // All saved.world_size ranks yielded origin + samples_yielded of one plan; the rest can go to any world size.
    return {ResumePoint{saved.world_size, saved.origin_samples_yielded + saved.samples_yielded}, 0};
  }
  if (world_size == saved.world_size) {
    return {ResumePoint{saved.origin_world_size, saved.origin_samples_yielded}, saved.samples_yielded};
  }
  if (saved.samples_yielded == 0) {
    return {ResumePoint{saved.origin_world_size, saved.origin_samples_yielded}, 0};
  }
  LAKERUN_THROW(NotImplemented, "rank ", saved.rank, ": epoch ", saved.epoch, " was already resumed from ",
                saved.origin_world_size, " on ", saved.world_size, " ranks and ", saved.samples_yielded,
                " samples were yielded since; resuming it again on ", world_size,
                " ranks is not supported (resume on ", saved.world_size, " ranks, or at an epoch boundary)");
}

}  // namespace lakerun::data
