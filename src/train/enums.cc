#include "lakerun/train/enums.h"

#include "lakerun/base/choices.h"

namespace lakerun::train {
namespace {

constexpr NamedValue<Precision> kPrecisions[] = {{Precision::k32True, "32-true"},
                                                 {Precision::kBf16Mixed, "bf16-mixed"},
                                                 {Precision::k16Mixed, "16-mixed"},
                                                 {Precision::k32True, "32"},
                                                 {Precision::kBf16Mixed, "bf16"},
                                                 {Precision::k16Mixed, "16"}};
constexpr NamedValue<Accelerator> kAccelerators[] = {{Accelerator::kAuto, "auto"},
                                                     {Accelerator::kCpu, "cpu"},
                                                     {Accelerator::kCuda, "cuda"},
                                                     {Accelerator::kCuda, "gpu"}};
constexpr NamedValue<GradientClipAlgorithm> kClipAlgorithms[] = {{GradientClipAlgorithm::kNorm, "norm"},
                                                                 {GradientClipAlgorithm::kValue, "value"}};
constexpr NamedValue<ProgressStyle> kProgressStyles[] = {
    {ProgressStyle::kAuto, "auto"}, {ProgressStyle::kBar, "bar"}, {ProgressStyle::kLines, "lines"}};
constexpr NamedValue<MonitorMode> kMonitorModes[] = {{MonitorMode::kMin, "min"}, {MonitorMode::kMax, "max"}};
constexpr NamedValue<Interval> kIntervals[] = {{Interval::kStep, "step"}, {Interval::kEpoch, "epoch"}};
constexpr NamedValue<AnnealStrategy> kAnnealStrategies[] = {{AnnealStrategy::kCos, "cos"},
                                                            {AnnealStrategy::kLinear, "linear"}};
constexpr NamedValue<ThresholdMode> kThresholdModes[] = {{ThresholdMode::kRel, "rel"}, {ThresholdMode::kAbs, "abs"}};
constexpr NamedValue<TrainerFn> kTrainerFns[] = {
    {TrainerFn::kFitting, "fit"}, {TrainerFn::kValidating, "validate"}, {TrainerFn::kTesting, "test"}};

}  // namespace

const char* ToString(Precision value) { return NameOf(value, kPrecisions); }
const char* ToString(Accelerator value) { return NameOf(value, kAccelerators); }
const char* ToString(GradientClipAlgorithm value) { return NameOf(value, kClipAlgorithms); }
const char* ToString(ProgressStyle value) { return NameOf(value, kProgressStyles); }
const char* ToString(MonitorMode value) { return NameOf(value, kMonitorModes); }
const char* ToString(Interval value) { return NameOf(value, kIntervals); }
const char* ToString(AnnealStrategy value) { return NameOf(value, kAnnealStrategies); }
const char* ToString(ThresholdMode value) { return NameOf(value, kThresholdModes); }
const char* ToString(TrainerFn value) { return NameOf(value, kTrainerFns); }

Precision ParsePrecision(std::string_view what, std::string_view text) {
  return ParseNamed(what, text, kPrecisions);
}
Accelerator ParseAccelerator(std::string_view what, std::string_view text) {
  return ParseNamed(what, text, kAccelerators);
}
GradientClipAlgorithm ParseGradientClipAlgorithm(std::string_view what, std::string_view text) {
  return ParseNamed(what, text, kClipAlgorithms);
}
ProgressStyle ParseProgressStyle(std::string_view what, std::string_view text) {
  return ParseNamed(what, text, kProgressStyles);
}
MonitorMode ParseMonitorMode(std::string_view what, std::string_view text) {
  return ParseNamed(what, text, kMonitorModes);
}
Interval ParseInterval(std::string_view what, std::string_view text) { return ParseNamed(what, text, kIntervals); }
AnnealStrategy ParseAnnealStrategy(std::string_view what, std::string_view text) {
  return ParseNamed(what, text, kAnnealStrategies);
}
ThresholdMode ParseThresholdMode(std::string_view what, std::string_view text) {
  return ParseNamed(what, text, kThresholdModes);
}
TrainerFn ParseTrainerFn(std::string_view what, std::string_view text) { return ParseNamed(what, text, kTrainerFns); }

}  // namespace lakerun::train
