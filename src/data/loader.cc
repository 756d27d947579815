#include "lakerun/data/loader.h"

#include <ATen/Context.h>
#include <ATen/Tensor.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <string_view>

#include "batch_handoff.h"
#include "collate.h"
#include "error_context.h"
#include "lakerun/base/error.h"
#include "lakerun/base/logging.h"
#include "lakerun/base/thread_pool.h"
#include "unit_cache.h"
#include "unit_lookahead.h"

namespace lakerun::data {
namespace {

// "rank r of W: ", the prefix of the loader's messages.
std::string RankPrefixOf(const LoaderOptions& options) {
  return StrCat("rank ", options.rank.value_or(0), " of ", options.world_size.value_or(1), ": ");
}

void CheckRank(int64_t rank, int64_t world_size) {
  LAKERUN_CHECK_AS(ConfigError, world_size > 0, "LoaderOptions::world_size must be positive, got ", world_size);
  LAKERUN_CHECK_AS(ConfigError, rank >= 0 && rank < world_size, "LoaderOptions::rank ", rank,
                   " is out of range for world_size ", world_size);
}

// Regions of the table one shuffle window reads at once: its blocks, plus one that straddles a unit boundary.
uint64_t WindowRegions(const LoaderOptions& options) {
  return options.shuffle.enabled ? options.shuffle.window_blocks + 1 : 2;
}

// A TableOptions::unit_bytes whose slices let a shuffle window's units fit in cache_bytes with room to spare.
uint64_t SuggestedUnitBytes(const LoaderOptions& options) {
  return std::max<uint64_t>(uint64_t{64} << 10, options.cache_bytes / (4 * WindowRegions(options)));
}

// The units one shuffle window reads at most, and their decoded bytes (0 when the source does not know its unit
// sizes).
struct WindowWorkingSet {
  uint64_t units = 0;
  uint64_t largest_unit = 0;
  uint64_t bytes() const { return units * largest_unit; }

