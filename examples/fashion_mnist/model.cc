#include "model.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/dropout.h>
#include <torch/nn/functional/pooling.h>
#include <torch/serialize.h>

#include <string_view>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"

namespace lakerun::examples {

namespace F = torch::nn::functional;

NetImpl::NetImpl(NetOptions options) : options_(options) {
  conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 10, 5)));
  conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(10, 20, 5)));
  conv2_drop_ = register_module("conv2_drop", torch::nn::Dropout2d());
  fc1_ = register_module("fc1", torch::nn::Linear(320, 50));
  fc2_ = register_module("fc2", torch::nn::Linear(50, 10));
}

at::Tensor NetImpl::forward(const at::Tensor& input) {
  const bool drop = is_training() && options_.dropout;
  at::Tensor x = conv1_->forward(input);
  // conv2 and both max-pools then run on NHWC (see NetOptions::channels_last).
  if (options_.channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
  x = at::relu(at::max_pool2d(x, {2, 2}));
  x = conv2_->forward(x);
  if (drop) x = conv2_drop_->forward(x);
  x = at::relu(at::max_pool2d(x, {2, 2}));
  x = x.reshape({-1, 320});  // a copy into NCHW order when x is channels-last
  x = at::relu(fc1_->forward(x));
  if (drop) x = F::dropout(x, F::DropoutFuncOptions().training(true));
  x = fc2_->forward(x);
  return at::log_softmax(x, /*dim=*/1);
}

std::map<std::string, at::Tensor> ParametersByName(const Net& net) {
  std::map<std::string, at::Tensor> out;
  for (const auto& item : net->named_parameters()) out[item.key()] = item.value().detach().clone();
  return out;
}

void SaveParametersForPython(const Net& net, const std::string& path) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& item : net->named_parameters()) dict.insert(item.key(), item.value().detach().clone());
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  LocalFileSystem().WriteAtomically(path, std::string_view(bytes.data(), bytes.size()));
}

void LoadParameters(Net& net, const std::string& path) {
  const std::string bytes = LocalFileSystem().ReadFile(path);
  c10::IValue value;
  try {
    value = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const c10::Error& e) {
    LAKERUN_THROW(CorruptDataError, path, ": not a torch.save file of parameters: ", e.what_without_backtrace());
  }
  LAKERUN_CHECK_AS(CorruptDataError, value.isGenericDict(), path, ": expected a dict name -> tensor, got ",
                   value.tagKind());
  c10::impl::GenericDict dict = value.toGenericDict();
  torch::NoGradGuard no_grad;
  for (auto& item : net->named_parameters()) {
    auto it = dict.find(c10::IValue(item.key()));
    LAKERUN_CHECK_AS(CorruptDataError, it != dict.end(), path, ": parameter '", item.key(), "' is missing");
    LAKERUN_CHECK_AS(CorruptDataError, it->value().isTensor(), path, ": parameter '", item.key(),
                     "' is not a tensor");
    const at::Tensor src = it->value().toTensor();
    LAKERUN_CHECK_AS(CorruptDataError, src.sizes() == item.value().sizes(), path, ": parameter '", item.key(),
                     "' has shape ", src.sizes(), ", the model expects ", item.value().sizes());
    item.value().copy_(src);
  }
  LAKERUN_CHECK_AS(CorruptDataError, dict.size() == net->named_parameters().size(), path, " holds ", dict.size(),
                   " entries, the model has ", net->named_parameters().size(), " parameters");
}

}  // namespace lakerun::examples
