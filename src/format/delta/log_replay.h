// Private: action reconciliation (PROTOCOL.md, "Action Reconciliation") over checkpoints and commits.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "lakerun/format/delta/actions.h"
#include "lakerun/format/delta/snapshot.h"

namespace lakerun::delta::internal {

class StateBuilder {
 public:
  StateBuilder() = default;
  /// Starts from an existing snapshot's state.
  explicit StateBuilder(const Snapshot& base);

  /// Applies the actions of one commit (or a checkpoint) on top of the current state. `context` names the table,
  /// version and file for errors.
  void Apply(const ActionSet& actions, const std::string& context);

  bool has_protocol() const { return protocol_.has_value(); }
  bool has_metadata() const { return metadata_.has_value(); }
  const std::optional<Protocol>& protocol() const { return protocol_; }
  const std::optional<Metadata>& metadata() const { return metadata_; }

  /// Moves the state into `out` (files sorted by key). Throws CorruptDataError (naming `context`) when the log
  /// never set a protocol or metaData.
  void Finish(Snapshot* out, const std::string& context);

 private:
  using FileKey = std::pair<std::string, std::string>;  // (decoded path, deletion vector unique id)
  static FileKey KeyOf(const std::string& path, const std::optional<DeletionVectorDescriptor>& dv,
                       const std::string& context);

  std::optional<Protocol> protocol_;
  std::optional<Metadata> metadata_;
  std::map<FileKey, AddFile> adds_;
  std::map<FileKey, RemoveFile> removes_;
  std::map<std::string, int64_t> txns_;
  std::map<std::string, DomainMetadata> domains_;
};

}  // namespace lakerun::delta::internal