  WindowWorkingSet(const RowSource& source, const LoaderOptions& options)
      : units(std::min<uint64_t>(source.num_units(), WindowRegions(options))) {
    for (size_t u = 0; u < source.num_units(); ++u) largest_unit = std::max(largest_unit, source.UnitBytesHint(u));
  }
};

// The source, or the same rows in slices of its units when the cache cannot hold the units one shuffle window reads
// and the source can cut them (RowSource::WithUnitBytes): otherwise every batch would decode whole units again.
std::shared_ptr<const RowSource> FitUnitsToCache(std::shared_ptr<const RowSource> source,
                                                 const LoaderOptions& options, const std::string& rank_prefix) {
  if (!options.fit_units_to_cache) return source;
  const uint64_t working_set = WindowWorkingSet(*source, options).bytes();
  if (working_set <= options.cache_bytes) return source;
  const uint64_t unit_bytes = SuggestedUnitBytes(options);
  std::shared_ptr<const RowSource> sliced = source->WithUnitBytes(unit_bytes);
  if (sliced == nullptr || sliced->num_units() <= source->num_units()) return source;
  LAKERUN_LOG(Info) << rank_prefix << "cache_bytes " << options.cache_bytes << " cannot hold the " << working_set
                    << " bytes of units one shuffle window reads: reading the " << source->num_units()
                    << " units in " << sliced->num_units() << " slices of about " << unit_bytes
                    << " bytes instead (TableOptions::unit_bytes)";
  return sliced;
}

// The ".offsets" of raw-bytes column `column` of `batch`, which must be a list of binary values (with ".lengths")
// when `list`, else not.
const at::Tensor& RawBytesOffsets(const Batch& batch, const std::string& column, bool list) {
  const auto offsets = batch.tensors.find(column + kOffsetsSuffix);
  LAKERUN_CHECK(offsets != batch.tensors.end(), "batch column '", column, "' is not a raw-bytes column (no '",
                column, kOffsetsSuffix, "'; list it in LoaderOptions::raw_bytes)");
  const bool is_list = batch.tensors.count(column + kLengthsSuffix) > 0;
  LAKERUN_CHECK(is_list == list, "batch column '", column, "' is ",
                is_list ? "a list of binary values: read it with Batch::list_bytes"
                        : "not a list of binary values: read it with Batch::bytes");
  return offsets->second;
}

std::string_view Bytes(const at::Tensor& data, const int64_t* offsets, int64_t e) {
  return std::string_view(static_cast<const char*>(data.data_ptr()) + offsets[e],
                          static_cast<size_t>(offsets[e + 1] - offsets[e]));
}

}  // namespace

std::string_view Batch::bytes(const std::string& column, int64_t i) const {
  const at::Tensor& offsets = RawBytesOffsets(*this, column, false);
  LAKERUN_CHECK(i >= 0 && i + 1 < offsets.numel(), "sample ", i, " of column '", column,
                "' is out of range for a batch of ", offsets.numel() - 1);
  return Bytes(at(column), offsets.data_ptr<int64_t>(), i);
}

std::vector<std::string> Batch::strings(const std::string& column) const {
  const int64_t n = RawBytesOffsets(*this, column, false).numel() - 1;
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.emplace_back(bytes(column, i));
  return out;
}

std::vector<std::string_view> Batch::list_bytes(const std::string& column, int64_t i) const {
  const int64_t* offsets = RawBytesOffsets(*this, column, true).data_ptr<int64_t>();
  const at::Tensor& lengths = at(column + kLengthsSuffix);
  LAKERUN_CHECK(i >= 0 && i < lengths.numel(), "sample ", i, " of column '", column,
                "' is out of range for a batch of ", lengths.numel());
  const int64_t* length = lengths.data_ptr<int64_t>();
  int64_t first = 0;  // the row's first element: the elements of the rows before it
  for (int64_t r = 0; r < i; ++r) first += length[r];
  const at::Tensor& data = at(column);
  std::vector<std::string_view> out;
  out.reserve(static_cast<size_t>(length[i]));
  for (int64_t e = first; e < first + length[i]; ++e) out.push_back(Bytes(data, offsets, e));
  return out;
}

std::vector<std::vector<std::string_view>> Batch::list_bytes(const std::string& column) const {
  const int64_t* offsets = RawBytesOffsets(*this, column, true).data_ptr<int64_t>();
  const at::Tensor& lengths = at(column + kLengthsSuffix);
  const int64_t* length = lengths.data_ptr<int64_t>();
  const at::Tensor& data = at(column);
  std::vector<std::vector<std::string_view>> out(static_cast<size_t>(lengths.numel()));
  int64_t e = 0;
  for (int64_t i = 0; i < lengths.numel(); ++i) {
    out[i].reserve(static_cast<size_t>(length[i]));
    for (const int64_t end = e + length[i]; e < end; ++e) out[i].push_back(Bytes(data, offsets, e));
  }
  return out;
}

const at::Tensor& Batch::at(const std::string& column) const {
  const auto it = tensors.find(column);
  if (it == tensors.end()) {
    std::string names;
    for (const auto& [name, t] : tensors) names += (names.empty() ? "" : ", ") + name;
    LAKERUN_THROW(InvalidArgument, "batch has no column '", column, "' (columns: ", names, ")");
  }
  return it->second;
}

struct Loader::Shared {
  Shared(std::shared_ptr<const RowSource> s, const LoaderOptions& o)
      : source(std::move(s)), options(o), cache(*source, o.cache_bytes, o.timeout),
        memory(std::max(o.prefetch_bytes, kMinRecycledBytes)) {}
  // Returned batch tensors kept for the next batches: enough for a few batches when prefetch_bytes is small.
  static constexpr size_t kMinRecycledBytes = size_t{4} << 20;
  std::shared_ptr<const RowSource> source;
  LoaderOptions options;
  UnitCache cache;
  BatchMemory memory;
  BatchHandoff handoff;
  CollateSpec spec;
  std::atomic<uint64_t> generation{0};  // tasks of an older generation (a previous epoch) do no work
};

class Loader::Prefetcher {
 public:
  Prefetcher(std::shared_ptr<Shared> shared, size_t threads)
      : shared(std::move(shared)), pool(threads, "lakerun-data") {}
  // Queued tasks of this prefetcher return at once; the pool then joins (also when a Loader is assigned over).
  ~Prefetcher() { shared->generation.fetch_add(1); }
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;
  struct Pending {
    uint64_t index;
    std::shared_ptr<PendingBatch> batch;
  };
  std::shared_ptr<Shared> shared;
  std::deque<Pending> pending;  // at most Loader::window_ entries
  ThreadPool pool;              // declared last: joined before `pending` goes away
};

Loader::Loader(std::shared_ptr<const RowSource> source, LoaderOptions options) : options_(std::move(options)) {
  LAKERUN_CHECK(source != nullptr, "Loader needs a source");
  LAKERUN_CHECK_AS(ConfigError, options_.rank.has_value() == options_.world_size.has_value(),
                   "LoaderOptions: set both rank and world_size, or neither (for a Trainer to set them); got ",
                   options_.rank ? "rank" : "world_size", " alone");
  rank_given_ = options_.rank.has_value();
  if (!rank_given_) {
    options_.rank = 0;
    options_.world_size = 1;
  }
  CheckRank(rank(), world_size());
  LAKERUN_CHECK_AS(ConfigError, options_.batch_size > 0, RankPrefix(),
                   "LoaderOptions::batch_size must be positive, got ", options_.batch_size);
  LAKERUN_CHECK_AS(ConfigError, options_.prefetch_batches > 0, RankPrefix(),
                   "LoaderOptions::prefetch_batches must be at least 1");
  window_ = options_.prefetch_batches;
  LAKERUN_CHECK_AS(ConfigError, options_.timeout.count() > 0, RankPrefix(), "LoaderOptions::timeout must be positive");
  if (options_.device.is_cuda()) {
    LAKERUN_CHECK_AS(ConfigError, at::hasCUDA(), RankPrefix(), "device ", options_.device.str(),
                     " requested but this libtorch has no CUDA device");
  } else {
    LAKERUN_CHECK_AS(ConfigError, options_.device.is_cpu(), RankPrefix(), "unsupported device ",
                     options_.device.str());
  }
  source = FitUnitsToCache(std::move(source), options_, RankPrefix());
  num_rows_ = source->num_rows();
  shared_ = std::make_shared<Shared>(source, options_);
  CollateSpec& spec = shared_->spec;
  spec.source = source.get();
  spec.seed = options_.seed;
  spec.pinned = options_.device.is_cuda();
  spec.memory = &shared_->memory;
  std::vector<uint64_t> unit_starts;
  for (size_t u = 0; u <= source->num_units(); ++u) unit_starts.push_back(source->unit_start(u));
  LAKERUN_CHECK_AS(CorruptDataError, unit_starts.back() == num_rows_, RankPrefix(), "source units end at row ",
                   unit_starts.back(), " but the source has ", num_rows_, " rows");
  LAKERUN_CHECK_AS(CorruptDataError, unit_starts.front() == 0 && std::is_sorted(unit_starts.begin(), unit_starts.end()),
                   RankPrefix(), "source units do not cover rows 0..", num_rows_, " in order");
  spec.units = UnitIndex(std::move(unit_starts));
  const LoaderOptions& held = shared_->options;  // the plans point into these options, which live as long as spec
  for (const ColumnInfo& column : source->columns()) {
    ColumnPlan plan;
    const auto image = held.images.find(column.name);
    const bool raw = std::find(held.raw_bytes.begin(), held.raw_bytes.end(), column.name) != held.raw_bytes.end();
    const auto list = held.lists.find(column.name);
    const auto nulls = held.nulls.find(column.name);
    if (nulls != held.nulls.end()) plan.nulls = &nulls->second;
    if (image != held.images.end()) {
      LAKERUN_CHECK(column.type == ElementType::kBinary, RankPrefix(), "column '", column.name, "' is ",
                    ToString(column.type), ", not binary: it cannot be decoded as an image");
      LAKERUN_CHECK(!column.is_list, RankPrefix(), "column '", column.name, "' is a list: it cannot be decoded as "
                    "an image (hand it over as raw bytes)");
      LAKERUN_CHECK(!raw, RankPrefix(), "column '", column.name, "' is both an image and raw bytes");
      const ImageOptions& io = image->second;
      LAKERUN_CHECK(io.channels == 1 || io.channels == 3, RankPrefix(), "column '", column.name,
                    "': image channels must be 1 or 3, got ", io.channels);
      LAKERUN_CHECK((io.crop_height > 0) == (io.crop_width > 0), RankPrefix(), "column '", column.name,
                    "': set both crop_height and crop_width, or neither");
      plan.image = &io;
    } else if (raw) {
      LAKERUN_CHECK(column.type == ElementType::kBinary, RankPrefix(), "column '", column.name, "' is ",
                    ToString(column.type), ", not binary: it cannot be handed over as raw bytes");
      plan.raw_bytes = true;
    } else if (column.is_list) {
      LAKERUN_CHECK_AS(NotImplemented, column.type != ElementType::kBinary, RankPrefix(), "column '", column.name,
                       "' holds lists of binary (string) values: hand it over as raw bytes (LoaderOptions::raw_bytes: "
                       "\"", column.name, "\" bytes, \"", column.name, kOffsetsSuffix, "\" per element, \"",
                       column.name, kLengthsSuffix, "\" per row) or leave it out of the projection");
    } else {
      LAKERUN_CHECK_AS(NotImplemented, column.type != ElementType::kBinary, RankPrefix(), "column '", column.name,
                       "' holds variable-length binary values: decode it as an image (LoaderOptions::images), hand "
                       "it over as raw bytes (LoaderOptions::raw_bytes) or leave it out of the projection");
    }
    if (list != held.lists.end()) {
      LAKERUN_CHECK(column.type != ElementType::kBinary, RankPrefix(), "list policy for column '", column.name,
                    "', a list of binary values: those come as raw bytes with \"", column.name, kLengthsSuffix,
                    "\" (LoaderOptions::raw_bytes), not padded");
      LAKERUN_CHECK(column.is_list, RankPrefix(), "list policy for column '", column.name, "', which is ",
                    ToString(column.type), column.shape.empty() ? "" : " of fixed shape", ", not a list");
      LAKERUN_CHECK(list->second.pad_to >= 0, RankPrefix(), "column '", column.name,
                    "': ListPolicy::pad_to must be >= 0, got ", list->second.pad_to);
      plan.list = &list->second;
    }
    spec.plans.push_back(plan);
  }
  auto check_named = [&](const std::string& name, const char* option) {
    bool found = false;
    for (const ColumnInfo& column : source->columns()) found = found || column.name == name;
    LAKERUN_CHECK(found, RankPrefix(), option, " name column '", name, "', which the source does not have");
  };
  for (const auto& [name, io] : options_.images) check_named(name, "image options");
  for (const std::string& name : options_.raw_bytes) check_named(name, "raw_bytes");
  for (const auto& [name, policy] : options_.nulls) check_named(name, "null policies");
  for (const auto& [name, policy] : options_.lists) check_named(name, "list policies");
  // The shuffle reads window_blocks regions of the table at once; if the cache cannot hold the row groups they fall
  // in, row groups are decoded again and again. Warn rather than fail: it is slow, not wrong.
  const WindowWorkingSet working_set(*source, options_);
  if (working_set.bytes() > options_.cache_bytes) {
    LAKERUN_LOG(Warning) << RankPrefix() << "cache_bytes " << options_.cache_bytes
                         << " is below the shuffle's working set of about " << working_set.bytes() << " bytes ("
                         << working_set.units << " row groups of up to " << working_set.largest_unit
                         << " decoded bytes): they will be decoded repeatedly. Raise cache_bytes, "
                         << "lower shuffle.window_blocks, or write smaller row groups (a source with list columns "
                         << "cannot be read in slices of row groups).";
  }
  // Decode ahead only when every unit's size is known and the whole table fits in the cache with room to spare:
  // then no unit decoded early can push out one still needed. Byte columns may be cached as views (16 bytes a row
  // on top of the metadata's sizes), and offsets and masks add a little more.
  uint64_t view_columns = 0;
  for (const ColumnInfo& column : source->columns()) {
    view_columns += column.type == ElementType::kBinary || column.type == ElementType::kUInt8;
  }
  uint64_t table_bytes = 0, largest_rows = 0;
  bool sizes_known = true;
  for (size_t u = 0; u < source->num_units(); ++u) {
    const uint64_t hint = source->UnitBytesHint(u), rows = spec.units.starts()[u + 1] - spec.units.starts()[u];
    sizes_known = sizes_known && hint > 0;
    table_bytes += hint + rows * view_columns * sizeof(std::string_view);
    largest_rows = std::max(largest_rows, rows);
  }
  decode_ahead_ = options_.num_threads > 1 && sizes_known && table_bytes + table_bytes / 4 <= options_.cache_bytes;
  // A shuffle window's samples, plus a unit per thread beyond: enough to keep every thread decoding.
  lookahead_samples_ = (options_.shuffle.enabled ? options_.shuffle.block_size * options_.shuffle.window_blocks : 0) +
                       options_.num_threads * largest_rows;
  prefetcher_ = std::make_unique<Prefetcher>(shared_, options_.num_threads);
  StartPlan(0, ResumePoint{static_cast<uint64_t>(world_size()), 0}, 0);
}

Loader::~Loader() = default;  // the Prefetcher stops its tasks and joins its pool first (declared last)
Loader::Loader(Loader&&) noexcept = default;
Loader& Loader::operator=(Loader&&) noexcept = default;

bool Loader::AdoptRank(int64_t rank, int64_t world_size) {
  if (rank_given_) return false;
  CheckRank(rank, world_size);
  if (rank == this->rank() && world_size == this->world_size()) return true;
  // The decoding tasks read the shared options: stop them (and join the pool) before changing them.
  prefetcher_.reset();
  options_.rank = rank;
  options_.world_size = world_size;
  shared_->options.rank = rank;
  shared_->options.world_size = world_size;
  prefetcher_ = std::make_unique<Prefetcher>(shared_, options_.num_threads);
  StartPlan(state_.epoch, ResumePoint{static_cast<uint64_t>(world_size), 0}, 0);
  return true;
}

std::string Loader::RankPrefix() const { return RankPrefixOf(options_); }

void Loader::StartPlan(uint64_t epoch, ResumePoint from, uint64_t skip) {
  shared_->generation.fetch_add(1);
  prefetcher_->pending.clear();
  unit_prefetched_.clear();
  failure_ = nullptr;
  const auto world = static_cast<uint64_t>(world_size());
  plan_ = std::make_unique<EpochPlan>(num_rows_, world, static_cast<uint64_t>(rank()), options_.remainder,
                                      options_.seed, epoch, options_.shuffle, from);
  LAKERUN_CHECK(skip <= plan_->size(), RankPrefix(), "resume skips ", skip, " samples of a plan of ", plan_->size());
  state_ = LoaderState{epoch, options_.seed, num_rows_, world, static_cast<uint64_t>(rank()), skip,
                       plan_->from().world_size, plan_->from().samples_yielded};
  const auto batch = static_cast<uint64_t>(options_.batch_size);
  next_submit_ = skip;
  // Batch indices continue the epoch: a resumed plan starts after the samples each rank had already yielded.
  next_batch_ = (plan_->from().samples_yielded + skip + batch - 1) / batch;
  sample_end_ = options_.drop_last ? skip + (plan_->size() - skip) / batch * batch : plan_->size();
  lookahead_.reset();
  if (decode_ahead_) lookahead_ = std::make_unique<UnitLookahead>(*plan_, shared_->spec.units, skip, sample_end_);
}

void Loader::SetEpoch(uint64_t epoch) {
  StartPlan(epoch, ResumePoint{static_cast<uint64_t>(world_size()), 0}, 0);
}

uint64_t Loader::samples_per_epoch() const { return sample_end_; }

const RowSource& Loader::source() const { return *shared_->source; }

uint64_t Loader::batches_per_epoch() const {
  const auto batch = static_cast<uint64_t>(options_.batch_size);
  return (sample_end_ + batch - 1) / batch;
}

void Loader::TopUp() {
  const auto batch = static_cast<uint64_t>(options_.batch_size);
  while (prefetcher_->pending.size() < window_ && next_submit_ < sample_end_) {
    const uint64_t end = std::min(sample_end_, next_submit_ + batch);
    std::vector<uint64_t> ids;
    plan_->AppendSamples(next_submit_, end, &ids);
    const uint64_t index = next_batch_++;
    next_submit_ = end;
    const uint64_t generation = shared_->generation.load();
    // A decode of each unit into the cache as its own task, so several threads decode different row groups in
    // parallel instead of one batch task decoding them in turn while the others wait for it. The source hears of
    // them all at once first, so that remote bytes start arriving (several row groups of a file in one request)
    // while earlier units decode.
    std::vector<size_t> to_decode;
    const auto decode_all = [&] {
      if (to_decode.empty()) return;
      shared_->source->Prefetch(to_decode);
      for (size_t unit : to_decode) {
        prefetcher_->pool.Post([shared = shared_, unit, generation] {
          if (shared->generation.load() != generation) return;
          try {
            shared->cache.Get(unit);
          } catch (...) {
            // The batch that needs this unit reads it again and reports the error with its context.
          }
        });
      }
    };
    if (lookahead_ != nullptr) {
      // Every unit first needed within the lookahead, in order of need, queued ahead of the batches needing it.
      for (size_t unit : lookahead_->Advance(end + lookahead_samples_)) {
        if (!shared_->cache.Contains(unit)) to_decode.push_back(unit);
      }
      decode_all();
    } else if (prefetcher_->pool.size() > 1) {
      // Only the units of this batch, at most once per prefetch window.
      std::vector<size_t> units;
      for (uint64_t id : ids) units.push_back(shared_->spec.units.Find(id));
      std::sort(units.begin(), units.end());
      units.erase(std::unique(units.begin(), units.end()), units.end());
      for (size_t unit : units) {
        const auto it = unit_prefetched_.find(unit);
        const bool recent = it != unit_prefetched_.end() && it->second + options_.prefetch_batches >= index;
        if (recent || shared_->cache.Contains(unit)) continue;
        unit_prefetched_[unit] = index;
        to_decode.push_back(unit);
      }
      decode_all();
    }
    const uint64_t epoch = state_.epoch;
    auto slot = std::make_shared<PendingBatch>();
    auto task = [shared = shared_, slot, ids = std::move(ids), generation, epoch, index] {
      // A batch discarded by SetEpoch or the destructor is published empty: nobody reads it.
      if (shared->generation.load() == generation) {
        try {
          Batch out = Collate(shared->spec, shared->cache, ids, epoch);
          out.epoch = epoch;
          out.index = index;
          for (const BatchTransform& transform : shared->options.transforms) transform(out);
          slot->batch = std::move(out);
        } catch (...) {
          slot->error =
              CurrentWithContext(StrCat(RankPrefixOf(shared->options), "epoch ", epoch, " batch ", index, ": "));
        }
      }
      shared->handoff.Publish(*slot);
    };
    prefetcher_->pool.Post(std::move(task));
    prefetcher_->pending.push_back({index, std::move(slot)});
  }
}

std::optional<Batch> Loader::Next() {
  if (failure_) std::rethrow_exception(failure_);
  TopUp();
  std::deque<Prefetcher::Pending>& pending = prefetcher_->pending;
  if (pending.empty()) return std::nullopt;
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  BatchHandoff& handoff = shared_->handoff;
  if (pending.size() > 1 && !pending.front().batch->published.load(std::memory_order_acquire)) {
    // The caller is faster than the decoding threads: rather than sleep on every batch (and have a decoding thread
    // pay a wake-up for each), sleep until a quarter of the window is built, then take those batches without
    // waiting. Only a caller that outruns the loader waits longer for its next batch; the others never get here.
    const size_t ahead = std::min(pending.size() - 1, window_ / 4);
    if (ahead > 0) handoff.Wait(*pending[ahead].batch, deadline);  // its outcome is read when its turn comes
  }
  Prefetcher::Pending next = std::move(pending.front());
  pending.pop_front();
  Batch batch;
  try {
    if (!handoff.Wait(*next.batch, deadline)) {
      LAKERUN_THROW(IoError, RankPrefix(), "epoch ", state_.epoch, " batch ", next.index, " was not decoded within ",
                    options_.timeout.count(), " ms");
    }
    if (next.batch->error) std::rethrow_exception(next.batch->error);
    batch = std::move(next.batch->batch);
  } catch (...) {
    // The loader stays failed (every later Next rethrows) until SetEpoch or load_state_dict.
    failure_ = std::current_exception();
    throw;
  }
  state_.samples_yielded += static_cast<uint64_t>(batch.size());
  SizeWindow(batch);
  TopUp();  // keep the pool busy while the caller trains on this batch
  if (options_.device.is_cuda()) {
    for (auto& [name, tensor] : batch.tensors) tensor = tensor.to(options_.device, /*non_blocking=*/true);
  }
  return batch;
}

void Loader::SizeWindow(const Batch& batch) {
  constexpr size_t kMaxWindow = 64;
  if (options_.prefetch_bytes == 0 || batch.size() == 0) return;
  // Without decoding threads the queue is built inside Next(): a deeper one overlaps nothing.
  if (prefetcher_->pool.size() == 0) return;
  // Several threads over a table larger than the cache decode the row groups of every queued batch early (TopUp):
  // queueing further ahead would push row groups still needed out of the cache.
  if (!decode_ahead_ && prefetcher_->pool.size() > 1) return;
  size_t bytes = batch.sample_ids.nbytes();
  for (const auto& [name, tensor] : batch.tensors) bytes += tensor.nbytes();
  const size_t fits = options_.prefetch_bytes / std::max<size_t>(bytes, 1);
  window_ = std::max(options_.prefetch_batches, std::min(kMaxWindow, fits));
}

void Loader::load_state_dict(const LoaderState& saved) {
  LAKERUN_CHECK(saved.num_samples == num_rows_, RankPrefix(), "loader state is for a table of ", saved.num_samples,
                " rows, this source has ", num_rows_);
  LAKERUN_CHECK(saved.seed == options_.seed, RankPrefix(), "loader state has seed ", saved.seed,
                ", this loader uses seed ", options_.seed);
  const Continuation c = ContinueFrom(saved, static_cast<uint64_t>(world_size()));
  StartPlan(saved.epoch, c.from, c.skip);
}

}  // namespace lakerun::data
