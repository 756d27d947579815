#include "checkpoint.h"

#include <torch/optim/sgd.h>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"
#include "model.h"

namespace lakerun::examples {
namespace {

// One SGD step on random data, so the optimizer has momentum buffers to save.
void TakeStep(Net& net, torch::optim::SGD& optimizer) {
  optimizer.zero_grad();
  at::nll_loss(net->forward(at::randn({4, 1, 28, 28})), at::randint(0, 10, {4}, at::kLong)).backward();
  optimizer.step();
}

TEST(CheckpointTest, NoDirectoryOrNoCheckpointMeansNothingToResume) {
  testing::TempDir dir;
  EXPECT_FALSE(FindLatestCheckpoint(dir.Join("missing")).has_value());
  LocalFileSystem().WriteAtomically(dir.Join("checkpoint-epoch-x.pt"), "x");
  LocalFileSystem().WriteAtomically(dir.Join("checkpoint-epoch-3.pt.tmp.1.0"), "x");
  EXPECT_FALSE(FindLatestCheckpoint(dir.path()).has_value());
}

TEST(CheckpointTest, SavesAndRestoresModelOptimizerAndPosition) {
  testing::TempDir dir;
  torch::manual_seed(3);
  Net net;
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
  TakeStep(net, optimizer);
  SaveCheckpoint(dir.path(), CheckpointPosition{1, 300}, *net, optimizer);
  TakeStep(net, optimizer);
  const std::string path = SaveCheckpoint(dir.path(), CheckpointPosition{2, 600}, *net, optimizer);
  EXPECT_EQ(path, dir.Join("checkpoint-epoch-2.pt"));
  ASSERT_EQ(FindLatestCheckpoint(dir.path()), path);
  // No temp files left behind.
  EXPECT_EQ(LocalFileSystem().List(dir.path()).size(), 2u);

  torch::manual_seed(4);
  Net restored;
  torch::optim::SGD restored_optimizer(restored->parameters(), torch::optim::SGDOptions(0.1).momentum(0.5));
  const CheckpointPosition position = LoadCheckpoint(path, *restored, restored_optimizer);
  EXPECT_EQ(position.epoch, 2);
  EXPECT_EQ(position.global_step, 600);
  for (size_t i = 0; i < net->parameters().size(); ++i) {
    EXPECT_TRUE(at::equal(net->parameters()[i], restored->parameters()[i])) << i;
  }
  // Momentum buffers came back too: one more identical step keeps the two models identical.
  torch::manual_seed(5);
  TakeStep(net, optimizer);
  torch::manual_seed(5);
  TakeStep(restored, restored_optimizer);
  for (size_t i = 0; i < net->parameters().size(); ++i) {
    EXPECT_TRUE(at::equal(net->parameters()[i], restored->parameters()[i])) << i;
  }
}

TEST(CheckpointTest, HighestEpochWinsNotTheLexicalOrder) {
  testing::TempDir dir;
  Net net;
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));
  SaveCheckpoint(dir.path(), CheckpointPosition{9, 0}, *net, optimizer);
  SaveCheckpoint(dir.path(), CheckpointPosition{10, 0}, *net, optimizer);
  EXPECT_EQ(FindLatestCheckpoint(dir.path()), dir.Join("checkpoint-epoch-10.pt"));
}

TEST(CheckpointTest, CorruptCheckpointNamesThePath) {
  testing::TempDir dir;
  const std::string path = dir.Join("checkpoint-epoch-1.pt");
  LocalFileSystem().WriteAtomically(path, "definitely not a torch archive");
  Net net;
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));
  EXPECT_THROW_WITH(LoadCheckpoint(path, *net, optimizer), CorruptDataError, path);
}

}  // namespace
}  // namespace lakerun::examples
