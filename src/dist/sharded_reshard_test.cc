// Sharded checkpoints: every rank writes its shard, and any world size at any ZeRO level loads it (reshards), to the
// bits; and each way a checkpoint can be wrong is refused, naming what and where.
#include <lakerun/dist/sharded.h>

#include <lakerun/base/error.h>

#include "dist/rank_threads.h"
#include "dist/sharded_test_model.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

namespace lakerun::dist {
namespace {

using lakerun::testing::TempDir;
using testing::ExpectSameState;
using testing::Opt;
using testing::OptimizerStateIn;
using testing::Parallel;
using testing::ParametersIn;
using testing::Phase;
using testing::RunRanks;
using testing::ShardNet;
using testing::SmallBuckets;
using testing::TrainCase;
using testing::TrainOnRanks;
using testing::TrainResult;

constexpr auto kTimeout = std::chrono::seconds(60);
constexpr Parallel kLevels[] = {Parallel::kZero1, Parallel::kZero2, Parallel::kZero3};

void ExpectSameParameters(const std::vector<TrainResult>& got, const std::vector<TrainResult>& want,
                          const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t r = 0; r < got.size(); ++r) {
    for (std::size_t i = 0; i < want[r].params.size(); ++i) {
      EXPECT_TRUE(at::equal(got[r].params[i], want[r].params[i])) << what << " rank " << r << " parameter " << i;
    }
  }
}

// Trains 3 of the case's 6 steps at `first`, saves sharded, resumes at `second` in a fresh run: DDP's bits.
void ExpectResumesToStraightRun(Opt opt, Parallel first, Parallel second) {
  const TrainCase c = SmallBuckets(2, opt);
  const std::vector<TrainResult> straight = TrainOnRanks(c, Parallel::kDdp);
  TempDir dir;
  Phase head;
  head.end_step = 3;
  head.save_sharded = &dir.path();
  TrainOnRanks(c, first, head);
  Phase tail;
  tail.first_step = 3;
  tail.load_sharded = &dir.path();
  ExpectSameParameters(TrainOnRanks(c, second, tail), straight, StrCat(Name(first), " -> ", Name(second)));
}

class ShardedReshardTest : public ::testing::TestWithParam<Opt> {};

TEST_P(ShardedReshardTest, ResumesBitwiseAtEveryLevel) {
  for (Parallel level : kLevels) ExpectResumesToStraightRun(GetParam(), level, level);
}

TEST_P(ShardedReshardTest, ResumesBitwiseAcrossLevels) {
  for (Parallel first : kLevels) {
    for (Parallel second : kLevels) {
      if (first != second) ExpectResumesToStraightRun(GetParam(), first, second);
    }
  }
}

struct Reshard {
  int from_world;
  Parallel from;
  int to_world;
  Parallel to;
};

// Saves after 3 steps on from_world ranks; loads on to_world ranks: the full parameters and optimizer state are
// those the saving run held, bitwise, and training goes on exactly as from a full checkpoint of the saving run.
void ExpectReshards(Opt opt, Reshard r) {
  const std::string what = StrCat(r.from_world, " ranks ", Name(r.from), " -> ", r.to_world, " ranks ", Name(r.to));
  TempDir dir;
  std::string at_save, after_load;
  Phase head;
  head.end_step = 3;
  head.save = &at_save;
  head.save_sharded = &dir.path();
  TrainOnRanks(SmallBuckets(r.from_world, opt), r.from, head);

  const TrainCase after = SmallBuckets(r.to_world, opt);
  Phase load;
  load.first_step = load.end_step = 3;
  load.load_sharded = &dir.path();
  load.save = &after_load;
  TrainOnRanks(after, r.to, load);
  const std::vector<at::Tensor> saved = ParametersIn(at_save, opt), loaded = ParametersIn(after_load, opt);
  for (std::size_t i = 0; i < saved.size(); ++i) EXPECT_TRUE(at::equal(loaded[i], saved[i])) << what << " " << i;
  ExpectSameState(OptimizerStateIn(after_load, opt), OptimizerStateIn(at_save, opt), what.c_str());

  Phase from_sharded, from_full;
  from_sharded.first_step = from_full.first_step = 3;
  from_sharded.load_sharded = &dir.path();
  from_full.load = &at_save;
  ExpectSameParameters(TrainOnRanks(after, r.to, from_sharded), TrainOnRanks(after, r.to, from_full),
                       what + ", trained on");
}

TEST_P(ShardedReshardTest, ReshardsFourRanksToTwo) {
  ExpectReshards(GetParam(), {4, Parallel::kZero2, 2, Parallel::kZero2});
  ExpectReshards(GetParam(), {4, Parallel::kZero3, 2, Parallel::kZero1});
}

TEST_P(ShardedReshardTest, ReshardsTwoRanksToThree) {
  ExpectReshards(GetParam(), {2, Parallel::kZero1, 3, Parallel::kZero3});
  ExpectReshards(GetParam(), {2, Parallel::kZero3, 3, Parallel::kZero3});
}

INSTANTIATE_TEST_SUITE_P(Optimizers, ShardedReshardTest,
                         ::testing::Values(Opt::kSgd, Opt::kAdam, Opt::kRmsprop, Opt::kAdagrad),
                         [](const auto& info) { return std::string(testing::Name(info.param)); });

// Level 3 holds gathered units after a forward, and all of them inside GatherFullParameters: a load replaces them.
TEST(ShardedReshardLevel3Test, ALoadReplacesTheUnitsGatheredBefore) {
  TempDir dir;
  std::string full;
  Phase head;
  head.end_step = 2;
  head.save = &full;
  head.save_sharded = &dir.path();
  TrainOnRanks(SmallBuckets(2, Opt::kAdam), Parallel::kZero1, head);
  ShardNet reference;
  testing::Load(reference, ParametersIn(full, Opt::kAdam));
  const at::Tensor x = at::randn({4, 6}, at::detail::createCPUGenerator(3));
  RunRanks(
      2,
      [&](Context& ctx) {
        auto net = std::make_shared<ShardNet>();
        ShardedOptions options;
        options.stage = ZeroStage::kParameters;
        options.unit_min_params = 50;
        ShardedDataParallel sdp(ctx, net, {testing::MakeOpt(Opt::kAdam, *net)}, options);
        at::NoGradGuard no_grad;
        net->forward(x);  // every unit gathered, and still held
        ASSERT_GT(sdp.Memory().resident_parameter_bytes, 0);
        sdp.LoadShardedCheckpoint(dir.path());
        EXPECT_TRUE(at::equal(net->forward(x), reference.forward(x))) << "rank " << ctx.rank();
        auto gathered = sdp.GatherFullParameters();
        for (auto& p : net->parameters()) p.zero_();  // no writeback: the chunks keep the values
        sdp.LoadShardedCheckpoint(dir.path());
        const std::vector<at::Tensor> got = testing::Snapshot(*net), want = testing::Snapshot(reference);
        for (std::size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(at::equal(got[i], want[i])) << i;
      },
      kTimeout);
}

// --- The files ---

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void WriteJson(const std::string& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(1); }

// ShardNet trained 2 steps with Adam (AMSGrad, two param groups) on `world` ranks at `level`, saved sharded to `dir`.
void SaveSmallCheckpoint(const std::string& dir, int world = 2, Parallel level = Parallel::kZero2) {
  Phase head;
  head.end_step = 2;
  head.save_sharded = &dir;
  TrainOnRanks(SmallBuckets(world, Opt::kAdam), level, head);
}

TEST(ShardedCheckpointFilesTest, TheIndexNamesEveryParameterOptimizerAndRange) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path(), 2, Parallel::kZero3);
  const nlohmann::json index = ReadJson(dir.Join("index.json"));
  EXPECT_EQ(index["format"], "lakerun sharded checkpoint");
  EXPECT_EQ(index["version"], 1);
  EXPECT_EQ(index["world_size"], 2);
  EXPECT_EQ(index["stage"], "parameters");
  ShardNet net;
  const auto params = net.named_parameters();
  ASSERT_EQ(index["parameters"].size(), params.size());
  std::map<std::string, int64_t> numel;
  for (const auto& p : index["parameters"]) {
    const std::string name = p["name"];
    ASSERT_TRUE(params.contains(name)) << name;
    EXPECT_EQ(p["shape"].get<std::vector<int64_t>>(), params[name].sizes().vec()) << name;
    EXPECT_EQ(p["dtype"], "Float");
    numel[name] = p["numel"];
  }
  ASSERT_EQ(index["optimizers"].size(), 1u);
  EXPECT_EQ(index["optimizers"][0]["kind"], "Adam");
  for (const auto& p : index["optimizers"][0]["parameters"]) {
    EXPECT_EQ(p["fields"], nlohmann::json({"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}));
  }
  int64_t held = 0;
  for (int r = 0; r < 2; ++r) {
    const auto& file = index["files"][r];
    EXPECT_EQ(file["name"], StrCat("shard-0000", r, "-of-00002.bin"));
    EXPECT_EQ(std::filesystem::file_size(dir.Join(file["name"])), file["bytes"].get<uint64_t>());
    for (const auto& range : file["ranges"]) {
      held += range["numel"].get<int64_t>();
      ASSERT_EQ(range["state"].size(), 1u);
      EXPECT_EQ(range["state"][0]["step"], 2);
    }
  }
  int64_t total = 0;
  for (const auto& [name, n] : numel) total += n;
  EXPECT_EQ(held, total) << "every element is in exactly one rank file";
}

TEST(ShardedCheckpointFilesTest, ASaveReplacesTheCheckpointInItsDirectory) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path(), 4);
  SaveSmallCheckpoint(dir.path(), 2);
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(entry.path().filename());
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("index.json", "shard-00000-of-00002.bin",
                                                     "shard-00001-of-00002.bin"));
}

