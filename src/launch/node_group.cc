#include "launch/node_group.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "lakerun/base/error.h"
#include "launch/wording.h"

namespace lakerun::launch::internal {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How often the watcher reads the current attempt's failure key: a failure anywhere stops every node within about
// this much more than the time its agent takes to notice it.
constexpr milliseconds kFailurePoll{200};
// Main-thread waits poll this often.
constexpr milliseconds kWaitPoll{50};

// An agent's registration: "nnodes\nnproc\npid\nhost\nrdzv_id" (the id last: it may hold anything).
struct Registration {
  int nnodes = 0;
  int nproc = 0;
  int pid = 0;
  std::string host;
  std::string rdzv_id;

  std::string Encode() const {
    return std::to_string(nnodes) + "\n" + std::to_string(nproc) + "\n" + std::to_string(pid) + "\n" + host + "\n" +
           rdzv_id;
  }
  static Registration Decode(const std::string& value, const std::string& where) {
    Registration r;
    size_t start = 0;
    std::string fields[4];
    for (auto& field : fields) {
      const size_t end = value.find('\n', start);
      LAKERUN_CHECK_AS(DistError, end != std::string::npos, "launch: ", where,
                       " is not a lakerun node agent's registration (is the store another program's?)");
      field = value.substr(start, end - start);
      start = end + 1;
    }
    r.nnodes = std::atoi(fields[0].c_str());
    r.nproc = std::atoi(fields[1].c_str());
    r.pid = std::atoi(fields[2].c_str());
    r.host = fields[3];
    r.rdzv_id = value.substr(start);
    return r;
  }
  // "node 1 (host2, pid 77)"
  std::string Name(int node) const {
    return "node " + std::to_string(node) + " (" + host + ", pid " + std::to_string(pid) + ")";
  }
};

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name)) != 0) return "unknown host";
  return name;
}

milliseconds HeartbeatPeriod(milliseconds timeout) {
  return std::max(milliseconds(20), std::min(milliseconds(1000), timeout / 10));
}

}  // namespace

NodeGroup::NodeGroup(const NodeGroupOptions& options, rdzv::Store& store)
    : options_(options), store_(store), host_(HostName()) {
  Register();
  AwaitNodes();
  const Clock::time_point now = Clock::now();
  last_answer_ = now;
  beats_.assign(options_.nnodes, "");
  beat_changed_.assign(options_.nnodes, now);
  left_.assign(options_.nnodes, false);
  watcher_ = std::thread([this] { Watch(); });
}

NodeGroup::~NodeGroup() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

std::string NodeGroup::Key(const std::string& suffix) const { return "lakerun/agent/" + suffix; }

// The next free node rank from 1 on, in the order agents ask (a counter in the store); one a node took with an
// explicit --node-rank is skipped. Refused once every rank is taken.
int NodeGroup::ClaimNodeRank(const std::string& registration) {
  for (;;) {
    const int64_t k = store_.Add(Key("next_node"), 1);
    LAKERUN_CHECK_AS(ConfigError, k < options_.nnodes, "launch: the job at ", options_.store_address,
                     " already has its ", options_.nnodes, " nodes (--nnodes ", options_.nnodes,
                     "); this agent (", host_, ", pid ", ::getpid(), ") is one too many");
    if (store_.CompareSet(Key("node/" + std::to_string(k)), "", registration) == registration) {
      return static_cast<int>(k);
    }
  }
}

std::string NodeGroup::AttemptKey(const std::string& suffix) const {
  return Key("attempt/" + std::to_string(attempt_) + "/" + suffix);
}

