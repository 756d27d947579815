// Reading checkpoints: add and remove actions straight from their Parquet leaf columns (checkpoint_columns.h); other
// actions (one per row, as nullable struct columns) assembled into parquet::Values, turned into JSON objects and
// parsed by the same code as commit files. The parts of a multi-part checkpoint are read in parallel.
#include "format/delta/checkpoint_reader.h"

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "format/delta/checkpoint_columns.h"
#include "format/delta/json_codec.h"
#include "format/delta/uri.h"
#include "lakerun/base/error.h"
#include "lakerun/base/thread_pool.h"
#include "lakerun/format/parquet/file_reader.h"
#include "lakerun/format/parquet/table_reader.h"

namespace lakerun::delta::internal {
namespace {

using nlohmann::json;

json ValueToJson(const parquet::Value& v) {
  using Kind = parquet::Value::Kind;
  switch (v.kind()) {
    case Kind::kNull:
      return nullptr;
    case Kind::kBool:
      return v.as_bool();
    case Kind::kInt:
      return v.as_int();
    case Kind::kFloat:
    case Kind::kDouble:
      return v.as_double();
    case Kind::kString:
    case Kind::kBytes:
      return v.as_string();
    case Kind::kList: {
      json out = json::array();
      for (const auto& item : v.children()) out.push_back(ValueToJson(item));
      return out;
    }
    case Kind::kStruct: {
      json out = json::object();
      for (size_t i = 0; i < v.children().size(); ++i) out[v.field_names()[i]] = ValueToJson(v.children()[i]);
      return out;
    }
    case Kind::kMap: {
      json out = json::object();
      for (size_t i = 0; i < v.map_size(); ++i) {
        const auto& key = v.map_key(i);
        out[key.kind() == Kind::kString || key.kind() == Kind::kBytes ? key.as_string() : key.ToString()] =
            ValueToJson(v.map_value(i));
      }
      return out;
    }
  }
  return nullptr;
}

void Merge(ActionSet* dst, ActionSet src, const std::string& context) {
  if (src.protocol) {
    LAKERUN_CHECK_AS(CorruptDataError, !dst->protocol, context, ": checkpoint holds more than one protocol action");
    dst->protocol = std::move(src.protocol);
  }
  if (src.metadata) {
    LAKERUN_CHECK_AS(CorruptDataError, !dst->metadata, context, ": checkpoint holds more than one metaData action");
    dst->metadata = std::move(src.metadata);
  }
  auto append = [](auto* to, auto& from) {
    to->insert(to->end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  append(&dst->adds, src.adds);
  append(&dst->removes, src.removes);
  append(&dst->txns, src.txns);
  append(&dst->domains, src.domains);
  append(&dst->sidecars, src.sidecars);
  if (src.checkpoint_metadata_version) dst->checkpoint_metadata_version = src.checkpoint_metadata_version;
}

constexpr const char* kActionColumns[] = {"protocol", "metaData", "add", "remove", "txn", "domainMetadata",
                                          "checkpointMetadata", "sidecar"};

bool IsFileAction(const std::string& name) { return name == "add" || name == "remove"; }

// The top-level fields among `fields` that are non-null in some row of `group` (judged by the definition levels of
// their first leaf): only those need assembling.
std::vector<int> FieldsWithValues(const parquet::Schema& schema, const std::vector<int>& fields,
                                  const parquet::RowGroupData& group) {
  std::vector<int> out;
  for (int f : fields) {
    const parquet::SchemaNode& node = schema.root().children[static_cast<size_t>(f)];
    const std::vector<int> leaves = schema.ColumnsUnder(node.name);
    auto it = leaves.empty() ? group.columns.end()
                             : std::find(group.columns.begin(), group.columns.end(), leaves.front());
    if (node.repetition == parquet::Repetition::kRequired || it == group.columns.end()) {
      out.push_back(f);
      continue;
    }
    const auto& defs = group.data[static_cast<size_t>(it - group.columns.begin())].def_levels();
    if (defs.empty() || std::any_of(defs.begin(), defs.end(), [&](int16_t d) { return d >= node.max_def_level; })) {
      out.push_back(f);
    }
  }
  return out;
}

// Reads one checkpoint Parquet file. add and remove come from their leaf columns (checkpoint_columns.h) when their
// shape allows; other actions (and file actions of unknown shape) are assembled into Values, converted to JSON and
// parsed by ParseActionInto, only for row groups where they occur.
void ReadParquetActions(FileSystem& fs, const std::string& path, ActionSet* out, const std::string& context) {
  const std::string where = StrCat(context, " checkpoint file ", path);
  try {
    auto file = parquet::ParquetFile::Open(fs, path);
    const parquet::Schema& schema = file->schema();
    const std::optional<FileActionColumns> file_actions = FileActionColumns::Bind(schema);
    parquet::TableReadOptions options;
    for (const char* column : kActionColumns) {
      if (schema.FindNode(column) == nullptr || (file_actions && IsFileAction(column))) continue;
      options.columns.push_back(column);
    }
    if (file_actions) {
      options.columns.insert(options.columns.end(), file_actions->read_paths().begin(),
                             file_actions->read_paths().end());
    }
    if (options.columns.empty()) return;
    parquet::TableReader reader(*file, options);
    std::vector<int> assembled;  // top-level fields read through Values
    for (int f : reader.top_level_fields()) {
      if (!(file_actions && IsFileAction(schema.root().children[static_cast<size_t>(f)].name))) {
        assembled.push_back(f);
      }
    }
    int64_t first_row = 0;
    while (std::optional<parquet::RowGroupData> group = reader.Next()) {
      if (file_actions) file_actions->Read(*group, out, where);
      const std::vector<int> fields = FieldsWithValues(schema, assembled, *group);
      if (!fields.empty()) {
        // Record assembly wants exactly the leaves of the fields it assembles.
        std::vector<int> wanted;
        for (int f : fields) {
          const std::vector<int> leaves = schema.ColumnsUnder(schema.root().children[static_cast<size_t>(f)].name);
          wanted.insert(wanted.end(), leaves.begin(), leaves.end());
        }
        std::vector<int> columns;
        std::vector<parquet::ColumnData> data;
        for (size_t i = 0; i < group->columns.size(); ++i) {
          if (std::find(wanted.begin(), wanted.end(), group->columns[i]) == wanted.end()) continue;
          columns.push_back(group->columns[i]);
          data.push_back(std::move(group->data[i]));
        }
        const std::vector<parquet::Value> rows =
            parquet::AssembleRecords(schema, fields, columns, data, group->num_rows);
        for (size_t i = 0; i < rows.size(); ++i) {
          ParseActionInto(ValueToJson(rows[i]), out, StrCat(where, " row ", first_row + static_cast<int64_t>(i)));
        }
      }
      first_row += group->num_rows;
    }
  } catch (const CorruptDataError& e) {
    const std::string msg = e.what();
    if (msg.find(context) != std::string::npos) throw;
    LAKERUN_THROW(CorruptDataError, where, ": ", msg);
  } catch (const IoError& e) {
    LAKERUN_THROW(IoError, where, ": ", e.what());
  }
}

// Reads the parts of a Parquet checkpoint, several at a time, into one ActionSet per part.
std::vector<ActionSet> ReadParquetParts(FileSystem& fs, const std::vector<std::string>& paths,
                                        const std::string& context) {
  std::vector<ActionSet> parts(paths.size());
  const size_t threads = std::min<size_t>(paths.size(), std::max(1u, std::thread::hardware_concurrency()));
  ThreadPool pool(threads - 1, "checkpoint");  // ParallelFor also runs tasks on this thread
  pool.ParallelFor(paths.size(), [&](size_t i) { ReadParquetActions(fs, paths[i], &parts[i], context); });
  return parts;
}

}  // namespace

ActionSet ReadCheckpoint(FileSystem& fs, const std::string& log_dir, const CheckpointFiles& checkpoint,
                         const std::string& context) {
  ActionSet out;
  if (checkpoint.json) {
    for (const auto& path : checkpoint.paths) {
      std::string text;
      try {
        text = fs.ReadFile(path);
      } catch (const IoError& e) {
        LAKERUN_THROW(IoError, context, " checkpoint file ", path, ": ", e.what());
      }
      Merge(&out, ParseActionLines(text, StrCat(context, " checkpoint file ", path)),
            StrCat(context, " checkpoint file ", path));
    }
  } else {
    std::vector<ActionSet> parts = ReadParquetParts(fs, checkpoint.paths, context);
    for (size_t i = 0; i < parts.size(); ++i) {
      Merge(&out, std::move(parts[i]), StrCat(context, " checkpoint file ", checkpoint.paths[i]));
    }
  }
  if (checkpoint.kind == CheckpointFiles::Kind::kV2) {
    LAKERUN_CHECK_AS(CorruptDataError, out.checkpoint_metadata_version.has_value(), context, " checkpoint file ",
                     checkpoint.paths.front(), ": a v2 checkpoint must hold a checkpointMetadata action");
  }
  // Sidecars (v2 spec): file actions stored beside the checkpoint in _delta_log/_sidecars.
  std::vector<Sidecar> sidecars = std::move(out.sidecars);
  out.sidecars.clear();
  for (const auto& sidecar : sidecars) {
    const std::string sidecar_context = StrCat(context, " sidecar ", sidecar.path);
    std::string decoded = UriToLocalPath(PercentDecode(sidecar.path, sidecar_context), sidecar_context);
    if (!IsAbsolutePath(decoded)) decoded = JoinPath(JoinPath(log_dir, "_sidecars"), decoded);
    ActionSet part;
    ReadParquetActions(fs, decoded, &part, context);
    LAKERUN_CHECK_AS(CorruptDataError, !part.protocol && !part.metadata && part.txns.empty(), sidecar_context,
                     ": sidecar files may hold only add and remove actions");
    Merge(&out, std::move(part), sidecar_context);
  }
  return out;
}

}  // namespace lakerun::delta::internal