// --- Refusals ---

struct Mlp : torch::nn::Module {
  explicit Mlp(const std::vector<int64_t>& widths) {
    for (std::size_t i = 1; i < widths.size(); ++i) {
      register_module(StrCat("fc", i), torch::nn::Linear(widths[i - 1], widths[i]));
    }
  }
};

using Optimizers = std::vector<std::shared_ptr<torch::optim::Optimizer>>;

Optimizers AmsgradAdam(torch::nn::Module& net) {
  return {std::make_shared<torch::optim::Adam>(net.parameters(), torch::optim::AdamOptions(0.01).amsgrad(true))};
}

// How each rank builds what loads: by default what SaveSmallCheckpoint saved, on 2 ranks at level 2 with the same
// buckets (so that each rank's pieces lie in its own file).
struct Loader {
  std::vector<int64_t> widths = {6, 10, 7, 3};
  std::function<Optimizers(torch::nn::Module&)> optimizers = AmsgradAdam;
  int world = 2;
  Parallel level = Parallel::kZero2;
};

// Loads `dir` on every rank of `how`, each expecting E: returns each rank's message. A failed load leaves the
// parameters as they were.
template <typename E>
std::vector<std::string> LoadFailures(const std::string& dir, const Loader& how = {}) {
  std::vector<std::string> messages(how.world);
  RunRanks(
      how.world,
      [&](Context& ctx) {
        auto net = std::make_shared<Mlp>(how.widths);
        const TrainCase saved = SmallBuckets(how.world, Opt::kAdam);
        ShardedOptions options;
        options.stage = testing::StageOf(how.level);
        options.first_bucket_cap_bytes = saved.first_cap;
        options.bucket_cap_bytes = saved.cap;
        ShardedDataParallel sdp(ctx, net, how.optimizers(*net), options);
        std::vector<at::Tensor> before;
        {
          auto full = sdp.GatherFullParameters();
          before = testing::Snapshot(*net);
        }
        try {
          sdp.LoadShardedCheckpoint(dir);
          ADD_FAILURE() << "rank " << ctx.rank() << " loaded " << dir;
        } catch (const E& e) {
          messages[ctx.rank()] = e.what();
        }
        auto full = sdp.GatherFullParameters();
        const std::vector<at::Tensor> after = testing::Snapshot(*net);
        for (std::size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(at::equal(after[i], before[i])) << i;
      },
      kTimeout);
  return messages;
}

void ExpectEveryMessageHas(const std::vector<std::string>& messages, std::initializer_list<std::string> parts) {
  for (std::size_t r = 0; r < messages.size(); ++r) {
    for (const std::string& part : parts) EXPECT_THAT(messages[r], ::testing::HasSubstr(part)) << "rank " << r;
  }
}

TEST(ShardedCheckpointRefusalTest, ADirectoryWithoutIndexIsAnIncompleteCheckpoint) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path());
  std::filesystem::remove(dir.Join("index.json"));
  ExpectEveryMessageHas(LoadFailures<IoError>(dir.path()), {dir.Join("index.json"), "does not exist"});
}

