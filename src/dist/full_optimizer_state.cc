#include "dist/full_optimizer_state.h"

#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>

#include "dist/shard_collectives.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>

namespace lakerun::dist {
namespace {

// The union of the state fields of `params`' groups, in the kind's field order (the same on every rank: the
// groups' options are).
std::vector<std::string> FieldsOfBucket(const ShardedOptimizer& opt, const std::vector<std::size_t>& params) {
  std::vector<std::string> fields;
  for (std::size_t i : params) {
    for (const std::string& name : StateTensorNames(opt.kind(), opt.user().param_groups()[*opt.GroupOf(i)].options())) {
      if (std::find(fields.begin(), fields.end(), name) == fields.end()) fields.push_back(name);
    }
  }
  return fields;
}

}  // namespace

void GatherFullOptimizerState(Context& ctx, const ShardedOptimizer& opt, const std::vector<at::Tensor>& params,
                              const std::vector<ShardedBucket>& buckets, const std::vector<OwnedPiece>& pieces,
                              int root) {
  // Every piece steps together, so either all have state or none; a rank without pieces asks its peers.
  std::vector<std::optional<StateParts>> mine(opt.members().size());
  int64_t step = -1;
  for (std::size_t k = 0; k < mine.size(); ++k) {
    mine[k] = opt.MemberState(k);
    if (mine[k].has_value()) step = std::max<int64_t>(step, mine[k]->step.value_or(0));
  }
  step = AllReduceInt64(ctx, step, ReduceOp::kMax);
  if (step < 0) return;
  std::vector<std::vector<std::size_t>> members_of(buckets.size());  // per bucket, indices into opt.members()
  for (std::size_t k = 0; k < opt.members().size(); ++k) members_of[pieces[opt.members()[k]].bucket].push_back(k);

  std::map<std::size_t, StateParts> full;  // on root, per parameter index
  at::NoGradGuard no_grad;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    std::vector<std::size_t> owned;  // the bucket's parameters this optimizer steps
    for (std::size_t i : buckets[b].params) {
      if (opt.GroupOf(i).has_value()) owned.push_back(i);
    }
    if (owned.empty()) continue;
    const at::Tensor& like = params[owned.front()];
    for (const std::string& field : FieldsOfBucket(opt, owned)) {
      at::Tensor chunk = at::zeros({buckets[b].chunk_numel}, like.options().requires_grad(false));
      for (std::size_t k : members_of[b]) {
        if (!mine[k].has_value()) continue;
        for (const auto& [name, t] : mine[k]->tensors) {
          if (name == field) chunk.narrow(0, pieces[opt.members()[k]].where.chunk_offset, t.numel()).copy_(t);
        }
      }
      at::Tensor whole = at::empty({buckets[b].padded_numel(ctx.world_size())}, chunk.options());
      StartAllGather(ctx, chunk, whole).Wait();
      if (ctx.rank() != root) continue;
      for (std::size_t j = 0; j < buckets[b].params.size(); ++j) {
        const std::size_t i = buckets[b].params[j];
        if (!opt.GroupOf(i).has_value()) continue;
        const auto names = StateTensorNames(opt.kind(), opt.user().param_groups()[*opt.GroupOf(i)].options());
        if (std::find(names.begin(), names.end(), field) == names.end()) continue;
        at::Tensor value = whole.narrow(0, buckets[b].offsets[j], params[i].numel()).view(params[i].sizes()).clone();
        full[i].tensors.emplace_back(field, std::move(value));
      }
    }
  }
  if (ctx.rank() != root) return;
  auto& state = opt.user().state();
  for (auto& [i, parts] : full) {
    if (KeepsStepCount(opt.kind())) parts.step = step;
    state[StateKey(params[i])] = Compose(opt.kind(), parts);
  }
}

}  // namespace lakerun::dist
