#include "dist/optimizer_state.h"

#include <lakerun/base/error.h>
#include <lakerun/dist/sharded.h>

#include <torch/optim/adagrad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

namespace lakerun::dist {
namespace {

namespace optim = torch::optim;

// A tensor field of a state type: its name and its accessors.
template <typename State>
struct Field {
  const char* name;
  const at::Tensor& (State::*get)() const;
  State& (State::*set)(const at::Tensor&);
};

// Per kind: optimizer, options and state types, whether the state counts steps, and its tensor fields.
template <typename OptimizerT, typename OptionsT, typename StateT, bool kHasStep>
struct Traits {
  using Optimizer = OptimizerT;
  using Options = OptionsT;
  using State = StateT;
  static constexpr bool has_step = kHasStep;
};

using SgdTraits = Traits<optim::SGD, optim::SGDOptions, optim::SGDParamState, false>;
using AdamTraits = Traits<optim::Adam, optim::AdamOptions, optim::AdamParamState, true>;
using AdamWTraits = Traits<optim::AdamW, optim::AdamWOptions, optim::AdamWParamState, true>;
using RmspropTraits = Traits<optim::RMSprop, optim::RMSpropOptions, optim::RMSpropParamState, true>;
using AdagradTraits = Traits<optim::Adagrad, optim::AdagradOptions, optim::AdagradParamState, true>;

template <typename S>
using Fields = std::vector<Field<S>>;

Fields<optim::SGDParamState> FieldsOf(SgdTraits) {
  return {{"momentum_buffer", &optim::SGDParamState::momentum_buffer, &optim::SGDParamState::momentum_buffer}};
}
template <typename S>
Fields<S> AdamFields() {
  return {{"exp_avg", &S::exp_avg, &S::exp_avg},
          {"exp_avg_sq", &S::exp_avg_sq, &S::exp_avg_sq},
          {"max_exp_avg_sq", &S::max_exp_avg_sq, &S::max_exp_avg_sq}};
}
Fields<optim::AdamParamState> FieldsOf(AdamTraits) { return AdamFields<optim::AdamParamState>(); }
Fields<optim::AdamWParamState> FieldsOf(AdamWTraits) { return AdamFields<optim::AdamWParamState>(); }
Fields<optim::RMSpropParamState> FieldsOf(RmspropTraits) {
  using S = optim::RMSpropParamState;
  return {{"square_avg", &S::square_avg, &S::square_avg},
          {"momentum_buffer", &S::momentum_buffer, &S::momentum_buffer},
          {"grad_avg", &S::grad_avg, &S::grad_avg}};
}
Fields<optim::AdagradParamState> FieldsOf(AdagradTraits) {
  return {{"sum", &optim::AdagradParamState::sum, &optim::AdagradParamState::sum}};
}

// Which of FieldsOf's fields a group with these options fills (the same order).
std::vector<bool> Used(const optim::SGDOptions& o) { return {o.momentum() != 0}; }
std::vector<bool> Used(const optim::AdamOptions& o) { return {true, true, o.amsgrad()}; }
std::vector<bool> Used(const optim::AdamWOptions& o) { return {true, true, o.amsgrad()}; }
std::vector<bool> Used(const optim::RMSpropOptions& o) { return {true, o.momentum() > 0, o.centered()}; }
std::vector<bool> Used(const optim::AdagradOptions&) { return {true}; }

// Calls body(Traits{}) for `kind`.
template <typename Body>
auto Visit(OptimizerKind kind, Body&& body) {
  switch (kind) {
    case OptimizerKind::kSgd: return body(SgdTraits{});
    case OptimizerKind::kAdam: return body(AdamTraits{});
    case OptimizerKind::kAdamW: return body(AdamWTraits{});
    case OptimizerKind::kRmsprop: return body(RmspropTraits{});
    case OptimizerKind::kAdagrad: return body(AdagradTraits{});
  }
  LAKERUN_THROW(InternalError, "unknown OptimizerKind ", static_cast<int>(kind));
}

template <typename T>
const typename T::Options& OptionsAs(T, const optim::OptimizerOptions& options, const char* what) {
  const auto* typed = dynamic_cast<const typename T::Options*>(&options);
  LAKERUN_CHECK(typed != nullptr, what, ": options of another optimizer type");
  return *typed;
}

}  // namespace

const char* ToString(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "SGD";
    case OptimizerKind::kAdam: return "Adam";
    case OptimizerKind::kAdamW: return "AdamW";
    case OptimizerKind::kRmsprop: return "RMSprop";
    case OptimizerKind::kAdagrad: return "Adagrad";
  }
  return "?";
}

