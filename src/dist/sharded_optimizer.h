// One of the user's optimizers, stepped on this rank's pieces of the parameters only.
//
// The user's optimizer stays where its hyper-parameters live: LR schedulers and monitors keep reading and writing
// its param groups. An internal optimizer of the same type holds one tensor per piece, in the user's groups (by
// index), and keeps state for those pieces only: 1/world of the state a replicated optimizer keeps. Each Step()
// first copies the user's group options onto the internal groups.
#pragma once

#include "dist/optimizer_state.h"
#include "dist/shard_layout.h"

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace lakerun::dist {

/// A piece of this rank's shard (shard_layout.h) with the tensor that holds its elements.
struct OwnedPiece {
  ShardPiece where;
  std::size_t bucket = 0;
  at::Tensor value;  ///< where.numel elements: a view into the bucket's chunk buffer; its .grad is bound before steps
};

class ShardedOptimizer {
 public:
  /// `params`: the sharded parameters; `pieces`: this rank's. Throws ConfigError when `user` is not element-wise
  /// (optimizer_state.h) or steps a tensor that is not among `params`.
  ShardedOptimizer(torch::optim::Optimizer& user, std::size_t index, const std::vector<at::Tensor>& params,
                   const std::vector<OwnedPiece>& pieces);

  torch::optim::Optimizer& user() const { return user_; }
  OptimizerKind kind() const { return kind_; }

  /// Copies the user's current group options and steps the pieces (their .grad must be bound).
  void Step();
  /// Bytes of the state tensors this rank holds.
  int64_t StateBytes() const;

  /// The user group params[i] belongs to; nullopt when this optimizer does not step it.
  std::optional<std::size_t> GroupOf(std::size_t param) const;
  /// Indices into `pieces` that this optimizer steps.
  const std::vector<std::size_t>& members() const { return members_; }
  /// The state of members()[k]; nullopt before its first step.
  std::optional<StateParts> MemberState(std::size_t k) const;
  void SetMemberState(std::size_t k, const StateParts& parts);
  /// Drops the state of members()[k] (it is as before its first step).
  void ClearMemberState(std::size_t k);

  /// Takes this rank's elements of whatever state the user's optimizer holds (a checkpoint it loaded), then
  /// empties the user's state: from here on, this object holds the state.
  void TakeUserState(const std::vector<at::Tensor>& params, const std::vector<OwnedPiece>& pieces);

 private:
  torch::optim::Optimizer& user_;
  OptimizerKind kind_;
  std::vector<std::optional<std::size_t>> group_of_;  // per sharded parameter
  std::vector<std::size_t> members_;
  std::vector<at::Tensor> member_values_;
  std::unique_ptr<torch::optim::Optimizer> inner_;
};

}  // namespace lakerun::dist
