// ZeRO level 3 (parameters sharded): DDP's parameters on a transformer-style model on 2 and 4 ranks, units that hold
// bytes only while in use, prefetch, full parameters for checkpoints, and the errors of bad use.
#include <lakerun/dist/sharded.h>

#include <lakerun/base/error.h>

#include "dist/rank_threads.h"
#include "dist/sharded_test_model.h"
#include "dist/wrap_policy.h"
#include "train/autocast_compat.h"
#include "lakerun_testing/matchers.h"

#include <ATen/autocast_mode.h>

#include <cmath>
#include <optional>
#include <mutex>

namespace lakerun::dist {
namespace {

using testing::Parallel;
using testing::RunRanks;
using testing::TinyTransformer;
using testing::TrainOnRanks;
using testing::TrainModel;

std::shared_ptr<torch::optim::Adam> AdamFor(torch::nn::Module& net) {
  return std::make_shared<torch::optim::Adam>(net.parameters(), torch::optim::AdamOptions(1e-3));
}

ShardedOptions LevelThree(int64_t unit_min_params) {
  ShardedOptions options;
  options.stage = ZeroStage::kParameters;
  options.unit_min_params = unit_min_params;
  return options;
}

// Ranks are threads here: seeding and drawing the initial weights must not interleave with another rank's.
std::shared_ptr<TinyTransformer> MakeTransformer() {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  at::manual_seed(11);
  return std::make_shared<TinyTransformer>();
}

std::vector<std::vector<at::Tensor>> TrainTransformer(int world, Parallel parallel, ShardedOptions options,
                                                      int steps = 20) {
  std::vector<std::vector<at::Tensor>> out(world);
  RunRanks(world, [&](Context& ctx) {
    out[ctx.rank()] = TrainModel<TinyTransformer>(ctx, parallel, MakeTransformer, testing::TransformerLoss, steps,
                                                  options);
  }, std::chrono::seconds(90));
  return out;
}

double MaxDiff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, (a[i] - b[i]).abs().max().item<double>());
  return diff;
}

class LevelsOnATransformerTest : public ::testing::TestWithParam<int> {};

// Embedding, attention, layer norm and GELU: 20 Adam steps under each level end within 1e-5 of DDP (in practice the
// same bits: every level sums gradients in rank order), and every rank holds the same bits.
TEST_P(LevelsOnATransformerTest, EveryLevelEndsWithinAMillionthOfDdp) {
  const int world = GetParam();
  ShardedOptions options;
  options.unit_min_params = 5000;  // each attention block is a unit; embeddings, final norm and head are the root
  const auto ddp = TrainTransformer(world, Parallel::kDdp, options);
  EXPECT_GT(MaxDiff(ddp[0], MakeTransformer()->parameters()), 1e-3) << "the model must actually train";
  for (Parallel level : {Parallel::kZero1, Parallel::kZero2, Parallel::kZero3}) {
    const auto zero = TrainTransformer(world, level, options);
    for (int r = 0; r < world; ++r) {
      for (std::size_t i = 0; i < zero[r].size(); ++i) {
        EXPECT_TRUE(at::equal(zero[r][i], zero[0][i])) << Name(level) << " rank " << r << " parameter " << i;
      }
      EXPECT_LE(MaxDiff(zero[r], ddp[r]), 1e-5) << Name(level) << " rank " << r;
    }
    std::printf("[ %s, %d ranks ] max |%s - ddp| = %g\n", Name(level), world, Name(level), MaxDiff(zero[0], ddp[0]));
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, LevelsOnATransformerTest, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "_ranks"; });

