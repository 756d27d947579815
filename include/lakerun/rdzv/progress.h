// Collective progress shared between a node's ranks and its launcher, for hang detection (docs/launch.md, "Hung
// ranks").
//
// The launcher owns a ProgressBoard: a small shared-memory region with one slot per local rank. Each rank's
// lakerun::dist context opens its slot (ProgressReporter::FromEnvironment) and marks every blocking collective:
//
//   ProgressReporter::Scope in_collective(reporter, Collective::kAllReduce);   // nullptr reporter: no-op
//   ...wait for the collective...
//
// A mark is a coarse clock read and three stores to the rank's own cache line (about 30 ns for a collective's pair):
// no system call, no lock, no store round-trip. The launcher reads every slot about once a second and judges (launch/hang_judge.h) whether some ranks
// wait in a collective while another makes no progress.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

namespace lakerun::rdzv {

/// What a rank blocks in. A closed set: the launcher names it in its report.
enum class Collective : uint32_t {
  kNone = 0,
  kBarrier,
  kBroadcast,
  kAllReduce,
  kAllGather,
  kGradientAllReduce,  // a DDP bucket through the process group
  kSharedMemoryReduce,  // a bucket through the shared-memory transport of one host
  // Sharded data parallel (dist/sharded.h); appended, so the values above keep their numbers on the board.
  kReduceScatter,               // a level-2 gradient bucket through the process group
  kSharedMemoryReduceScatter,   // the same through the shared-memory transport of one host
  kSharedMemoryAllGather,       // chunks of parameters or optimizer state through shared memory
};

/// "all-reduce", "barrier", ...; "collective" for a value outside the set (a newer rank's).
const char* CollectiveName(Collective collective);

/// Environment variables through which the launcher hands a rank its slot.
inline constexpr const char* kProgressBoardEnv = "LAKERUN_PROGRESS_BOARD";
inline constexpr const char* kProgressSlotEnv = "LAKERUN_PROGRESS_SLOT";

/// One rank's slot, as its launcher reads it.
struct RankProgress {
  /// The rank opened its slot (it runs lakerun::dist and is past Init).
  bool reported = false;
  int64_t pid = 0;
  /// Collectives entered so far: the sequence number of the current (or last) one, 1-based.
  uint64_t entered = 0;
  /// The rank is blocked in collective number `entered` now.
  bool in_collective = false;
  /// The current or last collective.
  Collective last = Collective::kNone;
  /// Since the rank last entered or left a collective (or opened its slot).
  std::chrono::milliseconds quiet{0};
};

/// The launcher's side: a shared-memory region (a memfd) with `slots` slots, all empty.
class ProgressBoard {
 public:
  /// Throws IoError when shared memory cannot be created.
  explicit ProgressBoard(int slots);
  ~ProgressBoard();
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;

  int slots() const { return slots_; }
  /// The path a rank opens (kProgressBoardEnv): "/proc/<launcher pid>/fd/<fd>".
  std::string Location() const;
  RankProgress Read(int slot) const;
  /// Empties every slot (before the ranks of a new attempt start).
  void Clear();

 private:
  int slots_;
  int fd_ = -1;
  void* memory_ = nullptr;
  size_t size_ = 0;
};

/// A rank's side: its slot in the launcher's board.
class ProgressReporter {
 public:
  /// The slot the environment names (kProgressBoardEnv, kProgressSlotEnv), opened; nullptr when the process was not
  /// given one (not started by `lakerun launch`). A board that cannot be opened is a warning on stderr, and nullptr:
  /// the rank runs, without hang detection.
  static std::unique_ptr<ProgressReporter> FromEnvironment();
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  /// The rank blocks in `collective` from now on.
  void Enter(Collective collective) noexcept;
  /// It returned from the collective it entered (normally or by an exception).
  void Leave() noexcept;

  /// Enter on construction, Leave on destruction; a null reporter does nothing. Left by an exception (the
  /// collective timed out, or a peer failed) it does not Leave: the slot keeps showing the collective the rank failed
  /// in, so its launcher can tell who held it up (the next Enter moves on).
  class Scope {
   public:
    Scope(ProgressReporter* reporter, Collective collective) noexcept
        : reporter_(reporter), exceptions_(std::uncaught_exceptions()) {
      if (reporter_ != nullptr) reporter_->Enter(collective);
    }
    ~Scope() {
      if (reporter_ != nullptr && std::uncaught_exceptions() == exceptions_) reporter_->Leave();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ProgressReporter* reporter_;
    int exceptions_;
  };

 private:
  ProgressReporter(void* memory, size_t size, int slot);
  void* memory_;
  size_t size_;
  void* slot_;
};

}  // namespace lakerun::rdzv