TEST(ShardedCheckpointRefusalTest, AMissingRankFileFailsEveryRankNamingIt) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path());
  std::filesystem::remove(dir.Join("shard-00001-of-00002.bin"));
  const std::vector<std::string> messages = LoadFailures<IoError>(dir.path());
  ExpectEveryMessageHas(messages, {dir.Join("shard-00001-of-00002.bin")});
  // Rank 0's pieces lie in its own file: it never opened rank 1's, and reports rank 1's failure.
  EXPECT_THAT(messages[0], ::testing::StartsWith("rank 1: "));
}

TEST(ShardedCheckpointRefusalTest, ATruncatedRankFile) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path());
  const std::string path = dir.Join("shard-00000-of-00002.bin");
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 10);
  ExpectEveryMessageHas(LoadFailures<CorruptDataError>(dir.path()),
                        {path, StrCat(size - 10, " bytes, but the index says ", size)});
}

void Overwrite(const std::string& path, uint64_t offset, char byte) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(byte);
}

TEST(ShardedCheckpointRefusalTest, ADamagedRankFile) {
  TempDir elements, table;
  SaveSmallCheckpoint(elements.path());
  SaveSmallCheckpoint(table.path());
  const std::string name = "shard-00001-of-00002.bin";
  Overwrite(elements.Join(name), 100, '\x7f');
  ExpectEveryMessageHas(LoadFailures<CorruptDataError>(elements.path()),
                        {elements.Join(name), "block 0", "CRC-32", "damaged"});
  Overwrite(table.Join(name), std::filesystem::file_size(table.Join(name)) - 1, '\x7f');
  ExpectEveryMessageHas(LoadFailures<CorruptDataError>(table.path()),
                        {table.Join(name), "its checksum table", "damaged"});
}

