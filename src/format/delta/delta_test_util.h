// Test helpers: hand-written Delta logs, as PROTOCOL.md shows them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lakerun::delta::testing {

/// Writes `_delta_log/<version>.json` under `table` with one action per line.
void WriteCommit(const std::string& table, int64_t version, const std::vector<std::string>& lines);
/// Sets a file's modification time (ms since the epoch).
void SetMtime(const std::string& path, int64_t mtime_ms);

/// {"protocol":{...}} with the given versions and optional features (JSON arrays, e.g. R"(["deletionVectors"])").
std::string ProtocolLine(int reader, int writer, const std::string& reader_features = "",
                         const std::string& writer_features = "");
/// {"metaData":{...}} for `schema_json` (a struct JSON), partition columns (JSON array) and configuration (object).
std::string MetadataLine(const std::string& schema_json, const std::string& partition_columns = "[]",
                         const std::string& configuration = "{}");
/// {"add":{...}} with optional partition values object, stats JSON (escaped into a string) and DV object.
std::string AddLine(const std::string& path, const std::string& partition_values = "{}", const std::string& stats = "",
                    const std::string& deletion_vector = "");
std::string RemoveLine(const std::string& path, const std::string& deletion_vector = "");
std::string CommitInfoLine(int64_t timestamp, const std::string& operation, int64_t in_commit_timestamp = -1);

/// A two-column schema: id long, value string, plus any extra fields JSON (comma-prefixed).
std::string SimpleSchema(const std::string& extra_fields = "");

}  // namespace lakerun::delta::testing
