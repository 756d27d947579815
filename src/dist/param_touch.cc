// Built with NDEBUG whatever the build type (src/dist/CMakeLists.txt): libtorch is a release build, and
// at::RecordFunction has a debug-only member in its layout, so inputs() read from a debug build of this file would
// read the wrong field of libtorch's object.
#include "dist/param_touch.h"

#include <lakerun/base/error.h>

#include <ATen/record_function.h>
#include <c10/core/StorageImpl.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace lakerun::dist {

struct ParameterTouchWatch::Entry {
  OnTouch callback;
};

namespace {

struct Owner {
  std::shared_ptr<ParameterTouchWatch::Entry> entry;
  std::size_t unit = 0;
};
using Snapshot = std::unordered_map<const c10::StorageImpl*, Owner>;

// Registered storages. The observer reads an immutable snapshot; (un)registering replaces it under the mutex.
struct Registry {
  std::mutex mu;
  std::shared_ptr<const Snapshot> snapshot = std::make_shared<Snapshot>();
  at::CallbackHandle handle = 0;
  int watches = 0;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: observers may run during static destruction
  return *registry;
}

thread_local bool t_in_callback = false;

// Operations that read no element of their inputs: views and the *_like factories.
bool ReadsOnlyMetadata(const char* name) {
  static const std::unordered_set<std::string_view> kMetadataOnly = {
      "aten::view", "aten::view_as", "aten::_unsafe_view", "aten::reshape", "aten::reshape_as", "aten::t",
      "aten::transpose", "aten::permute", "aten::narrow", "aten::select", "aten::slice", "aten::as_strided",
      "aten::expand", "aten::expand_as", "aten::unsqueeze", "aten::squeeze", "aten::flatten", "aten::unflatten",
      "aten::alias", "aten::detach", "aten::detach_", "aten::unbind", "aten::split", "aten::chunk",
      "aten::empty_like", "aten::zeros_like", "aten::ones_like", "aten::full_like", "aten::rand_like",
      "aten::randn_like", "aten::randint_like", "aten::size", "aten::stride", "aten::numel", "aten::is_same_size",
      "aten::resolve_conj", "aten::resolve_neg", "aten::_has_compatible_shallow_copy_type", "aten::set_data",
      "aten::data", "aten::requires_grad_", "aten::retain_grad", "aten::_version", "aten::output_nr",
      "aten::is_leaf", "aten::_fw_primal", "aten::_make_dual", "aten::lift", "aten::lift_fresh"};
  return name != nullptr && kMetadataOnly.count(std::string_view(name, std::strlen(name))) != 0;
}

struct Touch {
  ParameterTouchWatch::Entry* entry;
  std::size_t unit;
  bool freed;
};

void Note(const at::Tensor& t, const Snapshot& snap, std::vector<Touch>* touched) {
  if (!t.defined() || !t.has_storage()) return;
  const c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  const auto it = snap.find(storage);
  if (it == snap.end()) return;
  for (const Touch& seen : *touched) {
    if (seen.entry == it->second.entry.get() && seen.unit == it->second.unit) return;
  }
  touched->push_back({it->second.entry.get(), it->second.unit, storage->data() == nullptr});
}

std::unique_ptr<at::ObserverContext> OnOperatorStart(const at::RecordFunction& fn) {
  if (t_in_callback) return nullptr;
  const std::shared_ptr<const Snapshot> snap = std::atomic_load(&TheRegistry().snapshot);
  if (snap->empty()) return nullptr;
  std::vector<Touch> touched;
  for (const c10::IValue& input : fn.inputs()) {
    if (input.isTensor()) {
      Note(input.toTensor(), *snap, &touched);
    } else if (input.isTensorList()) {
      for (const at::Tensor& t : input.toTensorList().vec()) Note(t, *snap, &touched);
    }
  }
  if (touched.empty() || ReadsOnlyMetadata(fn.name())) return nullptr;
  t_in_callback = true;
  struct Reset {
    ~Reset() { t_in_callback = false; }
  } reset;
  // One call per watch, with every unit of that watch the operation reads (all must hold bytes at once).
  while (!touched.empty()) {
    ParameterTouchWatch::Entry* entry = touched.front().entry;
    std::vector<std::size_t> units;
    bool any_freed = false;
    for (const Touch& t : touched) {
      if (t.entry != entry) continue;
      units.push_back(t.unit);
      any_freed = any_freed || t.freed;
    }
    touched.erase(std::remove_if(touched.begin(), touched.end(), [&](const Touch& t) { return t.entry == entry; }),
                  touched.end());
    entry->callback(units, any_freed);
  }
  return nullptr;
}

}  // namespace

ParameterTouchWatch::ParameterTouchWatch(std::vector<std::pair<const c10::StorageImpl*, std::size_t>> storages,
                                         OnTouch callback)
    : entry_(std::make_shared<Entry>(Entry{std::move(callback)})) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto next = std::make_shared<Snapshot>(*r.snapshot);
  for (const auto& [storage, unit] : storages) {
    LAKERUN_CHECK(next->emplace(storage, Owner{entry_, unit}).second,
                  "ParameterTouchWatch: a storage is watched twice (two sharded wrappers over one module?)");
  }
  std::atomic_store(&r.snapshot, std::shared_ptr<const Snapshot>(std::move(next)));
  if (r.watches++ == 0) {
    r.handle = at::addGlobalCallback(at::RecordFunctionCallback(&OnOperatorStart)
                                         .needsInputs(true)
                                         .scopes({at::RecordScope::FUNCTION}));
  }
}

ParameterTouchWatch::~ParameterTouchWatch() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto next = std::make_shared<Snapshot>();
  for (const auto& [storage, owner] : *r.snapshot) {
    if (owner.entry != entry_) next->emplace(storage, owner);
  }
  std::atomic_store(&r.snapshot, std::shared_ptr<const Snapshot>(std::move(next)));
  if (--r.watches == 0) {
    at::removeCallback(r.handle);
    r.handle = 0;
  }
}

}  // namespace lakerun::dist
