// SharedMemoryAllReduce: segment set-up through two all-gathers, futex-backed waits, chunked rank-order sums.
#include "dist/shared_memory_allreduce.h"

#include <lakerun/base/error.h>
#include <lakerun/dist/collectives.h>

#include <ATen/ATen.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <fstream>
#include <random>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace lakerun::dist {
namespace {

using Clock = std::chrono::steady_clock;
using Counter = std::atomic<uint32_t>;
static_assert(sizeof(Counter) == sizeof(uint32_t) && Counter::is_always_lock_free,
              "futex words must be plain lock-free 32-bit atomics");

constexpr uint64_t kMagic = 0x6c616b6572756e31ULL;  // "lakerun1"
constexpr std::size_t kLine = 64;
// How long a wait spins before it sleeps on the futex: about one peer's late arrival when each rank has a core.
constexpr auto kSpin = std::chrono::microseconds(50);
// A sleeping wait wakes at least this often to check its deadline and whether the missing peers still exist.
constexpr auto kSleepSlice = std::chrono::milliseconds(100);

std::size_t RoundUp(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

struct SegmentHeader {
  uint64_t magic;
  uint64_t signature;
  Counter sleepers;  // waits currently asleep on some futex of this segment: publishers wake only when needed
};

struct RankInfo {
  int32_t pid;
};

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Shared (not private) futex operations: the ranks map the segment at different addresses, in different processes.
void FutexWait(Counter* word, uint32_t expected, std::chrono::nanoseconds timeout) {
  timespec ts{static_cast<time_t>(timeout.count() / 1000000000), static_cast<long>(timeout.count() % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void FutexWakeAll(Counter* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Round numbers wrap; a counter has reached `round` when it is at most 2^31 ahead.
bool Reached(uint32_t counter, uint32_t round) { return static_cast<int32_t>(counter - round) >= 0; }

uint64_t Signature(int world, const std::vector<SharedBufferSpec>& buffers) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  auto mix = [&h](uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xff;
      h *= 1099511628211ULL;
    }
  };
  mix(static_cast<uint64_t>(world));
  for (const SharedBufferSpec& s : buffers) {
    mix(static_cast<uint64_t>(s.dtype));
    mix(static_cast<uint64_t>(s.numel));
  }
  return h;
}

std::string SpecsText(const std::vector<SharedBufferSpec>& buffers) {
  std::string text;
  for (std::size_t i = 0; i < buffers.size() && i < 8; ++i) {
    text += StrCat(i ? ", " : "", c10::toString(buffers[i].dtype), "[", buffers[i].numel, "]");
  }
  if (buffers.size() > 8) text += StrCat(" and ", buffers.size() - 8, " more");
  return text;
}

std::string SegmentName() {
  std::random_device device;
  std::mt19937_64 random((static_cast<uint64_t>(device()) << 32) ^ device() ^ static_cast<uint64_t>(getpid()));
  char name[64];
  std::snprintf(name, sizeof(name), "/lakerun-allreduce-%d-%016llx", static_cast<int>(getpid()),
                static_cast<unsigned long long>(random()));
  return name;
}

// Maps `bytes` of an open shared-memory object; nullptr and a reason on failure.
void* MapSegment(int fd, std::size_t bytes, std::string* error) {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *error = StrCat("mmap of ", bytes, " bytes failed: ", std::strerror(errno));
    return nullptr;
  }
  return base;
}

// Rank 0's side: a fresh segment with every page reserved now, so a full /dev/shm is a clear fallback here rather
// than a SIGBUS at the first write.
void* CreateSegment(const std::string& name, std::size_t bytes, std::string* error) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    *error = StrCat("cannot create /dev/shm", name, ": ", std::strerror(errno));
    return nullptr;
  }
  void* base = nullptr;
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    *error = StrCat("cannot reserve ", bytes, " bytes in /dev/shm", name, ": ", std::strerror(rc));
  } else {
    base = MapSegment(fd, bytes, error);
  }
  close(fd);
  if (base == nullptr) shm_unlink(name.c_str());
  return base;
}

