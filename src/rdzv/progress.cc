#include "lakerun/rdzv/progress.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "lakerun/base/error.h"

namespace lakerun::rdzv {
namespace {

constexpr uint64_t kMagic = 0x6c616b6570726f67;  // "lakeprog"
constexpr uint32_t kVersion = 1;

struct alignas(64) Header {
  uint64_t magic;
  uint32_t version;
  uint32_t slots;
};

// Written by one rank, read by its launcher. Fields are independent atomics: the launcher's verdicts rest on states
// that last for seconds, so a read that straddles an update is harmless.
struct alignas(64) Slot {
  std::atomic<int64_t> pid;
  std::atomic<uint64_t> entered;
  std::atomic<uint64_t> left;
  std::atomic<int64_t> changed_ns;  // CLOCK_MONOTONIC_COARSE of the last Enter / Leave (or of opening the slot)
  std::atomic<uint32_t> last;
};
static_assert(std::atomic<int64_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free,
              "the progress board needs lock-free 64-bit atomics in shared memory");

size_t BoardSize(int slots) { return sizeof(Header) + sizeof(Slot) * static_cast<size_t>(slots); }

Slot* SlotAt(void* memory, int slot) {
  return reinterpret_cast<Slot*>(static_cast<char*>(memory) + sizeof(Header)) + slot;
}

// The coarse clock (the last timer tick: a few ms of resolution) reads in a few ns where the precise one takes tens;
// verdicts are about seconds.
int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void* MapShared(int fd, size_t size) {
  void* memory = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

void Warn(const std::string& message) {
  std::fprintf(stderr, "[lakerun] warning: hang detection is off for this rank: %s\n", message.c_str());
}

}  // namespace

const char* CollectiveName(Collective collective) {
  switch (collective) {
    case Collective::kNone: return "none";
    case Collective::kBarrier: return "barrier";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kAllReduce: return "all-reduce";
    case Collective::kAllGather: return "all-gather";
    case Collective::kGradientAllReduce: return "gradient all-reduce";
    case Collective::kSharedMemoryReduce: return "shared-memory gradient all-reduce";
    case Collective::kReduceScatter: return "gradient reduce-scatter";
    case Collective::kSharedMemoryReduceScatter: return "shared-memory gradient reduce-scatter";
    case Collective::kSharedMemoryAllGather: return "shared-memory all-gather";
  }
  return "collective";
}

ProgressBoard::ProgressBoard(int slots) : slots_(slots), size_(BoardSize(slots)) {
  LAKERUN_CHECK(slots > 0, "progress board: ", slots, " slots");
  fd_ = ::memfd_create("lakerun-progress", MFD_CLOEXEC);
  if (fd_ < 0) LAKERUN_THROW(IoError, "progress board: memfd_create: ", std::strerror(errno));
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0 || (memory_ = MapShared(fd_, size_)) == nullptr) {
    const int error = errno;
    ::close(fd_);
    LAKERUN_THROW(IoError, "progress board: cannot map ", size_, " bytes of shared memory: ", std::strerror(error));
  }
  auto* header = static_cast<Header*>(memory_);
  header->magic = kMagic;
  header->version = kVersion;
  header->slots = static_cast<uint32_t>(slots);
}

ProgressBoard::~ProgressBoard() {
  if (memory_ != nullptr) ::munmap(memory_, size_);
  if (fd_ >= 0) ::close(fd_);
}

std::string ProgressBoard::Location() const {
  return "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd_);
}

RankProgress ProgressBoard::Read(int slot) const {
  LAKERUN_CHECK(slot >= 0 && slot < slots_, "progress board: slot ", slot, " of ", slots_);
  const Slot& s = *SlotAt(memory_, slot);
  RankProgress progress;
  progress.pid = s.pid.load(std::memory_order_acquire);
  progress.reported = progress.pid != 0;
  if (!progress.reported) return progress;
  const uint64_t left = s.left.load(std::memory_order_acquire);
  progress.entered = s.entered.load(std::memory_order_acquire);
  progress.in_collective = progress.entered > left;
  progress.last = static_cast<Collective>(s.last.load(std::memory_order_relaxed));
  const int64_t quiet_ns = MonotonicNs() - s.changed_ns.load(std::memory_order_acquire);
  progress.quiet = std::chrono::milliseconds(std::max<int64_t>(0, quiet_ns / 1000000));
  return progress;
}

void ProgressBoard::Clear() {
  for (int i = 0; i < slots_; ++i) {
    Slot& s = *SlotAt(memory_, i);
    s.pid.store(0, std::memory_order_relaxed);
    s.entered.store(0, std::memory_order_relaxed);
    s.left.store(0, std::memory_order_relaxed);
    s.changed_ns.store(0, std::memory_order_relaxed);
    s.last.store(0, std::memory_order_release);
  }
}

std::unique_ptr<ProgressReporter> ProgressReporter::FromEnvironment() {
  const char* location = std::getenv(kProgressBoardEnv);
  const char* slot_text = std::getenv(kProgressSlotEnv);
  if (location == nullptr || *location == '\0' || slot_text == nullptr) return nullptr;
  char* end = nullptr;
  const long slot = std::strtol(slot_text, &end, 10);
  if (end == slot_text || *end != '\0' || slot < 0) {
    Warn(std::string(kProgressSlotEnv) + "='" + slot_text + "' is not a slot number");
    return nullptr;
  }
  const int fd = ::open(location, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    Warn(std::string("cannot open its launcher's progress board ") + location + ": " + std::strerror(errno));
    return nullptr;
  }
  struct stat st {};
  void* memory = nullptr;
  if (::fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(sizeof(Header))) {
    memory = MapShared(fd, static_cast<size_t>(st.st_size));
  }
  ::close(fd);
  const auto* header = static_cast<const Header*>(memory);
  if (memory == nullptr || header->magic != kMagic || header->version != kVersion || slot >= header->slots ||
      static_cast<size_t>(st.st_size) < BoardSize(static_cast<int>(header->slots))) {
    if (memory != nullptr) ::munmap(memory, static_cast<size_t>(st.st_size));
    Warn(std::string(location) + " is not a progress board with slot " + slot_text);
    return nullptr;
  }
  return std::unique_ptr<ProgressReporter>(
      new ProgressReporter(memory, static_cast<size_t>(st.st_size), static_cast<int>(slot)));
}

ProgressReporter::ProgressReporter(void* memory, size_t size, int slot)
    : memory_(memory), size_(size), slot_(SlotAt(memory, slot)) {
  auto& s = *static_cast<Slot*>(slot_);
  s.changed_ns.store(MonotonicNs(), std::memory_order_relaxed);
  s.pid.store(::getpid(), std::memory_order_release);
}

ProgressReporter::~ProgressReporter() { ::munmap(memory_, size_); }

void ProgressReporter::Enter(Collective collective) noexcept {
  auto& s = *static_cast<Slot*>(slot_);
  s.last.store(static_cast<uint32_t>(collective), std::memory_order_relaxed);
  s.changed_ns.store(MonotonicNs(), std::memory_order_relaxed);
  // Only this rank writes its slot: a plain store, not a locked read-modify-write.
  s.entered.store(s.entered.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void ProgressReporter::Leave() noexcept {
  auto& s = *static_cast<Slot*>(slot_);
  s.changed_ns.store(MonotonicNs(), std::memory_order_relaxed);
  s.left.store(s.entered.load(std::memory_order_relaxed), std::memory_order_release);
}

}  // namespace lakerun::rdzv