// Small units (each Linear and each embedding), at most 3 holding bytes: between steps a rank holds none; while
// computing, never more than 3 units' worth; from the second step on, prefetch starts gathers before they are needed.
TEST(LevelThreeTest, UnitsHoldBytesOnlyWhileInUseAndPrefetchOverlapsTheNext) {
  std::mutex mu;
  RunRanks(2, [&](Context& ctx) {
    auto net = MakeTransformer();
    auto adam = AdamFor(*net);
    ShardedOptions options = LevelThree(1000);
    options.max_resident_units = 3;
    ShardedDataParallel sdp(ctx, net, {adam}, options);
    EXPECT_EQ(sdp.Memory().resident_parameter_bytes, 0);
    int64_t model_bytes = 0, largest = 0;
    for (const auto& p : net->parameters()) model_bytes += static_cast<int64_t>(p.numel()) * 4;
    largest = (TinyTransformer::kWidth * 4 * TinyTransformer::kWidth + 4 * TinyTransformer::kWidth) * 4;  // "up"
    for (int s = 0; s < 3; ++s) {
      adam->zero_grad();
      testing::TransformerLoss(*net, s, ctx.rank()).backward();
      sdp.Step();
      const ShardedMemory m = sdp.Memory();
      const ShardedStepStats stats = sdp.LastStepStats();
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_EQ(m.resident_parameter_bytes, 0) << "step " << s;
      EXPECT_LE(m.peak_resident_parameter_bytes, 3 * (largest + 8)) << "step " << s;
      EXPECT_LT(m.peak_resident_parameter_bytes, model_bytes / 2);
      EXPECT_GE(stats.parameter_gathers, 8) << "step " << s;
      if (s == 0) {
        EXPECT_EQ(stats.prefetched_gathers, 0);
      } else {
        EXPECT_GT(stats.prefetched_gathers, stats.parameter_gathers / 2) << "step " << s;
      }
      if (ctx.rank() == 0) {
        std::printf("[ step %d ] %d gathers, %d prefetched; peak %lld of %lld parameter bytes\n", s,
                    stats.parameter_gathers, stats.prefetched_gathers,
                    static_cast<long long>(m.peak_resident_parameter_bytes), static_cast<long long>(model_bytes));
      }
    }
  });
}

// Prefetch and the residency limit change when bytes arrive, never which: the same bits with or without them.
TEST(LevelThreeTest, PrefetchAndResidencyDoNotChangeTheResult) {
  ShardedOptions fine;
  fine.unit_min_params = 1000;
  const auto with = TrainTransformer(2, Parallel::kZero3, fine, 4);
  fine.prefetch = false;
  fine.max_resident_units = 1;
  const auto without = TrainTransformer(2, Parallel::kZero3, fine, 4);
  for (std::size_t i = 0; i < with[0].size(); ++i) EXPECT_TRUE(at::equal(with[0][i], without[0][i])) << i;
}

// Full parameters for a checkpoint: readable while the scope lives; with writeback, values loaded meanwhile become
// the shards that the next forward gathers, on every rank.
TEST(LevelThreeTest, FullParametersAreReadableAndWriteBackIntoTheShards) {
  RunRanks(2, [&](Context& ctx) {
    auto net = MakeTransformer();
    auto adam = AdamFor(*net);
    ShardedOptions options = LevelThree(5000);
    ShardedDataParallel sdp(ctx, net, {adam}, options);
    {
      auto full = sdp.GatherFullParameters(/*writeback=*/true);
      EXPECT_EQ(sdp.Memory().resident_parameter_bytes, sdp.Memory().peak_resident_parameter_bytes);
      at::NoGradGuard no_grad;
      for (auto& p : net->parameters()) p.fill_(0.25);
    }
    EXPECT_EQ(sdp.Memory().resident_parameter_bytes, 0);
    {
      auto full = sdp.GatherFullParameters();
      for (const auto& item : net->named_parameters()) {
        EXPECT_TRUE(at::equal(item.value(), at::full_like(item.value(), 0.25))) << item.key();
      }
    }
    at::NoGradGuard no_grad;
    const at::Tensor logits = net->forward(at::zeros({1, 2}, at::kLong));
    EXPECT_TRUE(at::allclose(logits, at::full_like(logits, 0.25 * 32 * 0.25 + 0.25), 0, 1e-2)) << logits;
  });
}

TEST(LevelThreeTest, RanksWithDifferentUnitsFailTogetherNamingBoth) {
  std::mutex mu;
  std::vector<std::string> errors;
  RunRanks(2, [&](Context& ctx) {
    auto net = MakeTransformer();
    auto adam = AdamFor(*net);
    ShardedOptions options = LevelThree(ctx.rank() == 0 ? 5000 : 1000);
    try {
      ShardedDataParallel sdp(ctx, net, {adam}, options);
    } catch (const DistError& e) {
      std::lock_guard<std::mutex> lock(mu);
      errors.push_back(e.what());
    }
  });
  ASSERT_EQ(errors.size(), 2u);
  for (const std::string& e : errors) {
    EXPECT_THAT(e, ::testing::HasSubstr("'blocks.1' (12704 elements)"));
    EXPECT_THAT(e, ::testing::HasSubstr("'blocks.1.down' (4128 elements)"));
  }
}