void* OpenSegment(const std::string& name, std::size_t bytes, std::string* error) {
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    *error = StrCat("cannot open /dev/shm", name, " made by rank 0: ", std::strerror(errno),
                    " (is rank 0 on another host?)");
    return nullptr;
  }
  struct stat st {};
  void* base = nullptr;
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != bytes) {
    *error = StrCat("/dev/shm", name, " has ", st.st_size, " bytes, expected ", bytes);
  } else {
    base = MapSegment(fd, bytes, error);
  }
  close(fd);
  return base;
}

// A process that exited stays visible to kill() as a zombie until its parent reaps it: look at its state too.
bool PidVisible(int32_t pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc: trust kill()
  std::size_t paren = line.rfind(')');
  char state = paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
  return state != 'Z' && state != 'X';
}

template <typename T>
void SumInto(T* __restrict out, const std::vector<const T*>& in, int64_t lo, int64_t hi) {
  // Blocks keep `out` in L1 while the third and later inputs are added.
  constexpr int64_t kBlock = 2048;
  for (int64_t b = lo; b < hi; b += kBlock) {
    const int64_t e = std::min(hi, b + kBlock);
    const T* __restrict a = in[0];
    const T* __restrict c = in[1];
    for (int64_t k = b; k < e; ++k) out[k] = a[k] + c[k];
    for (std::size_t j = 2; j < in.size(); ++j) {
      const T* __restrict x = in[j];
      for (int64_t k = b; k < e; ++k) out[k] += x[k];
    }
  }
}

}  // namespace

// Where everything lives in the segment. Identical on every rank for the same (world, buffers).
struct SharedMemoryAllReduce::Layout {
  int world = 0;
  std::size_t rank_info = 0;        // RankInfo[world], one line each
  std::size_t counters = 0;         // per rank: Counter arrived[buffers], reduced[buffers]
  std::size_t counters_stride = 0;  // bytes per rank, whole lines (each rank writes only its own)
  std::vector<std::size_t> slots;   // buffer i: rank r's slot at slots[i] + r * slot_bytes[i], the sum after them
  std::vector<std::size_t> slot_bytes;
  std::size_t total = 0;

  Layout(int world_size, const std::vector<SharedBufferSpec>& buffers) : world(world_size) {
    std::size_t at = RoundUp(sizeof(SegmentHeader), kLine);
    rank_info = at;
    at += kLine * static_cast<std::size_t>(world);
    counters = at;
    counters_stride = RoundUp(2 * buffers.size() * sizeof(Counter), kLine);
    at += counters_stride * static_cast<std::size_t>(world);
    for (const SharedBufferSpec& s : buffers) {
      std::size_t bytes = RoundUp(static_cast<std::size_t>(s.numel) * c10::elementSize(s.dtype), kLine);
      slots.push_back(at);
      slot_bytes.push_back(bytes);
      at += bytes * static_cast<std::size_t>(world + 1);
    }
    total = RoundUp(at, 4096);
  }
};

bool SharedMemoryAllReduce::Supports(at::ScalarType dtype) { return dtype == at::kFloat || dtype == at::kDouble; }

