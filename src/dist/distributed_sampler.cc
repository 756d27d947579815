#include <lakerun/dist/distributed_sampler.h>

#include <lakerun/base/error.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

namespace lakerun::dist {

DistributedSampler::DistributedSampler(int64_t dataset_size, int rank, int world_size, SamplerOptions options)
    : dataset_size_(dataset_size), rank_(rank), world_size_(world_size), options_(options) {
  LAKERUN_CHECK(dataset_size >= 0, "DistributedSampler: dataset_size must be >= 0, got ", dataset_size);
  LAKERUN_CHECK(world_size >= 1, "DistributedSampler: world_size must be >= 1, got ", world_size);
  LAKERUN_CHECK(rank >= 0 && rank < world_size, "DistributedSampler: rank=", rank, " is not in [0, ", world_size,
                ")");
  // Same arithmetic as torch.utils.data.DistributedSampler.
  if (options.drop_last && dataset_size % world_size != 0) {
    num_samples_ = (dataset_size - world_size + world_size - 1) / world_size;  // ceil((n - w) / w)
    if (num_samples_ < 0) num_samples_ = 0;
  } else {
    num_samples_ = (dataset_size + world_size - 1) / world_size;
  }
}

int64_t DistributedSampler::num_padding() const {
  return options_.drop_last ? 0 : total_size() - dataset_size_;
}

int64_t DistributedSampler::num_dropped() const {
  return options_.drop_last ? dataset_size_ - total_size() : 0;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> order;
  order.reserve(dataset_size_);
  if (options_.shuffle) {
    // torch.randperm(n, generator=torch.Generator().manual_seed(seed + epoch)) draws from the same mt19937.
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(options_.seed + static_cast<uint64_t>(epoch_));
    at::Tensor perm = at::randperm(dataset_size_, generator, at::TensorOptions().dtype(at::kLong));
    const int64_t* data = perm.data_ptr<int64_t>();
    order.assign(data, data + dataset_size_);
  } else {
    for (int64_t i = 0; i < dataset_size_; ++i) order.push_back(i);
  }
  int64_t total = total_size();
  if (!options_.drop_last) {
    // Pad by repeating from the start (several times over if the dataset is smaller than the padding).
    for (int64_t i = 0; static_cast<int64_t>(order.size()) < total; ++i) order.push_back(order[i]);
  } else {
    order.resize(total);
  }
  std::vector<int64_t> mine;
  mine.reserve(num_samples_);
  for (int64_t i = rank_; i < total; i += world_size_) mine.push_back(order[i]);
  return mine;
}

}  // namespace lakerun::dist
