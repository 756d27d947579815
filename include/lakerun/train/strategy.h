// How the Trainer spreads a fit over the ranks of a lakerun::dist job (Lightning's `strategy`).
//
//   TrainerOptions o;
//   o.strategy = Strategy::kZero2;                        // Lightning: strategy="deepspeed_stage_2"
//   o.strategy = ParseStrategy("--strategy", flag_value);  // "ddp", "zero1", "zero2", "fsdp", "deepspeed_stage_3", ...
//
// The same Module and DataModule run under each; checkpoints interchange between them (docs/trainer.md, "Strategies").
#pragma once

#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::train {

enum class Strategy {
  kDdp,    ///< every rank holds the whole model, gradients and optimizer state (DistributedDataParallel)
  kZero1,  ///< optimizer state sharded across ranks (ShardedDataParallel, ZeroStage::kOptimizerState)
  kZero2,  ///< optimizer state and gradients sharded (ZeroStage::kGradients)
  kFsdp,   ///< optimizer state, gradients and parameters sharded (ZeRO-3, FSDP's FULL_SHARD; ZeroStage::kParameters)
};

/// "ddp", "zero1", "zero2", "fsdp".
const char* ToString(Strategy strategy);

/// ToString's spellings, "zero3", and Lightning's names of the same ZeRO stages ("deepspeed_stage_1",
/// "deepspeed_stage_2", "deepspeed_stage_3").
/// Throws ConfigError naming `what`, listing the choices and the nearest one (as the Parse* of enums.h).
Strategy ParseStrategy(std::string_view what, std::string_view text);

/// Strategy::kFsdp's units, gathered and freed together (Lightning's FSDPStrategy(auto_wrap_policy=...);
/// dist::ShardedOptions::unit_min_params and unit_modules).
struct FsdpOptions {
  /// Every submodule (children first) whose parameters not yet in a unit number at least this many is a unit.
  int64_t unit_min_params = 100'000;
  /// Instead, exactly these submodules (as named_modules() names them, e.g. "blocks.0") are units.
  std::vector<std::string> unit_modules{};
  /// Mixed precision (FSDP's MixedPrecision(param_dtype)): units gathered and computed in this dtype (with
  /// precision bf16-mixed, at::kBFloat16), gradients reduced and the optimizers stepped in the parameters' own
  /// (dist::ShardedOptions::param_dtype). Unset: the parameters' own dtype throughout.
  std::optional<c10::ScalarType> param_dtype{};
  /// Keep the optimizer state in CPU memory and step it there (Lightning's FSDPStrategy(cpu_offload=True);
  /// dist::ShardedOptions::offload_optimizer_state).
  bool cpu_offload = false;
};

}  // namespace lakerun::train
