// Gathering sharded parameters on use: a process-wide watch on the storages of ZeRO level 3's units.
//
// Libtorch's C++ modules have no forward hooks, so level 3 cannot learn when a unit's forward starts. Every tensor
// operation does pass through the dispatcher, which calls RecordFunction observers with the operation's inputs
// before it runs. A ParameterTouchWatch registers unit storages; while any watch lives, one global observer looks at
// each operation's tensor inputs and, when some lie in registered storages, calls their watch's callback once with
// every such unit, before the operation reads them, saying whether any of them holds no data (a freed unit: its
// storage keeps its size, so views of it can still be made, but its data pointer is null). The
// same holds in backward: tensors autograd saved share the unit storage, so a backward node that reads weights
// triggers the callback too.
//
//   ParameterTouchWatch watch({{storage_of_unit0, 0}, {storage_of_unit1, 1}},
//                             [&](const std::vector<std::size_t>& units, bool any_freed) { ... gather ... });
//
// Contract:
// - The callback runs on the thread that runs the operation, under no lock of this watch's; when it returns, every
//   unit it was given must hold bytes, or it throws (the operation then fails with that error).
// - Operations the callback itself runs are not observed (a thread-local guard).
// - Only reads through operations are seen: code that takes a parameter's data_ptr() directly reads a freed unit as
//   empty (documented for ShardedDataParallel's level 3).
// - Operations that read only shapes and strides (views such as view, t, narrow, detach; empty_like, zeros_like and
//   the other *_like factories) are not reads: the view they return shares the unit's storage, and the operation
//   that later reads it triggers the callback. So code on one rank that only takes a parameter's shape (a
//   checkpoint writer's view_as) does not start a gather its peers would not join.
// - The callback cannot fail the operation (libtorch logs and drops exceptions thrown by observers): it must leave
//   bytes in place whatever happens and report a failure some other way.
// - While a watch lives, every operation costs one hash lookup per tensor input; nothing once none does.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace c10 {
struct StorageImpl;
}

namespace lakerun::dist {

class ParameterTouchWatch {
 public:
  using OnTouch = std::function<void(const std::vector<std::size_t>& units, bool any_freed)>;

  /// `storages`: each unit's storage and its index (passed back to the callback).
  ParameterTouchWatch(std::vector<std::pair<const c10::StorageImpl*, std::size_t>> storages, OnTouch callback);
  ~ParameterTouchWatch();
  ParameterTouchWatch(const ParameterTouchWatch&) = delete;
  ParameterTouchWatch& operator=(const ParameterTouchWatch&) = delete;

  struct Entry;

 private:
  std::shared_ptr<Entry> entry_;
};

}  // namespace lakerun::dist
