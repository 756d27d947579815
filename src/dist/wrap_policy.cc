#include "dist/wrap_policy.h"

#include <lakerun/base/error.h>

#include "dist/bucket_plan.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_map>

namespace lakerun::dist {
namespace {

std::string ListOf(const std::vector<std::string>& names) {
  std::ostringstream out;
  for (std::size_t i = 0; i < names.size() && i < 20; ++i) out << (i ? ", " : "") << "'" << names[i] << "'";
  if (names.size() > 20) out << ", … (" << names.size() << " in all)";
  return out.str();
}

class Planner {
 public:
  Planner(const std::vector<at::Tensor>& params, const std::vector<std::string>& names)
      : params_(params), names_(names), taken_(params.size(), false) {
    for (std::size_t i = 0; i < params.size(); ++i) index_.emplace(params[i].unsafeGetTensorImpl(), i);
  }

  // The parameters of `module` not yet in a unit, in registration order.
  std::vector<std::size_t> Free(torch::nn::Module& module) const {
    std::vector<std::size_t> out;
    for (const at::Tensor& p : module.parameters(/*recurse=*/true)) {
      const auto it = index_.find(p.unsafeGetTensorImpl());
      if (it != index_.end() && !taken_[it->second]) out.push_back(it->second);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  int64_t Numel(const std::vector<std::size_t>& indices) const {
    int64_t n = 0;
    for (std::size_t i : indices) n += params_[i].numel();
    return n;
  }

  void Take(std::string name, std::vector<std::size_t> indices) {
    for (std::size_t i : indices) taken_[i] = true;
    Check(name, indices);
    units_.push_back({std::move(name), std::move(indices)});
  }

  std::vector<ShardUnit> Finish() {
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      if (!taken_[i]) rest.push_back(i);
    }
    if (!rest.empty()) Take("(root)", std::move(rest));
    return std::move(units_);
  }

 private:
  void Check(const std::string& unit, const std::vector<std::size_t>& indices) const {
    for (std::size_t i : indices) {
      LAKERUN_CHECK_AS(ConfigError, FlatBufferKey(params_[i]) == FlatBufferKey(params_[indices.front()]),
                       "ShardedDataParallel: unit '", unit, "' mixes parameters of ", FlatBufferKey(params_[i]),
                       " ('", names_[i], "') and ", FlatBufferKey(params_[indices.front()]), " ('",
                       names_[indices.front()], "'): a unit is one flat buffer. Wrap them in separate units");
    }
  }

  const std::vector<at::Tensor>& params_;
  const std::vector<std::string>& names_;
  std::unordered_map<const c10::TensorImpl*, std::size_t> index_;
  std::vector<bool> taken_;
  std::vector<ShardUnit> units_;
};

}  // namespace

std::vector<ShardUnit> PlanShardUnits(torch::nn::Module& module, const std::vector<at::Tensor>& params,
                                      const std::vector<std::string>& names, int64_t min_params,
                                      const std::vector<std::string>& modules) {
  Planner planner(params, names);
  // Pre-order; walking it backwards visits every child before its parent, later siblings first.
  const auto named = module.named_modules(/*name_prefix=*/"", /*include_self=*/false);
  if (modules.empty()) {
    LAKERUN_CHECK_AS(ConfigError, min_params > 0, "ShardedDataParallel: the unit threshold must be positive, got ",
                     min_params, " parameters");
    for (auto it = named.end(); it != named.begin();) {
      --it;
      std::vector<std::size_t> free = planner.Free(*it->value());
      if (!free.empty() && planner.Numel(free) >= min_params) planner.Take(it->key(), std::move(free));
    }
    return planner.Finish();
  }
  std::vector<std::string> known;
  for (const auto& item : named) known.push_back(item.key());
  std::map<std::size_t, std::string> chosen;  // pre-order position -> name
  for (const std::string& name : modules) {
    const auto at = std::find(known.begin(), known.end(), name);
    LAKERUN_CHECK_AS(ConfigError, at != known.end(), "ShardedDataParallel: no submodule '", name,
                     "' to wrap as a unit; the submodules are ", ListOf(known));
    LAKERUN_CHECK_AS(ConfigError, chosen.emplace(static_cast<std::size_t>(at - known.begin()), name).second,
                     "ShardedDataParallel: the unit modules name '", name, "' twice");
  }
  for (auto it = chosen.rbegin(); it != chosen.rend(); ++it) {
    std::vector<std::size_t> free = planner.Free(*named[it->first].value());
    LAKERUN_CHECK_AS(ConfigError, !free.empty(), "ShardedDataParallel: submodule '", it->second,
                     "' has no trainable parameters outside the units inside it");
    planner.Take(it->second, std::move(free));
  }
  return planner.Finish();
}

}  // namespace lakerun::dist
