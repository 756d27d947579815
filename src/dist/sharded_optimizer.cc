#include "dist/sharded_optimizer.h"

#include <lakerun/base/error.h>
#include <lakerun/dist/sharded.h>

#include <ATen/ATen.h>

#include <unordered_map>

namespace lakerun::dist {

ShardedOptimizer::ShardedOptimizer(torch::optim::Optimizer& user, std::size_t index,
                                   const std::vector<at::Tensor>& params, const std::vector<OwnedPiece>& pieces)
    : user_(user) {
  const std::optional<OptimizerKind> kind = KindOf(user);
  LAKERUN_CHECK_AS(ConfigError, kind.has_value(), "ShardedDataParallel: optimizer ", index,
                   " is not SGD, Adam, AdamW, RMSprop or Adagrad: sharding its state needs an element-wise "
                   "optimizer (LBFGS and optimizers of one's own are not supported)");
  kind_ = *kind;
  std::unordered_map<const c10::TensorImpl*, std::size_t> position;
  for (std::size_t i = 0; i < params.size(); ++i) position[params[i].unsafeGetTensorImpl()] = i;
  group_of_.assign(params.size(), std::nullopt);
  const auto& user_groups = user.param_groups();
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (std::size_t g = 0; g < user_groups.size(); ++g) {
    for (const at::Tensor& p : user_groups[g].params()) {
      auto it = position.find(p.unsafeGetTensorImpl());
      if (it == position.end()) {
        // A tensor that needs no gradient never gets one: the replicated optimizer would skip it as well.
        LAKERUN_CHECK_AS(ConfigError, !p.requires_grad(), "ShardedDataParallel: optimizer ", index, " group ", g,
                         " steps a tensor of shape ", p.sizes(), " that is not a parameter of the wrapped module");
        continue;
      }
      group_of_[it->second] = g;
    }
    groups.emplace_back(std::vector<at::Tensor>{}, user_groups[g].options().clone());
  }
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (std::optional<std::size_t> g = group_of_[pieces[k].where.param]) {
      groups[*g].params().push_back(pieces[k].value);
      members_.push_back(k);
      member_values_.push_back(pieces[k].value);
    }
  }
  inner_ = MakeOptimizer(kind_, std::move(groups), user.defaults());
}

void ShardedOptimizer::Step() {
  auto& inner_groups = inner_->param_groups();
  const auto& user_groups = user_.param_groups();
  LAKERUN_CHECK_AS(ConfigError, inner_groups.size() == user_groups.size(), "ShardedDataParallel: the ",
                   ToString(kind_), " optimizer had ", inner_groups.size(),
                   " param groups when it was sharded and has ", user_groups.size(),
                   " now; add groups before wrapping the module");
  for (std::size_t g = 0; g < inner_groups.size(); ++g) inner_groups[g].set_options(user_groups[g].options().clone());
  inner_->step();
}

int64_t ShardedOptimizer::StateBytes() const { return OptimizerStateBytes(*inner_); }

std::optional<std::size_t> ShardedOptimizer::GroupOf(std::size_t param) const { return group_of_.at(param); }

std::optional<StateParts> ShardedOptimizer::MemberState(std::size_t k) const {
  auto it = inner_->state().find(StateKey(member_values_.at(k)));
  if (it == inner_->state().end()) return std::nullopt;
  return Decompose(kind_, *it->second);
}

void ShardedOptimizer::SetMemberState(std::size_t k, const StateParts& parts) {
  inner_->state()[StateKey(member_values_.at(k))] = Compose(kind_, parts);
}

void ShardedOptimizer::ClearMemberState(std::size_t k) { inner_->state().erase(StateKey(member_values_.at(k))); }

void ShardedOptimizer::TakeUserState(const std::vector<at::Tensor>& params, const std::vector<OwnedPiece>& pieces) {
  for (std::size_t k = 0; k < members_.size(); ++k) {
    const ShardPiece& where = pieces[members_[k]].where;
    const at::Tensor& param = params[where.param];
    auto it = user_.state().find(StateKey(param));
    if (it == user_.state().end()) continue;
    const StateParts full = Decompose(kind_, *it->second);
    StateParts mine;
    mine.step = full.step;
    for (const auto& [name, t] : full.tensors) {
      LAKERUN_CHECK_AS(CorruptDataError, t.numel() == param.numel(), "ShardedDataParallel: the ", ToString(kind_),
                       " state '", name, "' of a parameter of shape ", param.sizes(), " has ", t.numel(),
                       " elements");
      // On the piece's device: the CPU under offload_optimizer_state.
      mine.tensors.emplace_back(name, t.reshape({-1})
                                          .narrow(0, where.param_offset, where.numel)
                                          .to(pieces[members_[k]].value.device(), /*non_blocking=*/false,
                                              /*copy=*/true));
    }
    SetMemberState(k, mine);
  }
  user_.state().clear();
}

}  // namespace lakerun::dist
