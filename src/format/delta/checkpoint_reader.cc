// Reading checkpoints: Parquet rows (one action per row, actions as nullable struct columns) are assembled into
// parquet::Values, turned into JSON objects and parsed by the same code as commit files.
#include "format/delta/checkpoint_reader.h"

#include <nlohmann/json.hpp>

#include "format/delta/json_codec.h"
#include "format/delta/uri.h"
#include "lakerun/base/error.h"
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

void ReadParquetActions(FileSystem& fs, const std::string& path, ActionSet* out, const std::string& context) {
  const std::string where = StrCat(context, " checkpoint file ", path);
  try {
    auto file = parquet::ParquetFile::Open(fs, path);
    parquet::TableReadOptions options;
    for (const char* column : {"protocol", "metaData", "add", "remove", "txn", "domainMetadata",
                               "checkpointMetadata", "sidecar"}) {
      if (file->schema().FindNode(column) != nullptr) options.columns.push_back(column);
    }
    if (options.columns.empty()) return;
    parquet::TableReader reader(*file, options);
    int64_t row = 0;
    // Whole row groups: TableReader::ReadRows(limit) drops the rest of a row group beyond `limit`.
    while (std::optional<parquet::RowGroupData> group = reader.Next()) {
      const std::vector<parquet::Value> rows = parquet::AssembleRecords(
          file->schema(), reader.top_level_fields(), group->columns, group->data, group->num_rows);
      for (const auto& r : rows) {
        ParseActionInto(ValueToJson(r), out, StrCat(where, " row ", row));
        ++row;
      }
    }
  } catch (const CorruptDataError& e) {
    const std::string msg = e.what();
    if (msg.find(context) != std::string::npos) throw;
    LAKERUN_THROW(CorruptDataError, where, ": ", msg);
  } catch (const IoError& e) {
    LAKERUN_THROW(IoError, where, ": ", e.what());
  }
}

}  // namespace

ActionSet ReadCheckpoint(FileSystem& fs, const std::string& log_dir, const CheckpointFiles& checkpoint,
                         const std::string& context) {
  ActionSet out;
  for (const auto& path : checkpoint.paths) {
    ActionSet part;
    if (checkpoint.json) {
      std::string text;
      try {
        text = fs.ReadFile(path);
      } catch (const IoError& e) {
        LAKERUN_THROW(IoError, context, " checkpoint file ", path, ": ", e.what());
      }
      part = ParseActionLines(text, StrCat(context, " checkpoint file ", path));
    } else {
      ReadParquetActions(fs, path, &part, context);
    }
    Merge(&out, std::move(part), StrCat(context, " checkpoint file ", path));
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
    if (decoded.empty() || decoded.front() != '/') decoded = JoinPath(JoinPath(log_dir, "_sidecars"), decoded);
    ActionSet part;
    ReadParquetActions(fs, decoded, &part, context);
    LAKERUN_CHECK_AS(CorruptDataError, !part.protocol && !part.metadata && part.txns.empty(), sidecar_context,
                     ": sidecar files may hold only add and remove actions");
    Merge(&out, std::move(part), sidecar_context);
  }
  return out;
}

}  // namespace lakerun::delta::internal