// A gather that fails (here: rank 1 never joins it) cannot fail the operation that needed it; the unit reads NaN,
// and backward and the step raise the error, naming the rank that did not arrive.
TEST(LevelThreeTest, AFailedGatherReadsNaNAndBackwardRaisesTheError) {
  std::mutex mu;
  std::string backward_error, step_error;
  bool nan = false;
  RunRanks(2, [&](Context& ctx) {
    auto net = MakeTransformer();
    auto adam = AdamFor(*net);
    ShardedOptions options = LevelThree(5000);
    ShardedDataParallel sdp(ctx, net, {adam}, options);
    if (ctx.rank() == 1) return;
    at::Tensor loss = testing::TransformerLoss(*net, 0, 0);
    std::lock_guard<std::mutex> lock(mu);
    nan = std::isnan(loss.item<double>());
    try {
      loss.backward();
    } catch (const std::exception& e) {
      backward_error = e.what();
    }
    try {
      sdp.Step();
    } catch (const std::exception& e) {
      step_error = e.what();
    }
  }, std::chrono::seconds(2));
  EXPECT_TRUE(nan);
  EXPECT_THAT(backward_error, ::testing::HasSubstr("waiting for rank(s) 1"));
  EXPECT_EQ(step_error, backward_error);
}

// offload_optimizer_state keeps the optimizer state and the stepped chunks on the CPU and copies gradients there and
// values back: with CPU parameters the same bits, with clipping and accumulation, from a DDP checkpoint too (its
// state is split onto the CPU pieces), and every rank's state is where the offload puts it.
TEST(OffloadTest, OffloadedLevelsTwoAndThreeGiveTheSameBits) {
  testing::TrainCase c;
  c.accumulate = 2;
  c.clip_norm = 0.05;
  c.first_cap = 64;
  c.cap = 256;
  std::string ckpt;
  testing::Phase head;
  head.end_step = 3;
  head.save = &ckpt;
  testing::TrainOnRanks(c, Parallel::kDdp, head);
  testing::Phase tail;
  tail.first_step = 3;
  tail.load = &ckpt;
  for (Parallel level : {Parallel::kZero2, Parallel::kZero3}) {
    for (const testing::Phase& phase : {testing::Phase{}, tail}) {
      c.offload = false;
      const auto plain = TrainOnRanks(c, level, phase);
      c.offload = true;
      const auto offloaded = TrainOnRanks(c, level, phase);
      for (int r = 0; r < c.world; ++r) {
        for (std::size_t i = 0; i < plain[r].params.size(); ++i) {
          EXPECT_TRUE(at::equal(offloaded[r].params[i], plain[r].params[i]))
              << Name(level) << (phase.load ? " resumed" : "") << " rank " << r << " parameter " << i;
        }
        EXPECT_EQ(offloaded[r].state_bytes, plain[r].state_bytes);
      }
    }
  }
}

TEST(OffloadTest, LevelOneRefusesIt) {
  RunRanks(1, [&](Context& ctx) {
    auto net = MakeTransformer();
    auto adam = AdamFor(*net);
    ShardedOptions options;
    options.stage = ZeroStage::kOptimizerState;
    options.offload_optimizer_state = true;
    EXPECT_THROW_WITH(ShardedDataParallel(ctx, net, {adam}, options), ConfigError,
                      "offload_optimizer_state needs level 2 or 3");
    options.stage = ZeroStage::kParameters;
    ShardedDataParallel sdp(ctx, net, {adam}, options);
    const ShardedMemory m = sdp.Memory();
    EXPECT_EQ(m.offloaded_chunk_bytes, 2 * m.chunk_bytes);  // values and gradients
  });
}

