// lakerun._Loader: data::Loader as a Python iterable of {column: torch.Tensor}. The batch's tensors cross into
// Python as they are (torch's caster wraps the same at::Tensor: no copy); the GIL is released while the C++ loader
// opens the table, plans an epoch or produces a batch, so other Python threads run meanwhile.
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>  // at::Tensor <-> torch.Tensor without a copy

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "lakerun/base/error.h"
#include "lakerun/data/loader.h"
#include "python/bindings.h"
#include "python/table.h"

namespace lakerun::python {
namespace {

// The Python arguments of lakerun.Loader beyond the table (python/lakerun/__init__.py documents each).
struct LoaderArgs {
  ColumnChoices columns;  // columns, filter, nulls, lists, forms
  int64_t batch_size = 32;
  bool shuffle = true;
  uint64_t seed = 0;
  std::optional<int64_t> rank, world_size;
  bool drop_last = false;
  size_t num_threads = 2;
  std::optional<uint64_t> shuffle_block_size, shuffle_window_blocks;
  std::optional<int64_t> version, timestamp_ms;
  std::vector<std::string> raw_bytes;
  std::map<std::string, py::dict> images;  // per column: settings (column_options.cc)
};

data::LoaderOptions MakeLoaderOptions(const LoaderArgs& a) {
  data::LoaderOptions o;
  o.batch_size = a.batch_size;
  o.shuffle.enabled = a.shuffle;
  if (a.shuffle_block_size) o.shuffle.block_size = *a.shuffle_block_size;
  if (a.shuffle_window_blocks) o.shuffle.window_blocks = *a.shuffle_window_blocks;
  o.seed = a.seed;
  o.rank = a.rank;
  o.world_size = a.world_size;
  o.drop_last = a.drop_last;
  o.num_threads = a.num_threads;
  o.raw_bytes = a.raw_bytes;
  for (const auto& [column, settings] : a.images) o.images[column] = ImageOptionsFrom(column, settings);
  o.nulls = a.columns.nulls;
  o.lists = a.columns.lists;
  return o;
}

// Owns the C++ loader. Python threads may share one: calls are serialised by `mutex_`, which is taken only after
// the GIL is released (a thread waiting for it never holds the GIL the holder needs to return).
class Loader {
 public:
  Loader(const std::string& table, const LoaderArgs& a) {
    data::TableOptions t = a.columns.projection.ToTableOptions(a.version, a.timestamp_ms);
    data::LoaderOptions o = MakeLoaderOptions(a);
    py::gil_scoped_release release;
    t.rank = a.rank.value_or(-1);
    loader_ = std::make_unique<data::Loader>(data::OpenTable(table, t), std::move(o));
  }

  // Over a table opened once: its source for this projection (see Table::SourceFor), at its version.
  Loader(Table& table, const LoaderArgs& a) {
    data::LoaderOptions o = MakeLoaderOptions(a);
    py::gil_scoped_release release;
    loader_ = std::make_unique<data::Loader>(table.SourceFor(a.columns.projection), std::move(o));
  }

  // Iterating continues the current epoch from its position (a fresh or restored loader: from the state's
  // position); once an iteration ran to the end of the epoch, the next one replays the same epoch.
  Loader& Iter() {
    if (exhausted_) Locked([&] { loader_->SetEpoch(loader_->epoch()); });
    exhausted_ = false;
    return *this;
  }

  py::dict Next() {
    std::optional<data::Batch> batch;
    Locked([&] { batch = loader_->Next(); });
    if (!batch) {
      exhausted_ = true;
      throw py::stop_iteration();
    }
    py::dict out;
    last_columns_.resize(batch->tensors.size());
    size_t i = 0;
    for (const auto& [name, tensor] : batch->tensors) {
      LastColumn& column = last_columns_[i++];
      if (column.name != name || !column.key) {  // the keys are made once: every batch has the same columns
        column.name = name;
        column.key = py::str(name);
      }
      column.data_ptr = reinterpret_cast<uintptr_t>(tensor.data_ptr());
      out[column.key] = tensor;  // the same tensor (storage, sizes, strides) as a torch.Tensor
    }
    return out;
  }

  void SetEpoch(uint64_t epoch) {
    Locked([&] { loader_->SetEpoch(epoch); });
    exhausted_ = false;
  }

  std::map<std::string, int64_t> StateDict() const { return loader_->state_dict().ToMap(); }

  void LoadStateDict(const std::map<std::string, int64_t>& values) {
    data::LoaderState state = data::LoaderState::FromMap(values);
    Locked([&] { loader_->load_state_dict(state); });
    exhausted_ = false;
  }

  const data::Loader& loader() const { return *loader_; }
  std::map<std::string, uintptr_t> last_data_ptrs() const {
    std::map<std::string, uintptr_t> ptrs;
    for (const LastColumn& c : last_columns_) ptrs[c.name] = c.data_ptr;
    return ptrs;
  }

 private:
  template <typename F>
  void Locked(F&& f) {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    f();
  }