// Node 0 writes the job's registration before anyone can join; every other agent checks its own against it, then
// claims its node rank.
void NodeGroup::Register() {
  Registration mine{options_.nnodes, options_.nproc, static_cast<int>(::getpid()), host_, options_.rdzv_id};
  const bool assigned = options_.node_rank == kNodeRankAtRendezvous;
  const int k = assigned ? 1 : options_.node_rank;  // for the messages until the claim below
  const std::string at = " at " + options_.store_address;
  if (k == 0) {
    store_.Set(Key("job"), mine.Encode());
  } else {
    std::string job;
    try {
      job = store_.Get(Key("job"), options_.join_timeout);
    } catch (const CommTimeout&) {
      LAKERUN_THROW(CommTimeout, "launch: node ", k, ": no job registered", at, " within ",
                    Seconds(options_.join_timeout), " (node 0's agent should write it as soon as it starts)");
    }
    const Registration zero = Registration::Decode(job, "the job's registration" + at);
    const std::string me = assigned ? "an agent without --node-rank (" + host_ + ", pid " +
                                          std::to_string(mine.pid) + ")"
                                    : mine.Name(k);
    const std::string both = ": this is " + me + ", the job" + at + " is hosted by " + zero.Name(0);
    LAKERUN_CHECK_AS(ConfigError, zero.rdzv_id == mine.rdzv_id, "launch: refusing to join another job: --rdzv-id '",
                     mine.rdzv_id, "' here, '", zero.rdzv_id, "' there", both);
    LAKERUN_CHECK_AS(ConfigError, zero.nnodes == mine.nnodes, "launch: --nnodes ", mine.nnodes, " here, ",
                     zero.nnodes, " on node 0", both);
    LAKERUN_CHECK_AS(ConfigError, zero.nproc == mine.nproc, "launch: --nproc-per-node ", mine.nproc, " here, ",
                     zero.nproc, " on node 0 (every node must start the same number of ranks)", both);
  }
  const std::string value = mine.Encode();
  if (assigned) {
    options_.node_rank = ClaimNodeRank(value);
    return;
  }
  const std::string holder = store_.CompareSet(Key("node/" + std::to_string(k)), "", value);
  if (holder != value) {
    const Registration other = Registration::Decode(holder, "node " + std::to_string(k) + "'s registration" + at);
    LAKERUN_THROW(ConfigError, "launch: --node-rank ", k, " is taken: the job", at, " already has ", other.Name(k),
                  ", and this is ", mine.Name(k), "; give every node its own --node-rank, 0..", options_.nnodes - 1);
  }
}

// Polls every node's registration until all are there (bounded by join_timeout).
void NodeGroup::AwaitNodes() {
  const Clock::time_point deadline = Clock::now() + options_.join_timeout;
  hosts_.assign(options_.nnodes, "");
  pids_.assign(options_.nnodes, 0);
  std::vector<bool> seen(options_.nnodes, false);
  while (true) {
    int missing = 0;
    for (int j = 0; j < options_.nnodes; ++j) {
      if (seen[j]) continue;
      const std::string key = Key("node/" + std::to_string(j));
      if (std::optional<std::string> value = store_.TryGet(key)) {
        const Registration r = Registration::Decode(*value, key);
        hosts_[j] = r.host;
        pids_[j] = r.pid;
        seen[j] = true;
      } else {
        ++missing;
      }
    }
    if (missing == 0) return;
    if (Clock::now() >= deadline) {
      std::string names;
      for (int j = 0; j < options_.nnodes; ++j) {
        if (!seen[j]) names += (names.empty() ? "" : ", ") + std::to_string(j);
      }
      LAKERUN_THROW(CommTimeout, "launch: node ", options_.node_rank, ": only ", options_.nnodes - missing, " of ",
                    options_.nnodes, " nodes joined the job at ", options_.store_address, " within ",
                    Seconds(options_.join_timeout), "; missing node", missing == 1 ? " " : "s ", names,
                    " (--join-timeout)");
    }
    std::this_thread::sleep_for(kWaitPoll);
  }
}

NodeFailure NodeGroup::LostAgent(int node, const std::string& cause) const {
  NodeFailure failure;
  failure.node = node;
  failure.host = hosts_[node];
  failure.pid = pids_[node];
  failure.cause = cause;
  failure.exit_code = 1;
  return failure;
}

