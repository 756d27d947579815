// TensorBatchSource, LoaderBatchSource and Module::Log.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ATen.h>

#include "lakerun/base/error.h"
#include "lakerun/train/trainer.h"

namespace lakerun::train {

// ---------------------------------------------------------------------------------------------------------------
// TensorBatchSource

TensorBatchSource::TensorBatchSource(std::map<std::string, at::Tensor> columns, int64_t batch_size,
                                     std::optional<uint64_t> shuffle_seed)
    : columns_(std::move(columns)), batch_size_(batch_size), seed_(shuffle_seed) {
  LAKERUN_CHECK(!columns_.empty(), "TensorBatchSource: no columns");
  LAKERUN_CHECK(batch_size_ > 0, "TensorBatchSource: batch_size must be positive, got ", batch_size_);
  rows_ = columns_.begin()->second.size(0);
  for (const auto& [name, t] : columns_) {
    LAKERUN_CHECK(t.dim() > 0 && t.size(0) == rows_, "TensorBatchSource: column '", name, "' has ",
                  t.dim() > 0 ? t.size(0) : 0, " rows, expected ", rows_);
  }
  SetEpoch(0);
}

void TensorBatchSource::SetEpoch(uint64_t epoch) {
  epoch_ = epoch;
  next_ = 0;
  if (seed_.has_value()) {
    at::Generator gen = at::detail::createCPUGenerator(*seed_ * 0x9E3779B97F4A7C15ULL + epoch);
    order_ = at::randperm(rows_, gen, at::TensorOptions().dtype(at::kLong));
  } else {
    order_ = at::arange(rows_, at::TensorOptions().dtype(at::kLong));
  }
}

std::optional<Batch> TensorBatchSource::Next() {
  const int64_t start = next_ * batch_size_;
  if (start >= rows_) return std::nullopt;
  const int64_t end = std::min(rows_, start + batch_size_);
  Batch b;
  b.sample_ids = order_.slice(0, start, end);
  for (const auto& [name, t] : columns_) b.tensors[name] = t.index_select(0, b.sample_ids);
  b.epoch = epoch_;
  b.index = static_cast<uint64_t>(next_++);
  return b;
}

std::map<std::string, int64_t> TensorBatchSource::state_dict() const {
  return {{"epoch", static_cast<int64_t>(epoch_)}, {"batches", next_}};
}

void TensorBatchSource::load_state_dict(const std::map<std::string, int64_t>& state) {
  auto epoch = state.find("epoch");
  auto batches = state.find("batches");
  LAKERUN_CHECK(epoch != state.end() && batches != state.end() && epoch->second >= 0 && batches->second >= 0,
                "TensorBatchSource::load_state_dict: needs non-negative 'epoch' and 'batches'");
  SetEpoch(static_cast<uint64_t>(epoch->second));
  next_ = batches->second;
}

// ---------------------------------------------------------------------------------------------------------------
// LoaderBatchSource

LoaderBatchSource::LoaderBatchSource(data::Loader&& loader) : owned_(std::move(loader)), loader_(&*owned_) {}

LoaderBatchSource::LoaderBatchSource(LoaderBatchSource&& other) noexcept
    : owned_(std::move(other.owned_)), loader_(owned_ ? &*owned_ : other.loader_) {
  other.owned_.reset();
  other.loader_ = nullptr;
}

LoaderBatchSource& LoaderBatchSource::operator=(LoaderBatchSource&& other) noexcept {
  if (this != &other) {
    owned_ = std::move(other.owned_);
    loader_ = owned_ ? &*owned_ : other.loader_;
    other.owned_.reset();
    other.loader_ = nullptr;
  }
  return *this;
}

LoaderBatchSource& LoaderBatchSource::operator=(data::Loader&& loader) {
  owned_.reset();  // the previous loader stops before the next one starts
  owned_.emplace(std::move(loader));
  loader_ = &*owned_;
  return *this;
}

data::Loader& LoaderBatchSource::loader() const {
  LAKERUN_CHECK_AS(ConfigError, loader_ != nullptr, "LoaderBatchSource: no loader yet (assign one, e.g. in "
                   "DataModule::Setup, before the Trainer asks for batches)");
  return *loader_;
}

Sharding LoaderBatchSource::ShardByRank(int64_t rank, int64_t world_size) {
  data::Loader& l = loader();
  l.AdoptRank(rank, world_size);
  return l.world_size() > 1 ? Sharding::kByRank : Sharding::kUnsharded;
}

std::string LoaderBatchSource::Describe() const {
  if (loader_ == nullptr) return "an empty LoaderBatchSource";
  const std::string table = loader_->source().Describe();
  return table.empty() ? "a data::Loader" : "the data::Loader over " + table;
}

// ---------------------------------------------------------------------------------------------------------------
// Module

void Module::Log(const std::string& name, const at::Tensor& value, LogOptions options) {
  LAKERUN_CHECK(value.defined() && value.numel() == 1, "log('", name, "'): value must be a one-element tensor, got ",
                value.defined() ? value.numel() : 0, " elements");
  Log(name, static_cast<double>(value.detach().to(at::kFloat).item<float>()), std::move(options));
}

void Module::Log(const std::string& name, double value, LogOptions options) {
  LAKERUN_CHECK(metrics_ != nullptr, "log('", name, "') called outside a step or epoch-end hook run by a Trainer");
  metrics_->Log(hook_, name, static_cast<float>(value), options, batch_size_);
}

}  // namespace lakerun::train
