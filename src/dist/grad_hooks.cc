#include "dist/grad_hooks.h"

#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>

#include "dist/bucket_plan.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <map>

namespace lakerun::dist {

GradAccumulatorHooks::GradAccumulatorHooks(const char* who, const std::vector<at::Tensor>& params,
                                           const std::vector<std::string>& names,
                                           std::function<void(std::size_t)> on_ready)
    : on_ready_(std::move(on_ready)) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(params[i]);
    LAKERUN_CHECK(accumulator != nullptr, who, ": parameter '", names[i],
                  "' has no gradient accumulator (not a leaf that requires grad)");
    keys_.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          on_ready_(i);
          return outputs;
        })));
    accumulators_.push_back(std::move(accumulator));
  }
}

GradAccumulatorHooks::~GradAccumulatorHooks() {
  for (std::size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(keys_[i]);
}

BackwardArrivals::BackwardArrivals(std::size_t params, std::function<void()> on_end)
    : arrived_(params, false), twice_(params, false), on_end_(std::move(on_end)) {}

bool BackwardArrivals::Arrive(std::size_t i) {
  if (!in_backward_) {
    in_backward_ = true;
    torch::autograd::Engine::get_default_engine().queue_callback(on_end_);
  }
  if (arrived_[i]) {
    twice_[i] = true;
    return false;
  }
  arrived_[i] = true;
  ++count_;
  return true;
}

void BackwardArrivals::Misuse(const std::vector<std::string>& names, std::vector<std::string>* unused,
                              std::vector<std::string>* doubled) const {
  for (std::size_t i = 0; i < arrived_.size(); ++i) {
    if (!arrived_[i]) unused->push_back(names[i]);
    if (twice_[i]) doubled->push_back(names[i]);
  }
}

void BackwardArrivals::Reset() {
  arrived_.assign(arrived_.size(), false);
  twice_.assign(twice_.size(), false);
  count_ = 0;
  in_backward_ = false;
}

void ThrowGradientMisuse(const char* who, int rank, const std::vector<std::string>& unused,
                         const std::vector<std::string>& doubled, const std::string& unused_hint) {
  const std::vector<std::string>& list = doubled.empty() ? unused : doubled;
  std::string names;
  for (std::size_t i = 0; i < list.size() && i < 16; ++i) names += (i ? ", '" : "'") + list[i] + "'";
  if (list.size() > 16) names += StrCat(" and ", list.size() - 16, " more");
  if (!doubled.empty()) {
    LAKERUN_THROW(DistError, who, ": rank ", rank, ": parameter(s) ", names,
                  " received gradients twice in one synchronized backward; accumulate inside NoSync() instead");
  }
  LAKERUN_THROW(DistError, who, ": rank ", rank, ": ", unused.size(), " parameter(s) ",
                "received no gradient in this backward: ", names, ". ", unused_hint);
}

void BroadcastModuleState(Context& ctx, torch::nn::Module& module) {
  if (ctx.world_size() <= 1) return;
  // Tensors of one dtype and device travel together, concatenated into messages of at most kMessageBytes (a tensor
  // larger than that alone): few messages, and a transient copy of 16 MB rather than of the whole model.
  constexpr int64_t kMessageBytes = 16 << 20;
  struct Message {
    std::vector<at::Tensor> tensors;
    int64_t bytes = 0;
  };
  std::map<std::string, std::vector<Message>> groups;
  auto add = [&](const at::Tensor& t) {
    std::vector<Message>& messages = groups[FlatBufferKey(t)];
    const auto bytes = static_cast<int64_t>(t.nbytes());
    if (messages.empty() || messages.back().bytes + bytes > kMessageBytes) messages.emplace_back();
    messages.back().tensors.push_back(t);
    messages.back().bytes += bytes;
  };
  for (const at::Tensor& t : module.parameters(true)) add(t);
  for (const at::Tensor& t : module.buffers(true)) {
    if (t.defined()) add(t);
  }
  at::NoGradGuard no_grad;
  for (auto& [key, messages] : groups) {
    for (Message& message : messages) {
      std::vector<at::Tensor>& tensors = message.tensors;
      std::vector<at::Tensor> flat_parts;
      for (const at::Tensor& t : tensors) flat_parts.push_back(t.reshape({-1}));
      at::Tensor flat = at::cat(flat_parts);
      Broadcast(ctx, flat, 0);
      int64_t offset = 0;
      for (at::Tensor& t : tensors) {
        t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
        offset += t.numel();
      }
    }
  }
}

}  // namespace lakerun::dist