// Node 0 lost, as seen from another node: its store failed, or has not answered for heartbeat_timeout. Under mu_.
std::optional<NodeFailure> NodeGroup::LostStore() {
  if (options_.node_rank == 0) return std::nullopt;
  if (!store_error_.empty()) {
    return LostAgent(0, "is gone: the store it hosts at " + options_.store_address + " failed (" + store_error_ + ")");
  }
  // The watcher's rounds come every kFailurePoll: silent for heartbeat_timeout at the latest when this fires.
  const auto silent = std::chrono::duration_cast<milliseconds>(Clock::now() - last_answer_);
  const milliseconds round = std::min(kFailurePoll, options_.heartbeat_timeout / 2);
  if (silent <= options_.heartbeat_timeout - round) return std::nullopt;
  return LostAgent(0, "is lost: the store it hosts at " + options_.store_address + " has not answered for " +
                          Seconds(silent) + " (host down or unreachable?)");
}

void NodeGroup::Watch() {
  Clock::time_point next_beat = Clock::now();
  const milliseconds beat_period = HeartbeatPeriod(options_.heartbeat_timeout);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const bool beat = Clock::now() >= next_beat;
    if (beat) next_beat = Clock::now() + beat_period;
    lock.unlock();
    try {
      WatchOnce();
      if (beat) {
        std::string value = std::to_string(++beat_) + "\n";
        {
          std::lock_guard<std::mutex> progress_lock(mu_);
          value += progress_;
        }
        store_.Set(Key("heartbeat/" + std::to_string(options_.node_rank)), value);
        CheckHeartbeats();
      }
      lock.lock();
      last_answer_ = Clock::now();
    } catch (const std::exception& e) {
      lock.lock();
      store_error_ = e.what();
    }
    wake_.wait_for(lock, std::min(kFailurePoll, beat_period), [this] { return stop_; });
  }
}

// Publishes this node's failure, if one waits, and reads the attempt's failure key.
void NodeGroup::WatchOnce() {
  std::optional<NodeFailure> pending;
  std::string key;
  int attempt;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!published_) pending = pending_;
    if (!pending && lost_ && !failure_) pending = lost_;  // every agent agrees on a lost one through the store
    key = AttemptKey("failure");
    attempt = attempt_;
  }
  if (pending) store_.CompareSet(key, "", pending->Encode());
  const std::optional<std::string> value = store_.TryGet(key);
  std::lock_guard<std::mutex> lock(mu_);
  if (attempt != attempt_) return;
  if (pending && pending_ && pending->Encode() == pending_->Encode()) published_ = true;
  if (value && !failure_) failure_ = NodeFailure::Decode(*value);
}

// Node 0 reads the other agents' heartbeats; one unchanged for heartbeat_timeout, whose agent did not leave, is lost
// (and published as the attempt's failure, so every agent learns it). The others read none: node 0 lost shows as its
// store gone silent (LostStore). So the store serves nnodes - 1 heartbeat reads a period, not nnodes squared.
void NodeGroup::CheckHeartbeats() {
  if (options_.node_rank != 0) return;
  for (int j = 1; j < options_.nnodes; ++j) {
    if (j == options_.node_rank) continue;
    const std::optional<std::string> beat = store_.TryGet(Key("heartbeat/" + std::to_string(j)));
    const bool gone_quiet = [&] {
      std::lock_guard<std::mutex> lock(mu_);
      if (left_[j] || (lost_ && lost_->node == j)) return false;
      if (beat && *beat != beats_[j]) {
        beats_[j] = *beat;
        beat_changed_[j] = Clock::now();
        return false;
      }
      // Seen at most a period late (the last check came before this one): lost within heartbeat_timeout of the
      // agent's last heartbeat.
      return Clock::now() - beat_changed_[j] > options_.heartbeat_timeout - HeartbeatPeriod(options_.heartbeat_timeout);
    }();
    if (!gone_quiet) continue;
    const bool left = store_.TryGet(Key("left/" + std::to_string(j))).has_value();
    std::lock_guard<std::mutex> lock(mu_);
    if (left) {
      left_[j] = true;
    } else if (!lost_) {
      const auto quiet = std::chrono::duration_cast<milliseconds>(Clock::now() - beat_changed_[j]);
      lost_ = LostAgent(j, "is lost: no heartbeat for " + Seconds(quiet) + " (--heartbeat-timeout " +
                               Seconds(options_.heartbeat_timeout) + "; killed, or its host is down?)");
    }
  }
}