// CPU autocast to bfloat16 for one forward, as the Trainer's bf16-mixed runs it.
class Bf16Autocast {
 public:
  Bf16Autocast() {
    train::compat::SetAutocastDtype(c10::DeviceType::CPU, at::kBFloat16);
    train::compat::SetAutocastEnabled(c10::DeviceType::CPU, true);
    at::autocast::increment_nesting();
  }
  ~Bf16Autocast() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    train::compat::SetAutocastEnabled(c10::DeviceType::CPU, false);
  }
};

struct MixedRun {
  std::vector<std::vector<at::Tensor>> params{2};  // each rank's, from GatherFullParameters
  int64_t peak_unit_bytes = 0;                      // rank 0's, before the full gather
  bool dtypes_as_expected = true;
};

MixedRun TrainUnderAutocast(std::optional<at::ScalarType> param_dtype, bool shared_memory, bool gather_midway = false) {
  MixedRun run;
  std::mutex mu;
  RunRanks(2, [&](Context& ctx) {
    auto net = MakeTransformer();
    auto adam = AdamFor(*net);
    ShardedOptions options = LevelThree(1000);
    options.param_dtype = param_dtype;
    options.shared_memory = shared_memory;
    ShardedDataParallel sdp(ctx, net, {adam}, options);
    bool ok = true;
    for (const auto& p : net->parameters()) ok = ok && p.scalar_type() == param_dtype.value_or(at::kFloat);
    for (int s = 0; s < 10; ++s) {
      adam->zero_grad();
      at::Tensor loss;
      {
        Bf16Autocast autocast;
        loss = testing::TransformerLoss(*net, s, ctx.rank());
      }
      loss.backward();
      sdp.Step();
      if (s == 4 && gather_midway) auto full = sdp.GatherFullParameters();  // a checkpoint's gather
    }
    const int64_t peak = sdp.Memory().peak_resident_parameter_bytes;
    auto full = sdp.GatherFullParameters();
    for (const auto& p : net->parameters()) ok = ok && p.scalar_type() == at::kFloat;  // the master's values
    std::lock_guard<std::mutex> lock(mu);
    run.params[ctx.rank()] = testing::Snapshot(*net);
    if (ctx.rank() == 0) run.peak_unit_bytes = peak;
    run.dtypes_as_expected = run.dtypes_as_expected && ok;
  }, std::chrono::seconds(90));
  return run;
}

// Mixed precision (param_dtype bf16) against full-precision level 3, both under bf16 autocast: the parameters hold
// bf16 while wrapped and gathered units take half the bytes; the optimizers step an fp32 master, whose values
// GatherFullParameters gives; through Gloo as through shared memory. The runs differ a little: with bf16 parameters
// the weights autocast leaves alone (layer norms, embeddings) are bf16, and a Linear on 3-D input adds its bias in
// bf16 where autocast adds an fp32 bias to the bf16 product in fp32.
TEST(LevelThreeTest, MixedPrecisionGathersBf16AndStepsAFloatMaster) {
  for (bool shared_memory : {true, false}) {
    const MixedRun mixed = TrainUnderAutocast(at::kBFloat16, shared_memory);
    const MixedRun full = TrainUnderAutocast(std::nullopt, shared_memory);
    // Full parameters in the middle (a checkpoint) seat the parameters in fp32 masters and back: nothing changes.
    const MixedRun gathered = TrainUnderAutocast(at::kBFloat16, shared_memory, /*gather_midway=*/true);
    for (std::size_t i = 0; i < mixed.params[0].size(); ++i) {
      EXPECT_TRUE(at::equal(gathered.params[0][i], mixed.params[0][i])) << "a full gather changed parameter " << i;
    }
    EXPECT_TRUE(mixed.dtypes_as_expected);
    EXPECT_TRUE(full.dtypes_as_expected);
    for (std::size_t i = 0; i < mixed.params[0].size(); ++i) {
      EXPECT_TRUE(at::equal(mixed.params[1][i], mixed.params[0][i])) << "ranks differ at parameter " << i;
    }
    // Adam turns small gradient differences into whole steps, so compare the updates as vectors: how far apart the
    // two runs end, against how far training moved the parameters.
    const std::vector<at::Tensor> init = testing::Snapshot(*MakeTransformer());
    double apart = 0, moved = 0;
    for (std::size_t i = 0; i < init.size(); ++i) {
      apart += (mixed.params[0][i] - full.params[0][i]).pow(2).sum().item<double>();
      moved += (full.params[0][i] - init[i]).pow(2).sum().item<double>();
    }
    const double relative = std::sqrt(apart / moved);
    EXPECT_GT(apart, 0.0) << "bf16 weights must show";
    EXPECT_LT(relative, 0.25);
    EXPECT_EQ(mixed.peak_unit_bytes * 2, full.peak_unit_bytes);
    std::printf("[ mixed precision, %s ] |bf16 run - fp32 run| / |fp32 run's update| = %.4f after 10 steps; peak "
                "unit bytes %lld vs %lld\n",
                shared_memory ? "shared memory" : "gloo", relative, static_cast<long long>(mixed.peak_unit_bytes),
                static_cast<long long>(full.peak_unit_bytes));
  }
}

