#include "model.h"

#include <torch/optim/sgd.h>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::examples {
namespace {

int64_t CountParameters(const Net& net) {
  int64_t n = 0;
  for (const auto& p : net->parameters()) n += p.numel();
  return n;
}

TEST(NetTest, HasTheClassicArchitecture) {
  Net net;
  EXPECT_EQ(CountParameters(net), 21840);
  std::vector<std::string> names;
  for (const auto& item : net->named_parameters()) names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight",
                                             "fc1.bias", "fc2.weight", "fc2.bias"}));
  const at::Tensor out = net->forward(at::randn({4, 1, 28, 28}));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{4, 10}));
  // Log-probabilities: each row's probabilities sum to 1.
  EXPECT_TRUE(at::allclose(out.exp().sum(1), at::ones({4}), 1e-5, 1e-5));
}

TEST(NetTest, SameSeedGivesSameInitialWeights) {
  torch::manual_seed(1);
  Net a;
  torch::manual_seed(1);
  Net b;
  torch::manual_seed(2);
  Net c;
  EXPECT_TRUE(at::equal(a->parameters()[0], b->parameters()[0]));
  EXPECT_TRUE(at::equal(a->parameters()[6], b->parameters()[6]));
  EXPECT_FALSE(at::equal(a->parameters()[0], c->parameters()[0]));
}

TEST(NetTest, NoDropoutMakesTrainingForwardDeterministic) {
  const at::Tensor x = at::randn({8, 1, 28, 28});
  NetOptions no_dropout;
  no_dropout.dropout = false;
  Net plain(no_dropout);
  plain->train();
  EXPECT_TRUE(at::equal(plain->forward(x), plain->forward(x)));
  Net dropping;
  dropping->train();
  EXPECT_FALSE(at::equal(dropping->forward(x), dropping->forward(x)));
  dropping->eval();
  EXPECT_TRUE(at::equal(dropping->forward(x), dropping->forward(x)));
}

TEST(NetTest, ParametersRoundTripThroughTorchSaveFormat) {
  testing::TempDir dir;
  torch::manual_seed(7);
  Net source;
  const std::string path = dir.Join("init.pt");
  SaveParametersForPython(source, path);
  torch::manual_seed(8);
  Net target;
  EXPECT_FALSE(at::equal(source->parameters()[2], target->parameters()[2]));
  LoadParameters(target, path);
  const auto want = ParametersByName(source);
  for (const auto& [name, tensor] : ParametersByName(target)) EXPECT_TRUE(at::equal(tensor, want.at(name))) << name;
}

TEST(NetTest, LoadingMismatchedParametersNamesThePathAndParameter) {
  testing::TempDir dir;
  const std::string path = dir.Join("bad.pt");
  c10::Dict<std::string, at::Tensor> dict;
  Net net;
  for (const auto& item : net->named_parameters()) dict.insert(item.key(), item.value().detach().clone());
  dict.insert_or_assign("fc2.bias", at::zeros({11}));
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  LocalFileSystem().WriteAtomically(path, std::string_view(bytes.data(), bytes.size()));
  EXPECT_THROW_WITH(LoadParameters(net, path), CorruptDataError, path, "'fc2.bias'", "[11]");

  const std::string garbage = dir.Join("garbage.pt");
  LocalFileSystem().WriteAtomically(garbage, "not a zip archive");
  EXPECT_THROW_WITH(LoadParameters(net, garbage), CorruptDataError, garbage);
}

}  // namespace
}  // namespace lakerun::examples
