// Private: action reconciliation (PROTOCOL.md, "Action Reconciliation") over checkpoints and commits.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lakerun/format/delta/actions.h"
#include "lakerun/format/delta/snapshot.h"

namespace lakerun::delta::internal {

class StateBuilder {
 public:
  StateBuilder() = default;
  /// Starts from an existing snapshot's state.
  explicit StateBuilder(const Snapshot& base);

  /// Applies the actions of one commit (or a checkpoint) on top of the current state, moving its file actions in.
  /// `context` names the table, version and file for errors.
  void Apply(ActionSet actions, const std::string& context);

  bool has_protocol() const { return protocol_.has_value(); }
  bool has_metadata() const { return metadata_.has_value(); }
  const std::optional<Protocol>& protocol() const { return protocol_; }
  const std::optional<Metadata>& metadata() const { return metadata_; }

  /// Moves the state into `out` (files and tombstones sorted by key), leaving this builder empty. Throws
  /// CorruptDataError (naming `context`) when the log never set a protocol or metaData.
  void Finish(Snapshot* out, const std::string& context);

 private:
  using FileKey = std::pair<std::string, std::string>;  // (decoded path, deletion vector unique id)
  struct FileKeyHash {
    size_t operator()(const FileKey& key) const;
  };
  template <typename Action>
  using FileMap = std::unordered_map<FileKey, Action, FileKeyHash>;

  static FileKey KeyOf(const std::string& path, const std::optional<DeletionVectorDescriptor>& dv,
                       const std::string& context);
  /// The actions of `map` sorted by key, moved out.
  template <typename Action>
  static std::vector<Action> SortedByKey(FileMap<Action>* map);

  std::optional<Protocol> protocol_;
  std::optional<Metadata> metadata_;
  FileMap<AddFile> adds_;  // hashed: replay does one lookup per action; Finish sorts once
  FileMap<RemoveFile> removes_;
  std::map<std::string, int64_t> txns_;
  std::map<std::string, DomainMetadata> domains_;
};

}  // namespace lakerun::delta::internal
