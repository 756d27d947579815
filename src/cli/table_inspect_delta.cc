// `lakerun table inspect` for Delta tables: version, protocol and features, schema, partitioning, configuration,
// files, checkpoints and recent history.
#include "cli/table_inspect_delta.h"

#include <ctime>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/format/delta/checkpoint.h"
#include "lakerun/format/delta/table.h"

namespace lakerun::cli {
namespace {

using nlohmann::ordered_json;
using namespace lakerun::delta;

constexpr size_t kHistoryShown = 10;

std::string IsoTime(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03lldZ", buf, static_cast<long long>(ms % 1000));
  return out;
}

std::string TypeText(const DataType& t) {
  switch (t.kind) {
    case TypeKind::kArray:
      return "array<" + TypeText(*t.element) + ">";
    case TypeKind::kMap:
      return "map<" + TypeText(*t.key) + "," + TypeText(*t.value) + ">";
    case TypeKind::kStruct: {
      std::string s = "struct<";
      for (size_t i = 0; i < t.fields.size(); ++i) {
        s += (i ? "," : "") + t.fields[i].name + ":" + TypeText(*t.fields[i].type);
      }
      return s + ">";
    }
    default:
      return TypeName(t);
  }
}

std::string ModeName(ColumnMappingMode m) {
  return m == ColumnMappingMode::kName ? "name" : m == ColumnMappingMode::kId ? "id" : "none";
}

std::string Join(const std::optional<std::vector<std::string>>& v) {
  if (!v || v->empty()) return "-";
  std::string s;
  for (const auto& x : *v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// `_last_checkpoint`, or why it could not be read. Readers list the log instead (DeltaTable::AtVersion), so a
// missing, empty or damaged one changes nothing but this line of the report.
struct LastCheckpointHint {
  std::optional<LastCheckpoint> value;
  std::optional<std::string> problem;
};

LastCheckpointHint ReadLastCheckpointHint(const DeltaTable& table) {
  try {
    return {ReadLastCheckpoint(table), std::nullopt};
  } catch (const Error& e) {
    return {std::nullopt, std::string(e.what())};
  }
}

// Data files the snapshot references that the file system lacks, or holds at another size than the log recorded.
struct FileProblems {
  std::vector<std::string> missing;
  std::vector<std::string> wrong_size;  // "<path> (<n> bytes, the log says <m>)"
  bool any() const { return !missing.empty() || !wrong_size.empty(); }
};

FileProblems CheckDataFiles(const DeltaTable& table, const Snapshot& s) {
  FileProblems problems;
  for (const AddFile& f : s.files) {
    const std::string file = s.DataFilePath(f);
    const std::optional<FileInfo> info = table.fs().Stat(file);
    if (!info) {
      problems.missing.push_back(file);
    } else if (f.size > 0 && static_cast<int64_t>(info->size) != f.size) {
      problems.wrong_size.push_back(file + " (" + std::to_string(info->size) + " bytes, the log says " +
                                    std::to_string(f.size) + ")");
    }
  }
  return problems;
}

constexpr size_t kProblemsShown = 10;

void PrintProblems(const std::string& what, const std::vector<std::string>& files, std::ostream& out) {
  if (files.empty()) return;
  out << "lakerun: error: " << files.size() << " data file" << (files.size() == 1 ? "" : "s") << " " << what << ":\n";
  for (size_t i = 0; i < files.size() && i < kProblemsShown; ++i) out << "  " << files[i] << "\n";
  if (files.size() > kProblemsShown) out << "  ... and " << files.size() - kProblemsShown << " more\n";
}

// Lists the problem files on `err` after the report on `out`; the exit code.
int ReportProblems(const FileProblems& problems, std::ostream& out, std::ostream& err) {
  out.flush();
  PrintProblems("the log references are missing", problems.missing, err);
  PrintProblems("differ in size from what the log recorded", problems.wrong_size, err);
  return problems.any() ? 1 : 0;
}

}  // namespace

int InspectDeltaTable(const std::string& path, const TimeTravel& travel, bool json, std::ostream& out,
                      std::ostream& err) {
  DeltaTable table(path);
  const Snapshot s = LoadSnapshot(table, travel);
  const FileProblems problems = CheckDataFiles(table, s);
  const std::vector<CommitRecord> history = table.History();
  const LastCheckpointHint hint = ReadLastCheckpointHint(table);
  const std::optional<LastCheckpoint>& last = hint.value;
  int64_t bytes = 0, dv_files = 0, dv_rows = 0;
  for (const auto& f : s.files) {
    bytes += f.size;
    if (f.deletion_vector) {
      ++dv_files;
      dv_rows += f.deletion_vector->cardinality;
    }
  }
  const auto rows = s.NumRecords();
  if (json) {
    ordered_json j;
    j["path"] = path;
    j["format"] = "delta";
    j["version"] = s.version;
    j["timestamp"] = IsoTime(s.timestamp_ms);
    j["protocol"] = {{"minReaderVersion", s.protocol.min_reader_version},
                     {"minWriterVersion", s.protocol.min_writer_version}};
    if (s.protocol.reader_features) j["protocol"]["readerFeatures"] = *s.protocol.reader_features;
    if (s.protocol.writer_features) j["protocol"]["writerFeatures"] = *s.protocol.writer_features;
    j["id"] = s.metadata.id;
    if (s.metadata.name) j["name"] = *s.metadata.name;
    j["schema"] = ordered_json::array();
    for (const auto& f : s.metadata.schema->fields) {
      ordered_json c{{"name", f.name}, {"type", TypeText(*f.type)}, {"nullable", f.nullable}};
      if (f.physical_name) c["physicalName"] = *f.physical_name;
      if (f.field_id) c["fieldId"] = *f.field_id;
      j["schema"].push_back(c);
    }
    j["partitionColumns"] = s.metadata.partition_columns;
    j["configuration"] = s.metadata.configuration;
    j["columnMapping"] = ModeName(s.column_mapping_mode());
    j["numFiles"] = s.files.size();
    j["sizeInBytes"] = bytes;
    if (rows) j["numRecords"] = *rows;
    j["deletionVectors"] = {{"files", dv_files}, {"deletedRows", dv_rows}};
    j["tombstones"] = s.tombstones.size();
    if (s.checkpoint_version) j["checkpointVersion"] = *s.checkpoint_version;
    if (last) j["lastCheckpoint"] = {{"version", last->version}, {"size", last->size}};
    if (hint.problem) j["lastCheckpoint"] = {{"ignored", *hint.problem}};
    j["transactions"] = s.app_versions;
    j["history"] = ordered_json::array();
    const size_t first = history.size() > kHistoryShown ? history.size() - kHistoryShown : 0;
    for (size_t i = first; i < history.size(); ++i) {
      ordered_json h{{"version", history[i].version}, {"timestamp", IsoTime(history[i].timestamp_ms)}};
      if (history[i].commit_info && history[i].commit_info->operation) {
        h["operation"] = *history[i].commit_info->operation;
      }
      j["history"].push_back(h);
    }
    j["missingFiles"] = problems.missing;
    j["filesOfWrongSize"] = problems.wrong_size;
    out << j.dump(2) << "\n";
    return ReportProblems(problems, out, err);
  }
  out << "Delta table " << path << "\n";
  out << "  version        " << s.version << " (" << IsoTime(s.timestamp_ms) << ")\n";
  out << "  protocol       reader " << s.protocol.min_reader_version << ", writer " << s.protocol.min_writer_version
      << "\n";
  out << "  reader features " << Join(s.protocol.reader_features) << "\n";
  out << "  writer features " << Join(s.protocol.writer_features) << "\n";
  out << "  id             " << s.metadata.id << (s.metadata.name ? " (" + *s.metadata.name + ")" : "") << "\n";
  out << "  column mapping " << ModeName(s.column_mapping_mode()) << "\n";
  std::string parts;
  for (const auto& p : s.metadata.partition_columns) parts += (parts.empty() ? "" : ", ") + p;
  out << "  partitioned by " << (parts.empty() ? "-" : parts) << "\n";
  out << "  files          " << s.files.size() << " (" << bytes << " bytes), " << s.tombstones.size()
      << " tombstones\n";
  out << "  rows           " << (rows ? std::to_string(*rows) : std::string("unknown (files without stats)"))
      << "\n";
  if (dv_files) out << "  deletion vectors " << dv_files << " files, " << dv_rows << " rows deleted\n";
  out << "  checkpoint     "
      << (s.checkpoint_version ? "replayed from version " + std::to_string(*s.checkpoint_version) : std::string("none"))
      << (last ? ", _last_checkpoint -> version " + std::to_string(last->version) : std::string())
      << (hint.problem ? ", _last_checkpoint ignored (unreadable; the log was listed instead)" : "") << "\n";
  out << "schema:\n";
  for (const auto& f : s.metadata.schema->fields) {
    out << "  " << f.name << ": " << TypeText(*f.type) << (f.nullable ? "" : " not null");
    if (f.physical_name) out << "  [physical " << *f.physical_name << "]";
    if (f.field_id) out << "  [id " << *f.field_id << "]";
    out << "\n";
  }
  if (!s.metadata.configuration.empty()) {
    out << "configuration:\n";
    for (const auto& [k, v] : s.metadata.configuration) out << "  " << k << " = " << v << "\n";
  }
  if (!s.app_versions.empty()) {
    out << "transactions:\n";
    for (const auto& [app, v] : s.app_versions) out << "  " << app << " = " << v << "\n";
  }
  out << "history (last " << std::min(history.size(), kHistoryShown) << " of " << history.size() << " commits):\n";
  const size_t first = history.size() > kHistoryShown ? history.size() - kHistoryShown : 0;
  for (size_t i = first; i < history.size(); ++i) {
    out << "  " << history[i].version << "  " << IsoTime(history[i].timestamp_ms) << "  "
        << (history[i].commit_info && history[i].commit_info->operation ? *history[i].commit_info->operation
                                                                          : std::string("-"))
        << "\n";
  }
  return ReportProblems(problems, out, err);
}

}  // namespace lakerun::cli