  std::unique_ptr<data::Loader> loader_;
  std::mutex mutex_;
  bool exhausted_ = false;                           // guarded by the GIL
  // The columns of the batch Next() returned last: the name, its Python key, and the C++ tensor's data pointer.
  struct LastColumn {
    std::string name;
    py::str key{py::handle()};
    uintptr_t data_ptr = 0;
  };
  std::vector<LastColumn> last_columns_;  // guarded by the GIL
};

}  // namespace

void RegisterLoader(py::module_& m) {
  py::class_<Loader>(m, "_Loader", "The C++ loader under lakerun.Loader (which documents the arguments).")
      .def(py::init([](const py::object& table, std::optional<std::vector<std::string>> columns, int64_t batch_size,
                       bool shuffle, uint64_t seed, std::optional<std::string> filter, std::optional<int64_t> rank,
                       std::optional<int64_t> world_size, bool drop_last, size_t num_threads,
                       std::optional<uint64_t> shuffle_block_size, std::optional<uint64_t> shuffle_window_blocks,
                       std::optional<int64_t> version, std::optional<int64_t> timestamp,
                       std::optional<std::vector<std::string>> raw_bytes,
                       std::optional<std::map<std::string, py::dict>> images,
                       std::optional<std::map<std::string, py::object>> nulls,
                       std::optional<std::map<std::string, py::dict>> lists,
                       std::optional<std::map<std::string, py::dict>> forms) {
             LoaderArgs a;
             a.columns = ColumnChoicesFrom(std::move(columns), std::move(filter), nulls, lists, forms);
             a.batch_size = batch_size;
             a.shuffle = shuffle;
             a.seed = seed;
             a.rank = rank;
             a.world_size = world_size;
             a.drop_last = drop_last;
             a.num_threads = num_threads;
             a.shuffle_block_size = shuffle_block_size;
             a.shuffle_window_blocks = shuffle_window_blocks;
             a.version = version;
             a.timestamp_ms = timestamp;
             if (raw_bytes) a.raw_bytes = std::move(*raw_bytes);
             if (images) a.images = std::move(*images);
             if (py::isinstance<Table>(table)) {
               auto& opened = table.cast<Table&>();
               if ((a.version && a.version != opened.version()) || a.timestamp_ms) {
                 throw InvalidArgument("lakerun.Loader: a lakerun.Table reads the version it was opened at (" +
                                       (opened.version() ? std::to_string(*opened.version()) : "none") +
                                       "); pass its path to read another version or timestamp");
               }
               return std::make_unique<Loader>(opened, a);
             }
             return std::make_unique<Loader>(py::str(table).cast<std::string>(), a);
           }),
           py::arg("table"), py::arg("columns") = py::none(), py::arg("batch_size") = 32, py::arg("shuffle") = true,
           py::arg("seed") = 0, py::arg("filter") = py::none(), py::arg("rank") = py::none(),
           py::arg("world_size") = py::none(), py::arg("drop_last") = false, py::arg("num_threads") = 2,
           py::arg("shuffle_block_size") = py::none(), py::arg("shuffle_window_blocks") = py::none(),
           py::arg("version") = py::none(), py::arg("timestamp") = py::none(), py::arg("raw_bytes") = py::none(),
           py::arg("images") = py::none(), py::arg("nulls") = py::none(), py::arg("lists") = py::none(),
           py::arg("forms") = py::none())
      .def("__iter__", &Loader::Iter, py::return_value_policy::reference_internal,
           "Continues the current epoch (replays it once an iteration reached its end).")
      .def("__next__", &Loader::Next, "The next batch: {column: torch.Tensor}; StopIteration at the epoch's end.")
      .def("__len__", [](const Loader& l) { return l.loader().batches_per_epoch(); },
           "Batches this rank yields per epoch (the same on every rank).")
      .def("set_epoch", &Loader::SetEpoch, py::arg("epoch"), "Starts `epoch` from its beginning.")
      .def("state_dict", &Loader::StateDict, "The position after the last batch returned: {name: int}.")
      .def("load_state_dict", &Loader::LoadStateDict, py::arg("state"),
           "Continues from a state_dict() (taken under any world size). Raises lakerun.InvalidArgument when it "
           "belongs to another table or seed.")
      .def_property_readonly("epoch", [](const Loader& l) { return l.loader().epoch(); }, "The current epoch.")
      .def_property_readonly("rank", [](const Loader& l) { return l.loader().rank(); }, "This loader's rank.")
      .def_property_readonly("world_size", [](const Loader& l) { return l.loader().world_size(); },
                             "The number of ranks the table is sharded over.")
      .def_property_readonly("num_rows", [](const Loader& l) { return l.loader().num_rows(); },
                             "Rows of the table (after the filter).")
      .def_property_readonly("samples_per_epoch", [](const Loader& l) { return l.loader().samples_per_epoch(); },
                             "Samples this rank yields per epoch (padding included).")
      .def("_last_batch_data_ptrs", &Loader::last_data_ptrs,
           "Diagnostics: {column: address} of the C++ tensors of the last batch, before they crossed into Python "
           "(a test compares them with tensor.data_ptr() to check that no copy was made).");
}

}  // namespace lakerun::python