std::optional<OptimizerKind> KindOf(const optim::Optimizer& optimizer) {
  if (dynamic_cast<const optim::SGD*>(&optimizer) != nullptr) return OptimizerKind::kSgd;
  if (dynamic_cast<const optim::Adam*>(&optimizer) != nullptr) return OptimizerKind::kAdam;
  if (dynamic_cast<const optim::AdamW*>(&optimizer) != nullptr) return OptimizerKind::kAdamW;
  if (dynamic_cast<const optim::RMSprop*>(&optimizer) != nullptr) return OptimizerKind::kRmsprop;
  if (dynamic_cast<const optim::Adagrad*>(&optimizer) != nullptr) return OptimizerKind::kAdagrad;
  return std::nullopt;
}

std::unique_ptr<optim::Optimizer> MakeOptimizer(OptimizerKind kind, std::vector<optim::OptimizerParamGroup> groups,
                                                const optim::OptimizerOptions& defaults) {
  return Visit(kind, [&](auto traits) -> std::unique_ptr<optim::Optimizer> {
    using T = decltype(traits);
    return std::make_unique<typename T::Optimizer>(std::move(groups), OptionsAs(traits, defaults, "MakeOptimizer"));
  });
}

std::vector<std::string> StateTensorNames(OptimizerKind kind, const optim::OptimizerOptions& group_options) {
  return Visit(kind, [&](auto traits) {
    const auto fields = FieldsOf(traits);
    const std::vector<bool> used = Used(OptionsAs(traits, group_options, "StateTensorNames"));
    std::vector<std::string> names;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (used[i]) names.push_back(fields[i].name);
    }
    return names;
  });
}

StateParts Decompose(OptimizerKind kind, const optim::OptimizerParamState& state) {
  return Visit(kind, [&](auto traits) {
    using T = decltype(traits);
    const auto* typed = dynamic_cast<const typename T::State*>(&state);
    LAKERUN_CHECK(typed != nullptr, "Decompose: the state is not ", ToString(kind), "'s");
    StateParts parts;
    if constexpr (T::has_step) parts.step = typed->step();
    for (const auto& f : FieldsOf(traits)) {
      const at::Tensor& t = (typed->*f.get)();
      if (t.defined()) parts.tensors.emplace_back(f.name, t);
    }
    return parts;
  });
}

std::unique_ptr<optim::OptimizerParamState> Compose(OptimizerKind kind, const StateParts& parts) {
  return Visit(kind, [&](auto traits) -> std::unique_ptr<optim::OptimizerParamState> {
    using T = decltype(traits);
    auto state = std::make_unique<typename T::State>();
    if constexpr (T::has_step) state->step(parts.step.value_or(0));
    for (const auto& [name, tensor] : parts.tensors) {
      bool known = false;
      for (const auto& f : FieldsOf(traits)) {
        if (name == f.name) {
          ((*state).*f.set)(tensor);
          known = true;
        }
      }
      LAKERUN_CHECK(known, "Compose: ", ToString(kind), " state has no field '", name, "'");
    }
    return state;
  });
}

bool KeepsStepCount(OptimizerKind kind) {
  return Visit(kind, [](auto traits) { return decltype(traits)::has_step; });
}

namespace {

template <typename Key>
Key KeyOf(c10::TensorImpl* impl) {
  if constexpr (std::is_same_v<Key, std::string>) {
    return StrCat(static_cast<const void*>(impl));  // what c10::guts::to_string writes for the pointer
  } else {
    return impl;
  }
}

}  // namespace

StateKeyType StateKey(const at::Tensor& param) { return KeyOf<StateKeyType>(param.unsafeGetTensorImpl()); }

int64_t OptimizerStateBytes(const optim::Optimizer& optimizer) {
  const std::optional<OptimizerKind> kind = KindOf(optimizer);
  LAKERUN_CHECK(kind.has_value(), "OptimizerStateBytes: not SGD, Adam, AdamW, RMSprop or Adagrad");
  int64_t bytes = 0;
  for (const auto& [key, state] : optimizer.state()) {
    for (const auto& [name, t] : Decompose(*kind, *state).tensors) bytes += static_cast<int64_t>(t.nbytes());
  }
  return bytes;
}

}  // namespace lakerun::dist