std::unique_ptr<SharedMemoryAllReduce> SharedMemoryAllReduce::Create(Context& ctx,
                                                                    const std::vector<SharedBufferSpec>& buffers,
                                                                    std::string* why_not, const std::string& what) {
  std::string ignored;
  if (why_not == nullptr) why_not = &ignored;
  const int world = ctx.world_size(), rank = ctx.rank();
  if (world <= 1) {
    *why_not = "world size 1";
    return nullptr;
  }
  for (const SharedBufferSpec& s : buffers) {
    LAKERUN_CHECK(Supports(s.dtype) && s.numel > 0, "SharedMemoryAllReduce: unsupported buffer ",
                  c10::toString(s.dtype), "[", s.numel, "] on rank ", rank);
  }
  const Layout layout(world, buffers);
  const uint64_t signature = Signature(world, buffers);

  auto first_refusal = [&](const std::vector<std::string>& all) -> std::string {
    for (int r = 0; r < world; ++r) {
      if (all[r].rfind("ok", 0) != 0) return StrCat("rank ", r, ": ", all[r].substr(all[r].find('\t') + 1));
    }
    return {};
  };

  // Round 1, before anything exists: every rank has arrived, can take part, and means the same buffers. Ranks may
  // reach this point far apart (one still loading data), so no segment may wait here for them.
  std::string reason;
  if (buffers.empty()) {
    reason = "no buffers";
  } else if (ctx.local_world_size() != world) {
    reason = StrCat("ranks on several hosts (", ctx.local_world_size(), " of ", world, " on this one)");
  }
  // "ok\t<signature>\t<buffers>": the buffers only to name them in an error.
  std::vector<std::string> round1 = AllGatherBytes(
      ctx, reason.empty() ? StrCat("ok\t", signature, "\t", SpecsText(buffers)) : StrCat("no\t", reason));
  auto field = [](const std::string& text, int k) {
    std::size_t at = 0;
    for (int i = 0; i < k; ++i) at = text.find('\t', at) + 1;
    return text.substr(at, text.find('\t', at) - at);
  };
  for (int r = 1; r < world; ++r) {
    if (round1[r].rfind("ok", 0) == 0 && round1[0].rfind("ok", 0) == 0 && field(round1[r], 1) != field(round1[0], 1)) {
      LAKERUN_THROW(DistError, "rank ", rank, " of ", world, ": ", what, " through shared memory: rank ", r,
                    "'s buffers (", field(round1[r], 2), ") differ from rank 0's (", field(round1[0], 2),
                    "). Every rank must build the same model with the same parameters");
    }
  }
  if (std::string refusal = first_refusal(round1); !refusal.empty()) {
    *why_not = refusal;
    return nullptr;
  }

  // Round 2: rank 0 makes the segment and names it. Round 3: the others map it. Rank 0 unlinks the name after
  // round 3, or as soon as anything fails, so a name outlives set-up only if rank 0 dies within these two rounds.
  std::string name;
  void* base = nullptr;
  auto release = [&] {
    if (base != nullptr) munmap(base, layout.total);
    base = nullptr;
    if (rank == 0 && !name.empty()) shm_unlink(name.c_str());
    name.clear();
  };
  try {
    if (rank == 0) {
      name = SegmentName();
      base = CreateSegment(name, layout.total, &reason);
      if (base != nullptr) {
        auto* header = static_cast<SegmentHeader*>(base);
        header->magic = kMagic;
        header->signature = signature;
        new (&header->sleepers) Counter(0);
      } else {
        name.clear();  // CreateSegment removed it
      }
    }
    std::vector<std::string> round2 =
        AllGatherBytes(ctx, reason.empty() ? StrCat("ok\t", name) : StrCat("no\t", reason));
    if (std::string refusal = first_refusal(round2); !refusal.empty()) {
      release();
      *why_not = refusal;
      return nullptr;
    }
    if (rank != 0) {
      const std::string zero_name = round2[0].substr(3);
      base = OpenSegment(zero_name, layout.total, &reason);
      if (base != nullptr && static_cast<SegmentHeader*>(base)->magic != kMagic) {
        reason = StrCat("/dev/shm", zero_name, " is not rank 0's segment");
        release();
      }
    }
    if (base != nullptr) {
      reinterpret_cast<RankInfo*>(static_cast<char*>(base) + layout.rank_info + kLine * rank)->pid = getpid();
    }
    std::vector<std::string> round3 = AllGatherBytes(ctx, reason.empty() ? std::string("ok") : "no\t" + reason);
    if (rank == 0) {
      shm_unlink(name.c_str());  // every rank has mapped it or given up: the name is no longer needed
      name.clear();
    }
    if (std::string refusal = first_refusal(round3); !refusal.empty()) {
      release();
      *why_not = refusal;
      return nullptr;
    }
  } catch (...) {
    release();
    throw;
  }

  // Liveness checks need every peer's pid to mean something here (ranks in other pid namespaces: rely on timeouts).
  bool pids_visible = true;
  for (int r = 0; r < world; ++r) {
    pids_visible = pids_visible &&
                   PidVisible(reinterpret_cast<RankInfo*>(static_cast<char*>(base) + layout.rank_info + kLine * r)->pid);
  }
  return std::unique_ptr<SharedMemoryAllReduce>(
      new SharedMemoryAllReduce(ctx, buffers, base, layout.total, pids_visible, what));
}

