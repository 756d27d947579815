#include "launch/hang_watch.h"

#include <unistd.h>

#include "launch/proc_inspect.h"

namespace lakerun::launch::internal {
namespace {

// How often the agent looks at its ranks: a verdict comes at most this late (plus the heartbeat period across
// nodes). Each look reads one board slot and one /proc/PID/stat per local rank.
constexpr std::chrono::milliseconds kSamplePeriod{1000};
// CPU use over a period that counts as work (a rank blocked in a collective, or idle in user code, uses far less:
// Gloo's event loop wakes every 10 ms).
constexpr int kWorkingPermille = 50;

}  // namespace

HangWatch::HangWatch(const HangWatchOptions& options) : options_(options) {
  if (options_.timeout.count() > 0) board_ = std::make_unique<rdzv::ProgressBoard>(options_.local_ranks);
}

std::map<std::string, std::string> HangWatch::RankEnvironment(int local_rank) const {
  if (!board_) return {{rdzv::kProgressBoardEnv, ""}};
  return {{rdzv::kProgressBoardEnv, board_->Location()}, {rdzv::kProgressSlotEnv, std::to_string(local_rank)}};
}

void HangWatch::BeginAttempt() {
  if (board_) board_->Clear();
  observed_at_.reset();
  cpu_ticks_.assign(static_cast<size_t>(options_.local_ranks), -1);
  io_bytes_.assign(static_cast<size_t>(options_.local_ranks), -1);
  worked_at_.assign(static_cast<size_t>(options_.local_ranks), Clock::now());
}

bool HangWatch::Due() const { return enabled() && (!observed_at_ || Clock::now() - *observed_at_ >= kSamplePeriod); }

std::vector<RankObservation> HangWatch::Observe(const std::vector<LocalRank>& ranks) {
  const Clock::time_point now = Clock::now();
  const double seconds = observed_at_ ? std::chrono::duration<double>(now - *observed_at_).count() : 0;
  static const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  std::vector<RankObservation> observations;
  for (int local = 0; local < static_cast<int>(ranks.size()) && board_; ++local) {
    RankObservation r;
    r.rank = options_.first_rank + local;
    r.node = options_.node;
    r.pid = ranks[local].pid;
    r.progress = board_->Read(local);
    const ProcessSample sample = ranks[local].exited ? ProcessSample{} : SampleProcess(r.pid);
    r.state = ranks[local].exited ? ProcessState::kExited : sample.state;
    const auto i = static_cast<size_t>(local);
    if (cpu_ticks_[i] >= 0 && sample.cpu_ticks >= 0 && seconds > 0 && ticks_per_second > 0) {
      r.cpu_permille = static_cast<int>(1000.0 * static_cast<double>(sample.cpu_ticks - cpu_ticks_[i]) /
                                        (seconds * static_cast<double>(ticks_per_second)));
    }
    const bool io = io_bytes_[i] >= 0 && sample.io_bytes > io_bytes_[i];
    if (r.cpu_permille >= kWorkingPermille || io) worked_at_[i] = now;
    if (sample.cpu_ticks >= 0) r.idle = std::chrono::duration_cast<std::chrono::milliseconds>(now - worked_at_[i]);
    cpu_ticks_[i] = sample.cpu_ticks;
    io_bytes_[i] = sample.io_bytes;
    observations.push_back(r);
  }
  observed_at_ = now;
  return observations;
}

}  // namespace lakerun::launch::internal
