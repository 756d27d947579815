// Action reconciliation.
#include "format/delta/log_replay.h"

#include <algorithm>
#include <functional>

#include "format/delta/uri.h"
#include "lakerun/base/error.h"

namespace lakerun::delta::internal {

StateBuilder::StateBuilder(const Snapshot& base) : protocol_(base.protocol), metadata_(base.metadata) {
  const std::string context = base.Describe();
  for (const auto& a : base.files) adds_.emplace(KeyOf(a.path, a.deletion_vector, context), a);
  for (const auto& r : base.tombstones) removes_.emplace(KeyOf(r.path, r.deletion_vector, context), r);
  txns_ = base.app_versions;
  domains_ = base.domains;
}

size_t StateBuilder::FileKeyHash::operator()(const FileKey& key) const {
  const size_t h = std::hash<std::string>()(key.first);
  return key.second.empty() ? h : h ^ (std::hash<std::string>()(key.second) * 0x9e3779b97f4a7c15ull);
}

StateBuilder::FileKey StateBuilder::KeyOf(const std::string& path, const std::optional<DeletionVectorDescriptor>& dv,
                                          const std::string& context) {
  // "file:/t/a.parquet", "file:///t/a.parquet" and "/t/a.parquet" name one file: an add and a remove written in
  // different forms still cancel.
  std::string decoded = PercentDecode(path, context);
  if (decoded.rfind("file:", 0) == 0) decoded = UriToLocalPath(decoded, context);
  return {std::move(decoded), dv ? dv->UniqueId() : std::string()};
}

void StateBuilder::Apply(ActionSet actions, const std::string& context) {
  if (actions.protocol) protocol_ = std::move(actions.protocol);
  if (actions.metadata) metadata_ = std::move(actions.metadata);
  for (const auto& t : actions.txns) txns_[t.app_id] = t.version;
  for (auto& d : actions.domains) {
    if (d.removed) {
      domains_.erase(d.domain);
    } else {
      domains_[d.domain] = std::move(d);
    }
  }
  // Within one valid commit an (path, dv) key appears at most once per action type and never as both add and
  // remove, so the order of removes and adds inside a commit does not matter.
  adds_.reserve(adds_.size() + actions.adds.size());
  for (auto& r : actions.removes) {
    FileKey key = KeyOf(r.path, r.deletion_vector, context);
    adds_.erase(key);
    removes_.insert_or_assign(std::move(key), std::move(r));
  }
  for (auto& a : actions.adds) {
    FileKey key = KeyOf(a.path, a.deletion_vector, context);
    removes_.erase(key);
    adds_.insert_or_assign(std::move(key), std::move(a));
  }
}

template <typename Action>
std::vector<Action> StateBuilder::SortedByKey(FileMap<Action>* map) {
  std::vector<std::pair<const FileKey*, Action*>> order;
  order.reserve(map->size());
  for (auto& [key, action] : *map) order.emplace_back(&key, &action);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  std::vector<Action> out;
  out.reserve(order.size());
  for (auto& [key, action] : order) out.push_back(std::move(*action));
  map->clear();
  return out;
}

void StateBuilder::Finish(Snapshot* out, const std::string& context) {
  LAKERUN_CHECK_AS(CorruptDataError, protocol_.has_value(), context, ": the log has no protocol action");
  LAKERUN_CHECK_AS(CorruptDataError, metadata_.has_value(), context, ": the log has no metaData action");
  out->protocol = std::move(*protocol_);
  out->metadata = std::move(*metadata_);
  protocol_.reset();
  metadata_.reset();
  out->files = SortedByKey(&adds_);
  out->tombstones = SortedByKey(&removes_);
  out->app_versions = std::move(txns_);
  out->domains = std::move(domains_);
  txns_.clear();
  domains_.clear();
}

}  // namespace lakerun::delta::internal
