#include "lakerun/train/strategy.h"

#include "lakerun/base/choices.h"

namespace lakerun::train {
namespace {

constexpr NamedValue<Strategy> kStrategies[] = {{Strategy::kDdp, "ddp"},
                                                {Strategy::kZero1, "zero1"},
                                                {Strategy::kZero2, "zero2"},
                                                {Strategy::kFsdp, "fsdp"},
                                                {Strategy::kFsdp, "zero3"},
                                                {Strategy::kZero1, "deepspeed_stage_1"},
                                                {Strategy::kZero2, "deepspeed_stage_2"},
                                                {Strategy::kFsdp, "deepspeed_stage_3"}};

}  // namespace

const char* ToString(Strategy strategy) { return NameOf(strategy, kStrategies); }

Strategy ParseStrategy(std::string_view what, std::string_view text) { return ParseNamed(what, text, kStrategies); }

}  // namespace lakerun::train
