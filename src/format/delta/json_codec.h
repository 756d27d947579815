// Private: Delta actions to and from JSON (nlohmann). Commit files, JSON checkpoints and the Parquet checkpoint
// rows (converted to JSON objects first) all go through ParseActionInto, so there is one parser for every source.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lakerun/format/delta/actions.h"

namespace lakerun::delta::internal {

/// Adds the action in `line` (one JSON object such as {"add":{...}}) to `out`. Unknown actions are ignored.
/// `context` names the table, version and file for errors (CorruptDataError).
void ParseActionInto(const nlohmann::json& line, ActionSet* out, const std::string& context);
/// Parses newline-delimited JSON actions (a commit file or a JSON v2 checkpoint). Errors name the line number.
ActionSet ParseActionLines(std::string_view text, const std::string& context);

nlohmann::json ToJson(const Protocol& p);
nlohmann::json ToJson(const Metadata& m);
nlohmann::json ToJson(const AddFile& a);
nlohmann::json ToJson(const RemoveFile& r);
nlohmann::json ToJson(const Txn& t);
nlohmann::json ToJson(const DeletionVectorDescriptor& dv);
nlohmann::json ToJson(const DomainMetadata& d);

/// One JSON line per action; commitInfo first, then protocol, metaData, txn, domainMetadata, remove, add.
std::string SerializeCommit(const ActionSet& actions);

}  // namespace lakerun::delta::internal
