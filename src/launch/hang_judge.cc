#include "launch/hang_judge.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <tuple>

#include "launch/wording.h"

namespace lakerun::launch::internal {
namespace {

using std::chrono::milliseconds;

constexpr char kStateLetters[] = "?RSDTtZX";  // by ProcessState

char StateLetter(ProcessState state) { return kStateLetters[static_cast<int>(state)]; }

ProcessState StateOfLetter(char letter) {
  const char* found = std::strchr(kStateLetters, letter);
  return found == nullptr || letter == '\0' ? ProcessState::kUnknown
                                            : static_cast<ProcessState>(found - kStateLetters);
}

std::string CollectiveText(uint64_t number, rdzv::Collective kind) {
  return "collective #" + std::to_string(number) + " (" + rdzv::CollectiveName(kind) + ")";
}

// The process cannot be making progress whatever its slot says.
bool Blocked(const RankObservation& r) {
  return r.state == ProcessState::kStopped || r.state == ProcessState::kTraced ||
         r.state == ProcessState::kDiskSleep || r.state == ProcessState::kExited;
}

bool Waiting(const RankObservation& r, milliseconds timeout) {
  return r.progress.reported && r.progress.in_collective && r.progress.quiet >= timeout;
}

// A live process that did work within `timeout`.
bool Worked(const RankObservation& r, milliseconds timeout) {
  const bool alive = r.state != ProcessState::kStopped && r.state != ProcessState::kTraced &&
                     r.state != ProcessState::kExited && r.state != ProcessState::kZombie;
  return alive && r.idle.count() >= 0 && r.idle < timeout;
}

// Holds the waiting ranks up: made no progress for `timeout` and is not in the collective with them (or is, but
// cannot move). A rank that never reported is one too: the others have waited `timeout` already.
bool Culprit(const RankObservation& r, uint64_t collective, milliseconds timeout, Working working) {
  if (working == Working::kIsProgress && Worked(r, timeout)) return false;
  if (!r.progress.reported) return true;
  if (r.progress.quiet < timeout) return false;
  return Blocked(r) || !r.progress.in_collective || r.progress.entered < collective;
}

std::string WhereItIs(const RankObservation& r, uint64_t collective) {
  const rdzv::RankProgress& p = r.progress;
  if (!p.reported) {
    return "it reported no progress (it is not past lakerun::dist::Init, or not a lakerun::dist program)";
  }
  if (p.in_collective && p.entered == collective) return "it is inside " + CollectiveText(p.entered, p.last) + " too";
  if (p.in_collective) return "it waits in " + CollectiveText(p.entered, p.last) + ", which the others have left";
  if (p.entered == 0) return "it has not entered any collective";
  return "it last entered " + CollectiveText(p.entered, p.last) + " and returned from it";
}

std::string WaitersText(const std::vector<RankObservation>& waiting, uint64_t collective, rdzv::Collective kind) {
  std::vector<int> ranks;
  milliseconds longest{0};
  for (const auto& w : waiting) {
    ranks.push_back(w.rank);
    longest = std::max(longest, w.progress.quiet);
  }
  const bool one = ranks.size() == 1;
  return std::string(one ? "rank " : "ranks ") + RankList(ranks) + (one ? " has" : " have") + " waited " +
         WholeSeconds(longest) + " in " + CollectiveText(collective, kind);
}

}  // namespace

std::string DescribeState(ProcessState state) {
  switch (state) {
    case ProcessState::kUnknown: return "in an unknown state";
    case ProcessState::kRunning: return "running";
    case ProcessState::kSleeping: return "sleeping";
    case ProcessState::kDiskSleep: return "in D state (uninterruptible sleep: waiting on I/O or the kernel)";
    case ProcessState::kStopped: return "stopped (SIGSTOP or SIGTSTP)";
    case ProcessState::kTraced: return "stopped by a debugger";
    case ProcessState::kZombie: return "a zombie";
    case ProcessState::kExited: return "gone: it exited while the others wait for it";
  }
  return "in an unknown state";
}

std::string EncodeObservations(const std::vector<RankObservation>& observations) {
  std::string text;
  for (const auto& r : observations) {
    const rdzv::RankProgress& p = r.progress;
    text += std::to_string(r.rank) + ' ' + std::to_string(r.node) + ' ' + std::to_string(r.pid) + ' ' +
            (p.reported ? '1' : '0') + ' ' + std::to_string(p.entered) + ' ' + (p.in_collective ? '1' : '0') + ' ' +
            std::to_string(static_cast<uint32_t>(p.last)) + ' ' + std::to_string(p.quiet.count()) + ' ' +
            StateLetter(r.state) + ' ' + std::to_string(r.cpu_permille) + ' ' + std::to_string(r.idle.count()) +
            '\n';
  }
  return text;
}

std::vector<RankObservation> DecodeObservations(const std::string& text) {
  std::vector<RankObservation> observations;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    RankObservation r;
    int reported = 0, in_collective = 0;
    uint32_t last = 0;
    int64_t quiet = 0, idle = -1;
    char state = '?';
    if (!(in >> r.rank >> r.node >> r.pid >> reported >> r.progress.entered >> in_collective >> last >> quiet >>
          state >> r.cpu_permille >> idle)) {
      continue;
    }
    r.progress.reported = reported != 0;
    r.progress.pid = r.pid;
    r.progress.in_collective = in_collective != 0;
    r.progress.last = static_cast<rdzv::Collective>(last);
    r.progress.quiet = milliseconds(quiet);
    r.state = StateOfLetter(state);
    r.idle = milliseconds(idle);
    observations.push_back(r);
  }
  return observations;
}