TEST(LevelThreeTest, MixedPrecisionNeedsLevelThree) {
  RunRanks(1, [&](Context& ctx) {
    auto net = MakeTransformer();
    auto adam = AdamFor(*net);
    ShardedOptions options;
    options.stage = ZeroStage::kGradients;
    options.param_dtype = at::kBFloat16;
    EXPECT_THROW_WITH(ShardedDataParallel(ctx, net, {adam}, options), ConfigError,
                      "param_dtype (mixed precision) needs level 3");
  });
}

TEST(WrapPolicyTest, ThresholdWrapsChildrenBeforeParentsAndTheRestIsTheRoot) {
  TinyTransformer net;
  std::vector<at::Tensor> params;
  std::vector<std::string> names;
  for (const auto& item : net.named_parameters()) {
    params.push_back(item.value());
    names.push_back(item.key());
  }
  std::vector<std::string> got;
  for (const ShardUnit& u : PlanShardUnits(net, params, names, 5000, {})) got.push_back(u.name);
  EXPECT_EQ(got, (std::vector<std::string>{"blocks.1", "blocks.0", "(root)"}));
  got.clear();
  for (const ShardUnit& u : PlanShardUnits(net, params, names, 1000, {})) got.push_back(u.name);
  EXPECT_EQ(got, (std::vector<std::string>{"head", "blocks.1.down", "blocks.1.up", "blocks.1.proj", "blocks.1.qkv",
                                           "blocks.0.down", "blocks.0.up", "blocks.0.proj", "blocks.0.qkv", "tokens",
                                           "(root)"}));
  got.clear();
  const auto listed = PlanShardUnits(net, params, names, 1, {"blocks.0", "blocks.0.up", "head"});
  for (const ShardUnit& u : listed) got.push_back(u.name);
  EXPECT_EQ(got, (std::vector<std::string>{"head", "blocks.0.up", "blocks.0", "(root)"}));
  EXPECT_EQ(listed[1].params.size(), 2u);  // up's weight and bias; blocks.0 keeps the other ten
  EXPECT_EQ(listed[2].params.size(), 10u);
  EXPECT_THROW_WITH(PlanShardUnits(net, params, names, 1, {"blocks.7"}), ConfigError,
                    "no submodule 'blocks.7' to wrap as a unit; the submodules are 'tokens', 'positions', 'blocks'");
  EXPECT_THROW_WITH(PlanShardUnits(net, params, names, 1, {"blocks.0.ln1", "blocks.0.ln1"}), ConfigError,
                    "name 'blocks.0.ln1' twice");
  EXPECT_THROW_WITH(PlanShardUnits(net, params, names, 0, {}), ConfigError, "threshold must be positive");
}

TEST(WrapPolicyTest, AUnitMixingDtypesIsAConfigError) {
  TinyTransformer net;
  net.head->weight.set_data(net.head->weight.to(at::kDouble));
  std::vector<at::Tensor> params;
  std::vector<std::string> names;
  for (const auto& item : net.named_parameters()) {
    params.push_back(item.value());
    names.push_back(item.key());
  }
  EXPECT_THROW_WITH(PlanShardUnits(net, params, names, 1, {"head"}), ConfigError,
                    "unit 'head' mixes parameters of");
}

}  // namespace
}  // namespace lakerun::dist
