// How the Trainer spreads a fit over the ranks of a lakerun::dist job (Lightning's `strategy`).
//
//   TrainerOptions o;
//   o.strategy = Strategy::kZero2;                        // Lightning: strategy="deepspeed_stage_2"
//   o.strategy = ParseStrategy("--strategy", flag_value);  // "ddp", "zero1", "zero2", "deepspeed_stage_1", ...
//
// The same Module and DataModule run under each; checkpoints interchange between them (docs/trainer.md, "Strategies").
#pragma once

#include <string_view>

namespace lakerun::train {

enum class Strategy {
  kDdp,    ///< every rank holds the whole model, gradients and optimizer state (DistributedDataParallel)
  kZero1,  ///< optimizer state sharded across ranks (ShardedDataParallel, ZeroStage::kOptimizerState)
  kZero2,  ///< optimizer state and gradients sharded (ZeroStage::kGradients)
};

/// "ddp", "zero1", "zero2".
const char* ToString(Strategy strategy);

/// ToString's spellings, and Lightning's names of the same ZeRO stages ("deepspeed_stage_1", "deepspeed_stage_2").
/// Throws ConfigError naming `what`, listing the choices and the nearest one (as the Parse* of enums.h).
Strategy ParseStrategy(std::string_view what, std::string_view text);

}  // namespace lakerun::train