std::optional<HangVerdict> JudgeHang(const std::vector<RankObservation>& ranks, milliseconds timeout,
                                     Working working) {
  HangVerdict verdict;
  const RankObservation* longest = nullptr;
  for (const auto& r : ranks) {
    if (!Waiting(r, timeout)) continue;
    if (longest == nullptr || r.progress.quiet > longest->progress.quiet) longest = &r;
  }
  if (longest == nullptr) return std::nullopt;
  verdict.collective = longest->progress.entered;
  verdict.kind = longest->progress.last;
  for (const auto& r : ranks) {
    if (Culprit(r, verdict.collective, timeout, working)) {
      verdict.culprits.push_back(r);
    } else if (Waiting(r, timeout)) {
      verdict.waiting.push_back(r);
    }
  }
  if (verdict.culprits.empty() && verdict.waiting.size() != ranks.size()) return std::nullopt;  // some still move
  // Most likely first: a process that cannot move, then the one furthest behind.
  std::sort(verdict.culprits.begin(), verdict.culprits.end(), [](const RankObservation& a, const RankObservation& b) {
    return std::make_tuple(!Blocked(a), a.progress.reported, a.progress.entered, a.rank) <
           std::make_tuple(!Blocked(b), b.progress.reported, b.progress.entered, b.rank);
  });
  return verdict;
}

std::string HangVerdict::DescribeCulprit(const RankObservation& culprit) const {
  std::string state = DescribeState(culprit.state);
  if (culprit.state == ProcessState::kRunning && culprit.cpu_permille >= 0) {
    state += " (using " + std::to_string(culprit.cpu_permille / 10) + "% of a CPU)";
  }
  std::string text = "hangs the job: " + state;
  if (culprit.progress.reported) text += ", no progress for " + WholeSeconds(culprit.progress.quiet);
  text += "; " + WhereItIs(culprit, collective);
  if (!waiting.empty()) text += "; " + WaitersText(waiting, collective, kind);
  return text;
}

std::string HangVerdict::DescribeDeadlock(milliseconds timeout) const {
  return "hangs with every rank: all have waited at least " + WholeSeconds(timeout) + " in " +
         CollectiveText(collective, kind) + " and none is behind (is the network between them down?)";
}

std::string RankList(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    text += std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace lakerun::launch::internal