void NodeGroup::ShareProgress(std::string progress) {
  std::lock_guard<std::mutex> lock(mu_);
  progress_ = std::move(progress);
}

std::vector<std::pair<std::string, milliseconds>> NodeGroup::PeerProgress() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, milliseconds>> progress;
  const Clock::time_point now = Clock::now();
  for (size_t j = 0; j < beats_.size(); ++j) {
    const size_t newline = beats_[j].find('\n');
    if (newline == std::string::npos) continue;
    progress.emplace_back(beats_[j].substr(newline + 1),
                          std::chrono::duration_cast<milliseconds>(now - beat_changed_[j]));
  }
  return progress;
}

std::optional<NodeFailure> NodeGroup::Failure() {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_) return failure_;
  if (lost_) return lost_;
  return LostStore();
}

void NodeGroup::Publish(const NodeFailure& failure) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_) return;
    pending_ = failure;
    published_ = false;
  }
  wake_.notify_all();
}

std::optional<NodeFailure> NodeGroup::AgreedFailure() {
  const Clock::time_point deadline = Clock::now() + options_.heartbeat_timeout;
  while (Clock::now() < deadline) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (failure_) return failure_;
      if (std::optional<NodeFailure> lost = LostStore()) return lost;
      if (!pending_ && !lost_) return std::nullopt;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  // The store did not take this agent's failure in time (it stopped answering): report what this agent knows.
  if (std::optional<NodeFailure> known = Failure()) return known;
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

std::optional<NodeFailure> NodeGroup::BeginAttempt(int attempt, const std::function<bool()>& interrupted) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    attempt_ = attempt;
    failure_.reset();
    pending_.reset();
    published_ = false;
  }
  const Clock::time_point deadline = Clock::now() + options_.join_timeout;
  std::vector<std::string> keys;
  for (int j = 0; j < options_.nnodes; ++j) keys.push_back(AttemptKey("ready/" + std::to_string(j)));
  store_.Set(keys[options_.node_rank], "1");
  while (!store_.Check(keys)) {
    if (std::optional<NodeFailure> failure = Failure()) return failure;
    if (interrupted()) return std::nullopt;
    LAKERUN_CHECK_AS(CommTimeout, Clock::now() < deadline, "launch: node ", options_.node_rank, ": not every node ",
                     "was ready to start attempt ", attempt, " within ", Seconds(options_.join_timeout),
                     " (--join-timeout)");
    std::this_thread::sleep_for(kWaitPoll);
  }
  return std::nullopt;
}

std::optional<NodeFailure> NodeGroup::FinishAttempt(const std::function<bool()>& interrupted) {
  std::vector<std::string> keys;
  for (int j = 0; j < options_.nnodes; ++j) keys.push_back(AttemptKey("done/" + std::to_string(j)));
  try {
    store_.Set(keys[options_.node_rank], "1");
    while (!store_.Check(keys)) {
      if (std::optional<NodeFailure> failure = Failure()) return failure;
      if (interrupted()) return std::nullopt;
      std::this_thread::sleep_for(kWaitPoll);
    }
  } catch (const DistError&) {
    // The store failed: node 0 is gone (the watcher names it).
    return AgreedFailure();
  }
  return std::nullopt;
}

void NodeGroup::Leave() {
  const int k = options_.node_rank;
  try {
    store_.Set(Key("left/" + std::to_string(k)), "1");
  } catch (const DistError&) {
    return;  // node 0 is gone: nobody to tell
  }
  if (k != 0) return;
  // Node 0 hosts the store: the others still read the job's outcome from it. Bounded: an agent that neither left
  // nor heartbeats is lost within heartbeat_timeout.
  const Clock::time_point deadline = Clock::now() + 2 * options_.heartbeat_timeout;
  for (int j = 1; j < options_.nnodes && Clock::now() < deadline; ++j) {
    while (!store_.TryGet(Key("left/" + std::to_string(j))) && Clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (Clock::now() - beat_changed_[j] > options_.heartbeat_timeout) break;
      }
      std::this_thread::sleep_for(kWaitPoll);
    }
  }
}

}  // namespace lakerun::launch::internal
