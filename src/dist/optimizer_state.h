// The torch::optim optimizers sharded data parallel can shard, and their per-parameter state as plain parts.
//
// SGD, Adam, AdamW, RMSprop and Adagrad update every element from that element's gradient and state alone, so
// stepping any split of a parameter's elements gives the same elements as stepping it whole. LBFGS (and any
// optimizer lakerun does not know) is not element-wise: KindOf returns nullopt for it.
//
//   OptimizerKind kind = *KindOf(user);
//   auto shard_opt = MakeOptimizer(kind, std::move(groups), user.defaults());
//   StateParts parts = Decompose(kind, *user.state().at(StateKey(param)));   // {step, {"exp_avg", t}, ...}
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace lakerun::dist {

enum class OptimizerKind { kSgd, kAdam, kAdamW, kRmsprop, kAdagrad };

/// "SGD", "Adam", "AdamW", "RMSprop", "Adagrad" (the class names).
const char* ToString(OptimizerKind kind);

/// The kind of `optimizer`; nullopt when it is not one of them.
std::optional<OptimizerKind> KindOf(const torch::optim::Optimizer& optimizer);

/// A new optimizer of `kind` over `groups` with `defaults`, which must be that kind's options type.
std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(OptimizerKind kind,
                                                       std::vector<torch::optim::OptimizerParamGroup> groups,
                                                       const torch::optim::OptimizerOptions& defaults);

/// One parameter's state: the step count (for the kinds that keep one) and its defined tensors, by field name.
struct StateParts {
  std::optional<int64_t> step;
  std::vector<std::pair<std::string, at::Tensor>> tensors;
};

/// The tensor fields a parameter of a group with `group_options` holds once stepped, in a fixed order (e.g. SGD:
/// "momentum_buffer" only with momentum; Adam: "exp_avg", "exp_avg_sq", and "max_exp_avg_sq" with amsgrad).
std::vector<std::string> StateTensorNames(OptimizerKind kind, const torch::optim::OptimizerOptions& group_options);

StateParts Decompose(OptimizerKind kind, const torch::optim::OptimizerParamState& state);
/// The inverse of Decompose; tensor fields not in `parts` stay undefined.
std::unique_ptr<torch::optim::OptimizerParamState> Compose(OptimizerKind kind, const StateParts& parts);

/// The key type of Optimizer::state(): torch::optim keys state by the tensor's address, written as a string in
/// libtorch 1.x and kept as the pointer in 2.x.
using StateKeyType =
    std::decay_t<decltype(std::declval<torch::optim::Optimizer&>().state().begin()->first)>;

/// The key of `param`'s entry in Optimizer::state().
StateKeyType StateKey(const at::Tensor& param);

/// Whether `kind`'s per-parameter state counts steps (all but SGD).
bool KeepsStepCount(OptimizerKind kind);

}  // namespace lakerun::dist
