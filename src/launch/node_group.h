// The node agents of one job: how the launchers of several nodes agree on the world, watch each other and end or
// restart the job together (docs/launch.md, "Many nodes").
//
// Every agent talks to the authenticated store that node 0's agent hosts, under the prefix "lakerun/agent/":
//   job                 node 0's registration, written before anyone can join: the job's --rdzv-id, --nnodes and
//                       --nproc-per-node, against which every other agent checks its own (a mismatch is refused)
//   node/K              agent K's registration (CompareSet: a second agent with the same --node-rank is refused)
//   heartbeat/K         a counter agent K bumps every heartbeat period, then a newline and what it last shared of
//                       its ranks' progress (ShareProgress); node 0's agent reads them all (lost agents, hangs)
//   attempt/A/ready/K   agent K is ready to start attempt A: the ranks start once every agent is
//   attempt/A/failure   the first failure of attempt A (NodeFailure::Encode; CompareSet, the first one wins)
//   attempt/A/done/K    every rank of node K exited 0 in attempt A
//   left/K              agent K is leaving; node 0 keeps the store up until every agent left or was lost
// Global ranks are numbered in node order: node K's local rank L is K * nproc + L.
//
// A watcher thread bumps the heartbeat, reads the current attempt's failure key, checks the others' heartbeats (node
// 0 only) and publishes this node's failure, every poll period. The supervision loop only reads what it found (Failure()), so
// no store round-trip ever blocks it. An agent whose heartbeat stops is lost within heartbeat_timeout of its last
// one; a store that fails, or does not answer for that long, is node 0 lost.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lakerun/launch/launcher.h"
#include "lakerun/rdzv/store.h"
#include "launch/node_failure.h"

namespace lakerun::launch::internal {

struct NodeGroupOptions {
  int nnodes = 1;
  /// kNodeRankAtRendezvous: claimed when joining (node_rank() says which).
  int node_rank = 0;
  /// Ranks on this node (--nproc-per-node): the same on every node.
  int nproc = 1;
  std::string rdzv_id;
  /// Where the store is, for messages ("host:port").
  std::string store_address;
  std::chrono::milliseconds join_timeout{std::chrono::seconds(300)};
  std::chrono::milliseconds heartbeat_timeout{std::chrono::seconds(15)};
};

class NodeGroup {
 public:
  /// Registers this agent in `store` (node 0: its own server; else a client of it) and waits up to join_timeout
  /// for every agent. Throws ConfigError when this agent does not belong to the job there (another --rdzv-id,
  /// --nnodes or --nproc-per-node; its --node-rank already taken), naming both sides; CommTimeout naming the nodes
  /// that did not join. `store` outlives the group.
  NodeGroup(const NodeGroupOptions& options, rdzv::Store& store);
  /// Stops the watcher (bounded by the store's reply timeout when the store stopped answering).
  ~NodeGroup();
  NodeGroup(const NodeGroup&) = delete;
  NodeGroup& operator=(const NodeGroup&) = delete;

  int first_rank() const { return options_.node_rank * options_.nproc; }
  int world_size() const { return options_.nnodes * options_.nproc; }
  const std::string& host() const { return host_; }
  /// Node `node`'s host, as its agent registered it.
  const std::string& host_of(int node) const { return hosts_[static_cast<size_t>(node)]; }
  int node_rank() const { return options_.node_rank; }

  /// Waits (bounded by join_timeout) until every agent is ready to start `attempt`. Returns a failure instead when
  /// one is known meanwhile (an agent lost), or `interrupted()` returns true (it is polled).
  std::optional<NodeFailure> BeginAttempt(int attempt, const std::function<bool()>& interrupted);
  /// The current attempt's failure as this agent knows it now (published by any agent, or an agent or the store
  /// lost). Never blocks.
  std::optional<NodeFailure> Failure();
  /// Publishes a failure of the current attempt (asynchronously; the first one published wins): this node's, or on
  /// node 0 a hang it found on another node.
  void Publish(const NodeFailure& failure);
  /// The failure every agent reports for the current attempt: the published one, once this agent's own is out
  /// (waited for up to heartbeat_timeout), else what this agent knows.
  std::optional<NodeFailure> AgreedFailure();
  /// This node's ranks all exited 0: waits until every node's did (nullopt) or a failure is known, polling
  /// `interrupted()`. Bounded by the heartbeats: a lost agent is a failure.
  std::optional<NodeFailure> FinishAttempt(const std::function<bool()>& interrupted);
  /// What this agent's next heartbeats carry of its ranks' progress (launch/hang_judge.h's encoding).
  void ShareProgress(std::string progress);
  /// What the other agents' last heartbeats carried (this node's not included), each with the time since this agent
  /// read it: the progress it describes is at least that much older now. Node 0 only (the others read no
  /// heartbeats): empty elsewhere.
  std::vector<std::pair<std::string, std::chrono::milliseconds>> PeerProgress();
  /// This agent leaves the job. Node 0 keeps the store up until every other agent left or was lost.
  void Leave();

 private:
  std::string Key(const std::string& suffix) const;
  std::string AttemptKey(const std::string& suffix) const;
  void Register();
  int ClaimNodeRank(const std::string& registration);
  void AwaitNodes();
  void Watch();
  void WatchOnce();
  void CheckHeartbeats();
  std::optional<NodeFailure> LostStore();
  NodeFailure LostAgent(int node, const std::string& cause) const;

  NodeGroupOptions options_;
  rdzv::Store& store_;
  std::string host_;
  std::vector<std::string> hosts_;  // every node's host, by node
  std::vector<int> pids_;           // every node's agent pid, by node

  using Clock = std::chrono::steady_clock;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  int attempt_ = 0;
  std::optional<NodeFailure> failure_;    // this attempt's, as read from the store
  std::optional<NodeFailure> lost_;       // an agent found lost (any attempt: it does not come back)
  std::optional<NodeFailure> pending_;    // to publish
  bool published_ = false;                // pending_ went out
  Clock::time_point last_answer_;         // the store's last answer
  std::string store_error_;               // the store's last error, if it failed
  std::vector<std::string> beats_;        // the others' last heartbeat values
  std::string progress_;                  // this node's, for its heartbeats
  std::vector<Clock::time_point> beat_changed_;
  std::vector<bool> left_;
  int64_t beat_ = 0;
  std::thread watcher_;
};

}  // namespace lakerun::launch::internal
