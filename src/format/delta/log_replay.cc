// Action reconciliation.
#include "format/delta/log_replay.h"

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

StateBuilder::FileKey StateBuilder::KeyOf(const std::string& path, const std::optional<DeletionVectorDescriptor>& dv,
                                          const std::string& context) {
  return {PercentDecode(path, context), dv ? dv->UniqueId() : std::string()};
}

void StateBuilder::Apply(const ActionSet& actions, const std::string& context) {
  if (actions.protocol) protocol_ = actions.protocol;
  if (actions.metadata) metadata_ = actions.metadata;
  for (const auto& t : actions.txns) txns_[t.app_id] = t.version;
  for (const auto& d : actions.domains) {
    if (d.removed) {
      domains_.erase(d.domain);
    } else {
      domains_[d.domain] = d;
    }
  }
  // Within one valid commit an (path, dv) key appears at most once per action type and never as both add and
  // remove, so the order of removes and adds inside a commit does not matter.
  for (const auto& r : actions.removes) {
    FileKey key = KeyOf(r.path, r.deletion_vector, context);
    adds_.erase(key);
    removes_[std::move(key)] = r;
  }
  for (const auto& a : actions.adds) {
    FileKey key = KeyOf(a.path, a.deletion_vector, context);
    removes_.erase(key);
    adds_[std::move(key)] = a;
  }
}

void StateBuilder::Finish(Snapshot* out, const std::string& context) {
  LAKERUN_CHECK_AS(CorruptDataError, protocol_.has_value(), context, ": the log has no protocol action");
  LAKERUN_CHECK_AS(CorruptDataError, metadata_.has_value(), context, ": the log has no metaData action");
  out->protocol = *protocol_;
  out->metadata = *metadata_;
  out->files.clear();
  out->files.reserve(adds_.size());
  for (auto& [key, add] : adds_) out->files.push_back(add);
  out->tombstones.clear();
  for (auto& [key, remove] : removes_) out->tombstones.push_back(remove);
  out->app_versions = txns_;
  out->domains = domains_;
}

}  // namespace lakerun::delta::internal