SharedMemoryAllReduce::SharedMemoryAllReduce(Context& ctx, std::vector<SharedBufferSpec> buffers, void* base,
                                             std::size_t bytes, bool check_peer_pids, std::string what)
    : ctx_(ctx),
      buffers_(std::move(buffers)),
      layout_(std::make_unique<Layout>(ctx.world_size(), buffers_)),
      base_(base),
      bytes_(bytes),
      check_peer_pids_(check_peer_pids),
      rounds_(buffers_.size(), 0),
      started_(buffers_.size(), false),
      what_(std::move(what)) {
  char* segment = static_cast<char*>(base_);
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    auto options = at::TensorOptions().dtype(buffers_[i].dtype);
    char* first = segment + layout_->slots[i];
    inputs_.push_back(at::from_blob(first + layout_->slot_bytes[i] * ctx.rank(), {buffers_[i].numel}, options));
    sums_.push_back(at::from_blob(first + layout_->slot_bytes[i] * ctx.world_size(), {buffers_[i].numel}, options));
  }
}

SharedMemoryAllReduce::~SharedMemoryAllReduce() {
  inputs_.clear();
  sums_.clear();
  munmap(base_, bytes_);
}

namespace {

Counter& CounterOf(char* segment, std::size_t counters, std::size_t stride, std::size_t buffers, int rank,
                   std::size_t i, bool reduced) {
  auto* words = reinterpret_cast<Counter*>(segment + counters + stride * static_cast<std::size_t>(rank));
  return words[(reduced ? buffers : 0) + i];
}

}  // namespace

void SharedMemoryAllReduce::Publish(std::size_t i, bool reduced, uint32_t round) {
  char* segment = static_cast<char*>(base_);
  Counter& word = CounterOf(segment, layout_->counters, layout_->counters_stride, buffers_.size(), ctx_.rank(), i,
                            reduced);
  word.store(round, std::memory_order_seq_cst);
  // Pairs with the sleeper's increment-then-recheck: either it sees the new round or this sees it asleep.
  if (static_cast<SegmentHeader*>(base_)->sleepers.load(std::memory_order_seq_cst) > 0) FutexWakeAll(&word);
}

