#include "dist/sharded_parameters.h"

#include <lakerun/base/error.h>

#include <ATen/ATen.h>
#include <c10/core/StorageImpl.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <tuple>

namespace lakerun::dist {
namespace {

// Long enough for any real model's iteration; a longer one (evaluation without steps) stops recording.
constexpr std::size_t kMaxSequence = 1 << 20;

// A unit's storage keeps its size for good; only its data comes and goes (null: freed).
void SetData(c10::StorageImpl* storage, at::DataPtr data) { storage->set_data_ptr_noswap(std::move(data)); }

bool Contains(const std::vector<std::size_t>& v, std::size_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

ShardedParameters::ShardedParameters(Context& ctx, std::vector<at::Tensor> params,
                                     const std::vector<ShardedBucket>& buckets, std::vector<at::Tensor> chunks,
                                     ShardTransport& transport, int max_resident, bool prefetch,
                                     std::optional<at::ScalarType> param_dtype)
    : ctx_(ctx),
      transport_(transport),
      params_(params),
      chunks_(std::move(chunks)),
      max_resident_(static_cast<std::size_t>(std::max(max_resident, 1))),
      prefetch_(prefetch),
      previous_positions_(buckets.size()) {
  at::NoGradGuard no_grad;
  std::vector<std::pair<const c10::StorageImpl*, std::size_t>> watched;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const ShardedBucket& bucket = buckets[b];
    Unit unit;
    const at::Tensor& first = params[bucket.params.front()];
    unit.flat = at::zeros({bucket.padded_numel(ctx.world_size())},
                          first.options().dtype(param_dtype.value_or(first.scalar_type())).requires_grad(false));
    unit.params = bucket.params;
    unit.offsets = bucket.offsets;
    for (std::size_t k = 0; k < bucket.params.size(); ++k) {
      at::Tensor& p = params[bucket.params[k]];
      unit.flat.narrow(0, bucket.offsets[k], p.numel()).copy_(p.reshape({-1}));
    }
    unit.storage = unit.flat.storage().unsafeGetStorageImpl();
    unit.bytes = static_cast<int64_t>(unit.flat.nbytes());
    SetData(unit.storage, at::DataPtr(nullptr, unit.flat.device()));  // freed: the chunk holds the values
    watched.emplace_back(unit.storage, b);
    units_.push_back(std::move(unit));
    SeatParameters(b, units_.back().flat);  // the same parameter objects, now inside the unit's buffer
  }
  watch_ = std::make_unique<ParameterTouchWatch>(
      std::move(watched), [this](const std::vector<std::size_t>& units, bool) { OnTouch(units); });
}

ShardedParameters::~ShardedParameters() {
  watch_.reset();
  for (Unit& u : units_) {
    try {
      u.op.Wait();
    } catch (const std::exception&) {
    }
  }
}

// An operation is about to read `units`: all of them must hold bytes when this returns.
void ShardedParameters::OnTouch(const std::vector<std::size_t>& units) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (failure_) return FillFailed(units);
  try {
    ReadUnits(units);
  } catch (const std::exception& e) {
    failure_ = std::current_exception();
    std::fprintf(stderr,
                 "[lakerun] rank %d: ShardedDataParallel could not gather parameters: %s. The operation that needed "
                 "them reads NaN; the next backward, step or full-parameter gather raises this error.\n",
                 ctx_.rank(), e.what());
    FillFailed(units);
  }
}

void ShardedParameters::ReadUnits(const std::vector<std::size_t>& units) {
  for (std::size_t b : units) {
    if (sequence_.size() < kMaxSequence && (sequence_.empty() || sequence_.back() != b)) sequence_.push_back(b);
    Unit& u = units_[b];
    u.last_use = ++clock_;
    if (!u.resident) {
      if (!pinned_) MakeRoom(units, 0);
      StartGather(b);
    } else if (u.prefetched) {
      ++current_.prefetched;
    }
    u.prefetched = false;
    Install(b);
  }
  if (prefetch_ && !pinned_) Prefetch(units);
}

// Starts gathering the next unit the previous iteration read after this point that holds no bytes, unless a
// prefetch is still unread or room for it would cost a unit needed sooner.
void ShardedParameters::Prefetch(const std::vector<std::size_t>& keep) {
  for (const Unit& u : units_) {
    if (u.prefetched) return;
  }
  const std::size_t now = sequence_.size() - 1;
  for (std::size_t i = now + 1; i < previous_.size(); ++i) {
    const std::size_t b = previous_[i];
    if (units_[b].resident) continue;
    if (!MakeRoom(keep, i)) return;
    StartGather(b);
    units_[b].prefetched = true;
    return;
  }
}

// The position in the previous iteration's sequence of unit b's next read after the current one (kNever: none).
std::size_t ShardedParameters::NextUse(std::size_t b) const {
  const std::vector<std::size_t>& at = previous_positions_[b];
  const auto it = std::upper_bound(at.begin(), at.end(), sequence_.empty() ? 0 : sequence_.size() - 1);
  return it == at.end() ? kNever : *it;
}

// Frees units, none of `keep`, until one more fits under max_resident: the one read last by the prediction (never
// read again first), else the one read longest ago. With `needed_at` > 0 (a prefetch needed there) it frees only
// units needed after that, and returns false when that is not enough.
bool ShardedParameters::MakeRoom(const std::vector<std::size_t>& keep, std::size_t needed_at) {
  for (;;) {
    std::size_t resident = 0, victim = units_.size();
    auto later = [&](std::size_t a, std::size_t b) {  // whether a is the better victim
      return std::make_tuple(NextUse(a), -static_cast<int64_t>(units_[a].last_use)) >
             std::make_tuple(NextUse(b), -static_cast<int64_t>(units_[b].last_use));
    };
    for (std::size_t b = 0; b < units_.size(); ++b) {
      if (!units_[b].resident) continue;
      ++resident;
      if (!Contains(keep, b) && (victim == units_.size() || later(b, victim))) victim = b;
    }
    if (resident < max_resident_) return true;
    if (victim == units_.size()) return needed_at == 0;  // everything resident is in use: exceed the limit
    if (needed_at > 0 && NextUse(victim) <= needed_at) return false;
    Free(victim);
  }
}

// The parameters of unit b become views of `buffer` (the unit's own, or its master values inside GatherAll).
void ShardedParameters::SeatParameters(std::size_t b, const at::Tensor& buffer) {
  const Unit& u = units_[b];
  for (std::size_t k = 0; k < u.params.size(); ++k) {
    at::Tensor& p = params_[u.params[k]];
    p.set_data(buffer.narrow(0, u.offsets[k], p.numel()).view(p.sizes()));
  }
}

void ShardedParameters::StartGather(std::size_t b) {
  Unit& u = units_[b];
  u.incoming = at::empty({u.flat.numel()}, u.flat.options());
  u.outgoing = chunks_[b].scalar_type() == u.flat.scalar_type() ? chunks_[b] : chunks_[b].to(u.flat.scalar_type());
  u.op = transport_.StartAllGather(b, u.outgoing, u.incoming);
  u.resident = true;
  u.last_use = ++clock_;
  resident_bytes_ += u.bytes;
  peak_bytes_ = std::max(peak_bytes_, resident_bytes_);
  ++current_.gathers;
}

// Waits for unit b's gather and moves the gathered bytes into the unit's own storage.
void ShardedParameters::Install(std::size_t b) {
  Unit& u = units_[b];
  if (!u.incoming.defined()) return;
  u.op.Wait();
  c10::StorageImpl* filled = u.incoming.storage().unsafeGetStorageImpl();
  at::DataPtr data = filled->set_data_ptr(at::DataPtr(nullptr, u.flat.device()));
  filled->set_nbytes(0);
  u.incoming = at::Tensor();
  u.outgoing = at::Tensor();
  SetData(u.storage, std::move(data));
}

void ShardedParameters::Free(std::size_t b) {
  Unit& u = units_[b];
  if (!u.resident) return;
  if (u.incoming.defined()) {
    u.op.Wait();  // a prefetch nobody read: the collective still completes on this rank
    u.incoming = at::Tensor();
    u.outgoing = at::Tensor();
  }
  SetData(u.storage, at::DataPtr(nullptr, u.flat.device()));
  u.resident = false;
  u.prefetched = false;
  resident_bytes_ -= u.bytes;
}

// After a failed gather: the units hold NaN (no communication), so the operation reads no freed memory.
void ShardedParameters::FillFailed(const std::vector<std::size_t>& units) {
  for (std::size_t b : units) {
    Unit& u = units_[b];
    if (u.storage->data() != nullptr) continue;
    u.incoming = at::Tensor();
    u.op = PendingShardOp();  // drops a transfer in flight, waiting for it within the context's timeout
    at::Tensor nan = at::full({u.flat.numel()}, std::numeric_limits<double>::quiet_NaN(), u.flat.options());
    SetData(u.storage, nan.storage().unsafeGetStorageImpl()->set_data_ptr(at::DataPtr(nullptr, u.flat.device())));
    if (!u.resident) resident_bytes_ += u.bytes;
    u.resident = true;
  }
}

void ShardedParameters::ThrowIfFailed() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (failure_) std::rethrow_exception(failure_);
}

