// The process-wide context behind Init(): environment detection, store connection, process group.
#include <lakerun/base/error.h>
#include <lakerun/base/logging.h>
#include <lakerun/base/fork_point.h>

#include "dist/context_impl.h"
#include "dist/rank_env.h"
#include "dist/rendezvous.h"

#include <mutex>

namespace lakerun::dist {
namespace {

std::mutex& GlobalMutex() {
  static std::mutex mu;
  return mu;
}

std::unique_ptr<Context>& GlobalContext() {
  static std::unique_ptr<Context> ctx;
  return ctx;
}

}  // namespace

Context& Init(const InitOptions& options) {
  InitTimeline timeline;
  timeline.entered_ns = RealtimeNs();
  // Under `lakerun launch --start-method fork` this is where the ranks are forked from the template; elsewhere it
  // returns at once.
  ::lakerun::ForkPoint();
  timeline.forked_ns = RealtimeNs();
  std::lock_guard<std::mutex> lock(GlobalMutex());
  if (GlobalContext()) return *GlobalContext();
  RankEnv env = DetectRankEnv(ProcessEnvironment());
  if (!env.note.empty()) {
    LAKERUN_LOG(Info) << env.note;
  }
  compat::StorePtr store;
  if (env.world_size > 1) {
    store = ConnectStore(env, options.timeout);
    timeline.store_connected_ns = RealtimeNs();
  }
  GlobalContext() = CreateContext(env, std::move(store), options);
  InitTimeline& recorded = GlobalContext()->impl().timeline;
  recorded.entered_ns = timeline.entered_ns;
  recorded.forked_ns = timeline.forked_ns;
  recorded.store_connected_ns = timeline.store_connected_ns;
  LAKERUN_LOG(Debug) << "rank " << env.rank << " of " << env.world_size << " (local " << env.local_rank << " of "
                     << env.local_world_size << ", " << LauncherName(env.launcher) << ") joined via "
                     << GlobalContext()->master_endpoint() << ", backend " << ToString(GlobalContext()->backend());
  return *GlobalContext();
}

bool IsInitialized() {
  std::lock_guard<std::mutex> lock(GlobalMutex());
  return GlobalContext() != nullptr;
}

Context& CurrentContext() {
  std::lock_guard<std::mutex> lock(GlobalMutex());
  LAKERUN_CHECK_AS(DistError, GlobalContext() != nullptr, "lakerun::dist::Init() has not been called");
  return *GlobalContext();
}

void Shutdown() {
  std::lock_guard<std::mutex> lock(GlobalMutex());
  GlobalContext().reset();
}

}  // namespace lakerun::dist
