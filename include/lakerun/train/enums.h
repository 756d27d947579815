// The closed sets of lakerun::train's options, as enum classes. ToString gives PyTorch Lightning's (or PyTorch's)
// spelling; Parse* reads it back from a flag, an environment variable or a config string, accepting the aliases
// Lightning accepts, and throws ConfigError naming `what`, listing the choices and the nearest one.
//
//   options.precision = Precision::kBf16Mixed;                        // Lightning: precision="bf16-mixed"
//   options.precision = ParsePrecision("--precision", flag_value);     // "32", "32-true", "bf16-mixed", ...
//   std::cout << ToString(options.precision);                          // "bf16-mixed"
#pragma once

#include <string_view>

namespace lakerun::train {

/// TrainerOptions::precision. "32-true" (alias "32"); "bf16-mixed" (alias "bf16"): autocast to bfloat16 on CPU or
/// CUDA; "16-mixed" (alias "16"): CUDA only, autocast to float16 with a dynamic GradScaler.
enum class Precision { k32True, kBf16Mixed, k16Mixed };
/// TrainerOptions::accelerator: "auto", "cpu", "cuda" (alias "gpu").
enum class Accelerator { kAuto, kCpu, kCuda };
/// TrainerOptions::gradient_clip_algorithm: "norm", "value".
enum class GradientClipAlgorithm { kNorm, kValue };
/// TrainerOptions::progress_style: "auto" (a bar on a terminal, lines elsewhere), "bar", "lines".
enum class ProgressStyle { kAuto, kBar, kLines };
/// Whether a monitored value improves downwards or upwards: the `mode` of EarlyStopping, ModelCheckpoint and
/// ReduceLROnPlateau, "min" or "max".
enum class MonitorMode { kMin, kMax };
/// When a scheduler steps (LRSchedulerConfig::interval) or learning rates are logged: "step", "epoch".
enum class Interval { kStep, kEpoch };
/// OneCycleLROptions::anneal_strategy: "cos", "linear".
enum class AnnealStrategy { kCos, kLinear };
/// ReduceLROnPlateauOptions::threshold_mode: "rel", "abs".
enum class ThresholdMode { kRel, kAbs };
/// Which Trainer entry point runs (Lightning's TrainerFn, the `stage` DataModule::Setup receives): "fit",
/// "validate", "test".
enum class TrainerFn { kFitting, kValidating, kTesting };

const char* ToString(Precision value);
const char* ToString(Accelerator value);
const char* ToString(GradientClipAlgorithm value);
const char* ToString(ProgressStyle value);
const char* ToString(MonitorMode value);
const char* ToString(Interval value);
const char* ToString(AnnealStrategy value);
const char* ToString(ThresholdMode value);
const char* ToString(TrainerFn value);

Precision ParsePrecision(std::string_view what, std::string_view text);
Accelerator ParseAccelerator(std::string_view what, std::string_view text);
GradientClipAlgorithm ParseGradientClipAlgorithm(std::string_view what, std::string_view text);
ProgressStyle ParseProgressStyle(std::string_view what, std::string_view text);
MonitorMode ParseMonitorMode(std::string_view what, std::string_view text);
Interval ParseInterval(std::string_view what, std::string_view text);
AnnealStrategy ParseAnnealStrategy(std::string_view what, std::string_view text);
ThresholdMode ParseThresholdMode(std::string_view what, std::string_view text);
TrainerFn ParseTrainerFn(std::string_view what, std::string_view text);

}  // namespace lakerun::train