TEST(ShardedCheckpointRefusalTest, ARankFileOfAnotherSave) {
  TempDir dir, other;
  SaveSmallCheckpoint(dir.path());
  SaveSmallCheckpoint(other.path());
  const std::string path = dir.Join("shard-00000-of-00002.bin");
  std::filesystem::copy_file(other.Join("shard-00000-of-00002.bin"), path,
                             std::filesystem::copy_options::overwrite_existing);
  ExpectEveryMessageHas(LoadFailures<CorruptDataError>(dir.path()), {path, "another save"});
}

TEST(ShardedCheckpointRefusalTest, ShardsThatLeaveElementsOfAParameterUncovered) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path());
  nlohmann::json index = ReadJson(dir.Join("index.json"));
  auto& ranges = index["files"][1]["ranges"];
  const nlohmann::json dropped = ranges[0];
  ranges.erase(0);
  WriteJson(dir.Join("index.json"), index);
  const std::string name = index["parameters"][dropped["parameter"].get<std::size_t>()]["name"];
  const int64_t begin = dropped["offset"], end = begin + dropped["numel"].get<int64_t>();
  ExpectEveryMessageHas(LoadFailures<CorruptDataError>(dir.path()),
                        {dir.Join("index.json"), "do not cover parameter '" + name + "'",
                         StrCat("elements [", begin, ", ", end, ")")});
}

TEST(ShardedCheckpointRefusalTest, AParameterOfAnotherShape) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path());
  Loader wider;
  wider.widths = {6, 10, 8, 3};
  ExpectEveryMessageHas(LoadFailures<InvalidArgument>(dir.path(), wider),
                        {"parameter 'fc2.weight' is [8, 10] Float in the model but [7, 10] Float in the checkpoint"});
}

TEST(ShardedCheckpointRefusalTest, ParametersTheCheckpointLacksOrTheModelLacks) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path());
  Loader deeper, shallower;
  deeper.widths = {6, 10, 7, 3, 2};
  shallower.widths = {6, 10, 7};
  ExpectEveryMessageHas(LoadFailures<InvalidArgument>(dir.path(), deeper),
                        {"the checkpoint has no parameter 'fc4.weight', 'fc4.bias' of the model"});
  ExpectEveryMessageHas(LoadFailures<InvalidArgument>(dir.path(), shallower),
                        {"the checkpoint holds parameter 'fc3.bias', 'fc3.weight', which the model lacks"});
}