void SharedMemoryAllReduce::WaitForAll(std::size_t i, bool reduced, uint32_t round) {
  char* segment = static_cast<char*>(base_);
  auto* header = static_cast<SegmentHeader*>(base_);
  const int world = ctx_.world_size();
  auto counter = [&](int r) -> Counter& {
    return CounterOf(segment, layout_->counters, layout_->counters_stride, buffers_.size(), r, i, reduced);
  };
  const auto start = Clock::now();
  const auto deadline = start + ctx_.timeout();
  auto last_liveness_check = start;
  for (int r = 0; r < world; ++r) {
    Counter& word = counter(r);
    while (!Reached(word.load(std::memory_order_acquire), round)) {
      auto now = Clock::now();
      if (now - start < kSpin) {
        for (int k = 0; k < 64; ++k) CpuRelax();
        continue;
      }
      const bool check_liveness = check_peer_pids_ && now - last_liveness_check >= kSleepSlice;
      if (check_liveness || now >= deadline) {
        // Only on the way to an error or a liveness check: a plain sleep allocates nothing.
        std::vector<int> missing;
        for (int q = r; q < world; ++q) {
          if (!Reached(counter(q).load(std::memory_order_acquire), round)) missing.push_back(q);
        }
        const std::string phase = StrCat(what_, " through shared memory (bucket ", i, ", round ",
                                         round, reduced ? ", summing" : ", arriving", ")");
        if (check_liveness) {
          last_liveness_check = now;
          for (int q : missing) {
            int32_t pid = reinterpret_cast<RankInfo*>(segment + layout_->rank_info + kLine * q)->pid;
            if (!PidVisible(pid)) {
              LAKERUN_THROW(DistError, "rank ", ctx_.rank(), " of ", world, ": ", phase, " failed: rank ", q,
                            " (pid ", pid, ") exited");
            }
          }
        }
        if (now >= deadline) {
          std::string names;
          for (int q : missing) names += StrCat(names.empty() ? "" : ", ", q);
          LAKERUN_THROW(CommTimeout, "rank ", ctx_.rank(), " of ", world, ": ", phase, " timed out after ",
                        ctx_.timeout().count(), " ms waiting for rank(s) ", names);
        }
      }
      header->sleepers.fetch_add(1, std::memory_order_seq_cst);
      uint32_t seen = word.load(std::memory_order_seq_cst);
      if (!Reached(seen, round)) {
        FutexWait(&word, seen, std::min<Clock::duration>(kSleepSlice, deadline - now));
      }
      header->sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
  }
}

void SharedMemoryAllReduce::SumChunk(std::size_t i, int64_t numel) {
  const int world = ctx_.world_size(), rank = ctx_.rank();
  // Chunks of whole cache lines (16 floats, 8 doubles), one per rank; trailing ranks may get nothing.
  const int64_t align = static_cast<int64_t>(kLine / c10::elementSize(buffers_[i].dtype));
  const int64_t chunk = (numel + world - 1) / world;
  const int64_t per_rank = (chunk + align - 1) / align * align;
  const int64_t lo = std::min(numel, per_rank * rank), hi = std::min(numel, lo + per_rank);
  if (lo >= hi) return;
  char* first = static_cast<char*>(base_) + layout_->slots[i];
  auto run = [&](auto* type_tag) {
    using T = std::remove_pointer_t<decltype(type_tag)>;
    std::vector<const T*> in(world);
    for (int r = 0; r < world; ++r) in[r] = reinterpret_cast<const T*>(first + layout_->slot_bytes[i] * r);
    SumInto(reinterpret_cast<T*>(first + layout_->slot_bytes[i] * world), in, lo, hi);
  };
  if (buffers_[i].dtype == at::kFloat) {
    run(static_cast<float*>(nullptr));
  } else {
    run(static_cast<double*>(nullptr));
  }
}

void SharedMemoryAllReduce::Start(std::size_t i) {
  LAKERUN_INTERNAL_ASSERT(i < buffers_.size() && !started_[i], "SharedMemoryAllReduce: Start(", i, ") twice");
  started_[i] = true;
  Publish(i, /*reduced=*/false, ++rounds_[i]);
}

// The round Start(i) published; the buffer is no longer started.
uint32_t SharedMemoryAllReduce::EndRound(std::size_t i) {
  LAKERUN_INTERNAL_ASSERT(i < buffers_.size() && started_[i], "SharedMemoryAllReduce: Finish(", i,
                          ") without Start");
  started_[i] = false;
  return rounds_[i];
}

void SharedMemoryAllReduce::Finish(std::size_t i, int64_t numel) {
  LAKERUN_INTERNAL_ASSERT(numel <= buffers_[i].numel, "SharedMemoryAllReduce: Finish(", i, ", ", numel,
                          ") beyond the buffer's ", buffers_[i].numel, " elements");
  const uint32_t round = EndRound(i);
  WaitForAll(i, /*reduced=*/false, round);
  SumChunk(i, numel < 0 ? buffers_[i].numel : numel);
  Publish(i, /*reduced=*/true, round);
  WaitForAll(i, /*reduced=*/true, round);
}

void SharedMemoryAllReduce::FinishGather(std::size_t i, const at::Tensor& out) {
  const int world = ctx_.world_size();
  const int64_t n = buffers_[i].numel;
  LAKERUN_CHECK(out.numel() == n * world && out.scalar_type() == buffers_[i].dtype && out.is_contiguous(),
                "SharedMemoryAllReduce::FinishGather: needs a contiguous ", c10::toString(buffers_[i].dtype), "[",
                n * world, "], got ", out.sizes(), " on rank ", ctx_.rank());
  const uint32_t round = EndRound(i);
  WaitForAll(i, /*reduced=*/false, round);
  const char* first = static_cast<char*>(base_) + layout_->slots[i];
  const std::size_t bytes = static_cast<std::size_t>(n) * c10::elementSize(buffers_[i].dtype);
  for (int r = 0; r < world; ++r) {
    std::memcpy(static_cast<char*>(out.data_ptr()) + bytes * r, first + layout_->slot_bytes[i] * r, bytes);
  }
  Publish(i, /*reduced=*/true, round);
  WaitForAll(i, /*reduced=*/true, round);
}

}  // namespace lakerun::dist
