#include "train/data_parallel.h"

#include <torch/nn/utils/clip_grad.h>

namespace lakerun::train {
namespace {

// The Trainer does not own the module: the wrappers get a pointer that deletes nothing.
std::shared_ptr<torch::nn::Module> Alias(Module& module) {
  return std::shared_ptr<torch::nn::Module>(&module, [](torch::nn::Module*) {});
}

}  // namespace

DataParallel::DataParallel(Strategy strategy, const FsdpOptions& fsdp, dist::Context& ctx, Module& module,
                           const OptimizerList& optimizers) {
  if (strategy == Strategy::kDdp) {
    ddp_ = std::make_unique<dist::DistributedDataParallel>(ctx, Alias(module));
    return;
  }
  dist::ShardedOptions options;
  options.stage = strategy == Strategy::kZero1   ? dist::ZeroStage::kOptimizerState
                  : strategy == Strategy::kZero2 ? dist::ZeroStage::kGradients
                                                 : dist::ZeroStage::kParameters;
  options.unit_min_params = fsdp.unit_min_params;
  options.unit_modules = fsdp.unit_modules;
  if (strategy == Strategy::kFsdp) {
    options.param_dtype = fsdp.param_dtype;
    options.offload_optimizer_state = fsdp.cpu_offload;
  }
  sharded_ = std::make_unique<dist::ShardedDataParallel>(ctx, Alias(module), optimizers, options);
}

void DataParallel::Backward(const at::Tensor& loss, bool sync) {
  if (!sync && ddp_) {
    auto scope = ddp_->NoSync();
    loss.backward();
  } else if (!sync && sharded_) {
    auto scope = sharded_->NoSync();
    loss.backward();
  } else {
    loss.backward();
  }
}

void DataParallel::ClipGradNorm(Module& module, double max_norm) {
  if (sharded_) {
    sharded_->ClipGradNorm(max_norm);
  } else {
    torch::nn::utils::clip_grad_norm_(module.parameters(), max_norm);
  }
}

void DataParallel::ClipGradValue(Module& module, double clip_value) {
  if (sharded_) {
    sharded_->ClipGradValue(clip_value);
  } else {
    torch::nn::utils::clip_grad_value_(module.parameters(), clip_value);
  }
}

void DataParallel::Step(PrecisionPlugin& precision, const OptimizerList& optimizers) {
  if (sharded_) {
    sharded_->Step();
  } else {
    for (auto& opt : optimizers) precision.Step(*opt);
  }
}

std::optional<dist::ShardedDataParallel::GatheredState> DataParallel::GatherOptimizerState() {
  if (!sharded_) return std::nullopt;
  return sharded_->GatherOptimizerState(0);
}

std::optional<dist::ShardedDataParallel::FullParameters> DataParallel::GatherFullParameters(bool writeback) {
  if (!sharded_) return std::nullopt;
  return sharded_->GatherFullParameters(writeback);
}

void DataParallel::Unshard() {
  if (!sharded_ || sharded_->stage() != dist::ZeroStage::kParameters) return;
  std::vector<at::Tensor> params = sharded_->module().parameters(), whole;
  {
    auto full = sharded_->GatherFullParameters();  // full precision under mixed precision too
    for (const at::Tensor& p : params) whole.push_back(p.detach().clone());
  }
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) params[i].set_data(whole[i]);  // out of the unit buffers
  sharded_.reset();
}

}  // namespace lakerun::train
