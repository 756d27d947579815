#include "lakerun/train/strategy.h"

namespace lakerun::train {

const char* ToString(Strategy strategy) {
  switch (strategy) {
    case Strategy::kDdp: return "ddp";
    case Strategy::kZero1: return "zero1";
    case Strategy::kZero2: return "zero2";
  }
  return "?";
}

std::optional<Strategy> ParseStrategy(std::string_view name) {
  if (name == "ddp") return Strategy::kDdp;
  if (name == "zero1" || name == "deepspeed_stage_1") return Strategy::kZero1;
  if (name == "zero2" || name == "deepspeed_stage_2") return Strategy::kZero2;
  return std::nullopt;
}

}  // namespace lakerun::train
