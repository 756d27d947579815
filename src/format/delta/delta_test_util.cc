#include "format/delta/delta_test_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <utime.h>

#include <nlohmann/json.hpp>

#include "format/delta/log_files.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"

namespace lakerun::delta::testing {

void WriteCommit(const std::string& table, int64_t version, const std::vector<std::string>& lines) {
  auto& fs = LocalFileSystem();
  fs.CreateDirs(JoinPath(table, "_delta_log"));
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  fs.WriteAtomically(JoinPath(JoinPath(table, "_delta_log"), internal::VersionPrefix(version) + ".json"), text);
}

void SetMtime(const std::string& path, int64_t mtime_ms) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = mtime_ms / 1000;
  times[0].tv_nsec = times[1].tv_nsec = (mtime_ms % 1000) * 1000000;
  LAKERUN_CHECK_AS(IoError, ::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0, "cannot set mtime of ", path);
}

std::string ProtocolLine(int reader, int writer, const std::string& reader_features,
                         const std::string& writer_features) {
  std::string out = StrCat(R"({"protocol":{"minReaderVersion":)", reader, R"(,"minWriterVersion":)", writer);
  if (!reader_features.empty()) out += R"(,"readerFeatures":)" + reader_features;
  if (!writer_features.empty()) out += R"(,"writerFeatures":)" + writer_features;
  return out + "}}";
}

std::string MetadataLine(const std::string& schema_json, const std::string& partition_columns,
                         const std::string& configuration) {
  return StrCat(R"({"metaData":{"id":"af23c9d7-fff1-4a5a-a2c8-55c59bd782aa","format":{"provider":"parquet","options":{}},)",
                R"("schemaString":)", nlohmann::json(schema_json).dump(), R"(,"partitionColumns":)",
                partition_columns, R"(,"configuration":)", configuration, R"(,"createdTime":1512909768000}})");
}

std::string AddLine(const std::string& path, const std::string& partition_values, const std::string& stats,
                    const std::string& deletion_vector) {
  std::string out = StrCat(R"({"add":{"path":)", nlohmann::json(path).dump(), R"(,"partitionValues":)",
                           partition_values, R"(,"size":841454,"modificationTime":1512909768000,"dataChange":true)");
  if (!stats.empty()) out += R"(,"stats":)" + nlohmann::json(stats).dump();
  if (!deletion_vector.empty()) out += R"(,"deletionVector":)" + deletion_vector;
  return out + "}}";
}

std::string RemoveLine(const std::string& path, const std::string& deletion_vector) {
  std::string out = StrCat(R"({"remove":{"path":)", nlohmann::json(path).dump(),
                           R"(,"deletionTimestamp":1515488792485,"dataChange":true)");
  if (!deletion_vector.empty()) out += R"(,"deletionVector":)" + deletion_vector;
  return out + "}}";
}

std::string CommitInfoLine(int64_t timestamp, const std::string& operation, int64_t in_commit_timestamp) {
  std::string out = StrCat(R"({"commitInfo":{"timestamp":)", timestamp, R"(,"operation":)",
                           nlohmann::json(operation).dump());
  if (in_commit_timestamp >= 0) out += StrCat(R"(,"inCommitTimestamp":)", in_commit_timestamp);
  return out + "}}";
}

std::string SimpleSchema(const std::string& extra_fields) {
  return R"({"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},)"
         R"({"name":"value","type":"string","nullable":true,"metadata":{}})" +
         extra_fields + "]}";
}

}  // namespace lakerun::delta::testing
