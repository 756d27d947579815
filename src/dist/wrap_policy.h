// ZeRO level 3's units: which parameters are gathered and freed together (FSDP's auto-wrap policy).
//
//   std::vector<ShardUnit> units = PlanShardUnits(module, params, names, /*min_params=*/1'000'000, {});
//   units[0].name    // "blocks.3": the module whose parameters form the unit; "(root)" for the rest
//   units[0].params  // indices into `params`, in registration order
//
// Rules:
// - With `modules` empty (FSDP's size_based_auto_wrap_policy): submodules are visited children before parents; one
//   whose parameters not yet in a unit number at least `min_params` becomes a unit of those parameters.
// - With `modules` given: each named submodule (as named_modules() names it) becomes a unit of its parameters not yet
//   in a unit, inner ones before outer ones. An unknown name, or a module that would form an empty unit, is a
//   ConfigError listing the submodules.
// - The parameters left form the root unit, "(root)", unless there are none.
// - Units come in the order backward usually finishes them: the last-registered submodule's first, the root last.
// - Parameters of one unit share one flat buffer, so they must share a dtype and device (ConfigError otherwise).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lakerun::dist {

struct ShardUnit {
  std::string name;
  std::vector<std::size_t> params;
};

/// `params`, `names`: the parameters to shard (those that require grad), in registration order, and their names.
std::vector<ShardUnit> PlanShardUnits(torch::nn::Module& module, const std::vector<at::Tensor>& params,
                                      const std::vector<std::string>& names, int64_t min_params,
                                      const std::vector<std::string>& modules);

}  // namespace lakerun::dist