TEST(ShardedCheckpointRefusalTest, AnotherOptimizerKindOrCountOrState) {
  TempDir dir;
  SaveSmallCheckpoint(dir.path());
  Loader sgd, two, plain_adam;
  sgd.optimizers = [](torch::nn::Module& net) -> Optimizers {
    return {std::make_shared<torch::optim::SGD>(net.parameters(), torch::optim::SGDOptions(0.1))};
  };
  two.optimizers = [](torch::nn::Module& net) -> Optimizers {
    auto* mlp = dynamic_cast<Mlp*>(&net);
    auto first = mlp->named_children()["fc1"]->parameters();
    std::vector<at::Tensor> rest;
    for (const auto& p : net.parameters()) {
      if (!p.is_same(first[0]) && !p.is_same(first[1])) rest.push_back(p);
    }
    return {std::make_shared<torch::optim::Adam>(first, torch::optim::AdamOptions(0.01).amsgrad(true)),
            std::make_shared<torch::optim::Adam>(rest, torch::optim::AdamOptions(0.01).amsgrad(true))};
  };
  plain_adam.optimizers = [](torch::nn::Module& net) -> Optimizers {
    return {std::make_shared<torch::optim::Adam>(net.parameters(), torch::optim::AdamOptions(0.01))};
  };
  ExpectEveryMessageHas(LoadFailures<InvalidArgument>(dir.path(), sgd),
                        {"optimizer 0 is SGD but the checkpoint's optimizer 0 is Adam"});
  ExpectEveryMessageHas(LoadFailures<InvalidArgument>(dir.path(), two),
                        {"the checkpoint holds the state of 1 optimizers, but ShardedDataParallel was given 2"});
  ExpectEveryMessageHas(LoadFailures<InvalidArgument>(dir.path(), plain_adam),
                        {"keeps state 'exp_avg', 'exp_avg_sq' for parameter", "checkpoint holds 'exp_avg', "
                                                                              "'exp_avg_sq', 'max_exp_avg_sq'"});
}

// --- Figures ---

struct WideMlp : torch::nn::Module {
  WideMlp() {
    for (int i = 1; i <= 3; ++i) layers.push_back(register_module(StrCat("fc", i), torch::nn::Linear(1024, 1024)));
  }
  at::Tensor forward(at::Tensor x) {
    for (auto& layer : layers) x = torch::tanh(layer(x));
    return x;
  }
  std::vector<torch::nn::Linear> layers;
};

struct Figure {
  ShardedCheckpointIo io;
  int64_t held = 0;  ///< bytes of the rank's chunks and optimizer state
};

// Runs `world` ranks of WideMlp + Adam at level 2: one step and a save into `dir`, or a load from it; returns each
// rank's figures.
std::vector<Figure> RunWide(int world, const std::string& dir, bool save) {
  std::vector<Figure> figures(world);
  RunRanks(
      world,
      [&](Context& ctx) {
        auto net = std::make_shared<WideMlp>();
        auto adam = std::make_shared<torch::optim::Adam>(net->parameters(), torch::optim::AdamOptions(1e-3));
        ShardedDataParallel sdp(ctx, net, {adam});
        if (save) {
          net->forward(at::randn({8, 1024})).pow(2).mean().backward();
          sdp.Step();
          sdp.SaveShardedCheckpoint(dir);
        } else {
          sdp.LoadShardedCheckpoint(dir);
        }
        const ShardedMemory memory = sdp.Memory();
        figures[ctx.rank()] = {sdp.LastCheckpointIo(), memory.chunk_bytes + memory.optimizer_state_bytes};
      },
      kTimeout);
  return figures;
}

std::string Describe(const char* verb, const std::vector<Figure>& figures) {
  std::ostringstream out;
  out << std::fixed;
  for (std::size_t r = 0; r < figures.size(); ++r) {
    const ShardedCheckpointIo& io = figures[r].io;
    out << (r ? ", " : "") << "rank " << r << " " << verb << " " << std::setprecision(2) << io.bytes / 1e6
        << " MB (holds " << figures[r].held / 1e6 << ") in " << io.files << " files, " << std::setprecision(3)
        << io.seconds << " s";
  }
  return out.str();
}

TEST(ShardedCheckpointFiguresTest, WriteAndReadTimesOfAFewMillionParameters) {
  TempDir dir;
  const auto saved = RunWide(2, dir.path(), /*save=*/true);
  const auto same = RunWide(2, dir.path(), /*save=*/false);
  const auto more = RunWide(3, dir.path(), /*save=*/false);
  const int64_t params = 3 * (1024 * 1024 + 1024);
  std::cout << "[ sharded checkpoint, " << params << " parameters + Adam ] save on 2 ranks: "
            << Describe("wrote", saved) << "; load on 2: " << Describe("read", same)
            << "; load on 3: " << Describe("read", more) << "\n";
  int64_t written = 0, files = 0, elements = 0;
  for (const Figure& f : saved) written += f.io.bytes;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) files += entry.file_size();
  const nlohmann::json index = ReadJson(dir.Join("index.json"));
  for (const auto& file : index["files"]) elements += file["checksums_at"].get<int64_t>() - 64;
  EXPECT_EQ(written, files);
  EXPECT_EQ(elements, params * 12) << "values and two Adam fields, each element once";
}

}  // namespace
}  // namespace lakerun::dist