void ShardedParameters::Release(std::size_t b) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ThrowIfFailed();
  if (!pinned_) Free(b);
}

void ShardedParameters::EndIteration() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ThrowIfFailed();
  ReturnMasters();
  pinned_ = false;
  for (std::size_t b = 0; b < units_.size(); ++b) Free(b);
  if (!sequence_.empty()) {
    previous_ = std::move(sequence_);
    for (auto& at : previous_positions_) at.clear();
    for (std::size_t i = 0; i < previous_.size(); ++i) previous_positions_[previous_[i]].push_back(i);
  }
  sequence_.clear();
  last_ = current_;
  current_ = IterationStats{};
}

void ShardedParameters::GatherAll() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ThrowIfFailed();
  pinned_ = true;
  if (!units_.empty() && units_.front().flat.scalar_type() != chunks_.front().scalar_type()) return GatherMasters();
  for (std::size_t b = 0; b < units_.size(); ++b) {
    if (!units_[b].resident) StartGather(b);
  }
  for (std::size_t b = 0; b < units_.size(); ++b) Install(b);
}

// Mixed precision: each unit's master values, gathered from the chunks in their dtype into a buffer of its own, and
// the parameters seated there (a checkpoint holds full precision, and values written back keep it). Seating a
// parameter in a tensor of another dtype drops its gradient accumulator, and with it the hooks that reduce its
// gradients: ReturnMasters gives each parameter its own back.
void ShardedParameters::GatherMasters() {
  for (std::size_t b = 0; b < units_.size(); ++b) {
    Unit& u = units_[b];
    if (u.master.defined()) continue;
    Free(b);
    u.accumulators.clear();
    for (std::size_t i : u.params) u.accumulators.push_back(torch::autograd::impl::try_get_grad_accumulator(params_[i]));
    u.master = at::empty({u.flat.numel()}, chunks_[b].options());
    transport_.StartAllGather(b, chunks_[b], u.master).Wait();
    SeatParameters(b, u.master);
    resident_bytes_ += static_cast<int64_t>(u.master.nbytes());
    peak_bytes_ = std::max(peak_bytes_, resident_bytes_);
  }
}

// The parameters back in their (freed) units.
void ShardedParameters::ReturnMasters() {
  for (std::size_t b = 0; b < units_.size(); ++b) {
    Unit& u = units_[b];
    if (!u.master.defined()) continue;
    SeatParameters(b, u.flat);
    for (std::size_t k = 0; k < u.params.size(); ++k) {
      if (u.accumulators[k]) torch::autograd::impl::set_grad_accumulator(params_[u.params[k]], u.accumulators[k]);
    }
    u.accumulators.clear();
    resident_bytes_ -= static_cast<int64_t>(u.master.nbytes());
    u.master = at::Tensor();
  }
}

void ShardedParameters::ReleaseAll() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ReturnMasters();
  pinned_ = false;
  for (std::size_t b = 0; b < units_.size(); ++b) Free(b);
}

bool ShardedParameters::gathered_all() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return pinned_;
}

int64_t ShardedParameters::resident_bytes() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return resident_bytes_;
}

int64_t ShardedParameters::peak_resident_bytes() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return peak_bytes_;
}

ShardedParameters::IterationStats ShardedParameters::LastIteration() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return last_;
}

}  // namespace lakerun::dist
