#include "dist/checkpoint_index.h"

#include <lakerun/base/error.h>

#include "dist/shard_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace lakerun::dist {
namespace {

using nlohmann::json;

json ToJson(const SavedRange& r) {
  json state = json::array();
  for (const SavedState& s : r.state) {
    json at = json::object();
    for (const auto& [field, offset] : s.at) at[field] = offset;
    json one = {{"optimizer", s.optimizer}, {"at", at}};
    if (s.step.has_value()) one["step"] = *s.step;
    state.push_back(std::move(one));
  }
  return {{"parameter", r.parameter}, {"offset", r.offset}, {"numel", r.numel}, {"at", r.at}, {"state", state}};
}

json ToJson(const SavedFile& f) {
  json ranges = json::array();
  for (const SavedRange& r : f.ranges) ranges.push_back(ToJson(r));
  return {{"rank", f.rank},
          {"name", f.name},
          {"bytes", f.bytes},
          {"checksums_at", f.checksums_at},
          {"checksums_crc32", f.checksums_crc32},
          {"ranges", ranges}};
}

SavedRange RangeFromJson(const json& j) {
  SavedRange r;
  r.parameter = j.at("parameter").get<std::size_t>();
  r.offset = j.at("offset").get<int64_t>();
  r.numel = j.at("numel").get<int64_t>();
  r.at = j.at("at").get<uint64_t>();
  for (const json& s : j.at("state")) {
    SavedState state;
    state.optimizer = s.at("optimizer").get<std::size_t>();
    if (s.contains("step")) state.step = s.at("step").get<int64_t>();
    for (const auto& [field, offset] : s.at("at").items()) state.at.emplace_back(field, offset.get<uint64_t>());
    r.state.push_back(std::move(state));
  }
  return r;
}

SavedFile FileFrom(const json& j) {
  SavedFile f;
  f.rank = j.at("rank").get<int>();
  f.name = j.at("name").get<std::string>();
  f.bytes = j.at("bytes").get<uint64_t>();
  f.checksums_at = j.at("checksums_at").get<uint64_t>();
  f.checksums_crc32 = j.at("checksums_crc32").get<uint32_t>();
  for (const json& r : j.at("ranges")) f.ranges.push_back(RangeFromJson(r));
  return f;
}

ShardedIndex IndexFrom(const json& j, const std::string& path) {
  LAKERUN_CHECK_AS(CorruptDataError, j.value("format", "") == kShardedCheckpointFormat, path,
                   ": not a lakerun sharded checkpoint index (\"format\" is not \"", kShardedCheckpointFormat, "\")");
  ShardedIndex index;
  index.version = j.at("version").get<int>();
  LAKERUN_CHECK_AS(NotImplemented, index.version == kShardedCheckpointVersion, path, ": sharded checkpoint version ",
                   index.version, "; this lakerun reads version ", kShardedCheckpointVersion);
  index.save_id = j.at("save_id").get<std::string>();
  index.world_size = j.at("world_size").get<int>();
  index.stage = j.at("stage").get<std::string>();
  index.block_bytes = j.at("block_bytes").get<uint64_t>();
  for (const json& p : j.at("parameters")) {
    index.parameters.push_back({p.at("name").get<std::string>(), p.at("shape").get<std::vector<int64_t>>(),
                                p.at("dtype").get<std::string>(), p.at("numel").get<int64_t>()});
  }
  for (const json& o : j.at("optimizers")) {
    SavedOptimizer opt;
    opt.kind = o.at("kind").get<std::string>();
    for (const json& p : o.at("parameters")) {
      opt.fields.emplace_back(p.at("parameter").get<std::size_t>(), p.at("fields").get<std::vector<std::string>>());
    }
    index.optimizers.push_back(std::move(opt));
  }
  for (const json& f : j.at("files")) index.files.push_back(FileFrom(f));
  return index;
}

void CheckFiles(const ShardedIndex& index, const std::string& path) {
  LAKERUN_CHECK_AS(CorruptDataError, index.world_size >= 1 && index.block_bytes > 0, path, ": world_size ",
                   index.world_size, " and block_bytes ", index.block_bytes, " must be positive");
  LAKERUN_CHECK_AS(CorruptDataError, index.files.size() == static_cast<std::size_t>(index.world_size), path,
                   ": names ", index.files.size(), " rank files for a world of ", index.world_size);
  for (std::size_t r = 0; r < index.files.size(); ++r) {
    const SavedFile& f = index.files[r];
    LAKERUN_CHECK_AS(CorruptDataError, f.rank == static_cast<int>(r), path, ": file entry ", r, " is rank ", f.rank,
                     "'s");
    const bool placed = f.checksums_at >= kShardFileHeaderBytes && f.checksums_at <= f.bytes &&
                        f.bytes - f.checksums_at ==
                            4 * ShardFileBlocks(f.checksums_at - kShardFileHeaderBytes, index.block_bytes);
    LAKERUN_CHECK_AS(CorruptDataError, placed, path, ": ", f.name, " of ", f.bytes,
                     " bytes cannot hold its header, elements and one checksum per block with the table at ",
                     f.checksums_at);
  }
}

void CheckReferences(const ShardedIndex& index, const std::string& path) {
  for (const SavedParameter& p : index.parameters) {
    int64_t numel = 1;
    for (int64_t d : p.shape) numel *= d;
    LAKERUN_CHECK_AS(CorruptDataError, numel == p.numel, path, ": parameter '", p.name, "' has ", p.numel,
                     " elements, not its shape's ", numel);
  }
  for (std::size_t o = 0; o < index.optimizers.size(); ++o) {
    for (const auto& [p, fields] : index.optimizers[o].fields) {
      LAKERUN_CHECK_AS(CorruptDataError, p < index.parameters.size(), path, ": optimizer ", o, " names parameter ",
                       p, " of ", index.parameters.size());
    }
  }
  for (const SavedFile& f : index.files) {
    for (const SavedRange& r : f.ranges) {
      LAKERUN_CHECK_AS(CorruptDataError, r.parameter < index.parameters.size(), path, ": ", f.name,
                       " holds a range of parameter ", r.parameter, " of ", index.parameters.size());
      const SavedParameter& p = index.parameters[r.parameter];
      LAKERUN_CHECK_AS(CorruptDataError, r.offset >= 0 && r.numel > 0 && r.offset + r.numel <= p.numel, path, ": ",
                       f.name, " holds elements [", r.offset, ", ", r.offset + r.numel, ") of parameter '", p.name,
                       "', which has ", p.numel);
      for (const SavedState& s : r.state) {
        LAKERUN_CHECK_AS(CorruptDataError,
                         s.optimizer < index.optimizers.size() &&
                             index.optimizers[s.optimizer].FieldsOf(r.parameter) != nullptr,
                         path, ": ", f.name, " holds state of optimizer ", s.optimizer, " for parameter '", p.name,
                         "', which that optimizer does not step");
      }
    }
  }
}

// Every parameter's ranges, over all files, cover its elements exactly once.
void CheckCoverage(const ShardedIndex& index, const std::string& path) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> spans(index.parameters.size());
  for (const SavedFile& f : index.files) {
    for (const SavedRange& r : f.ranges) spans[r.parameter].emplace_back(r.offset, r.offset + r.numel);
  }
  for (std::size_t p = 0; p < spans.size(); ++p) {
    std::sort(spans[p].begin(), spans[p].end());
    const SavedParameter& param = index.parameters[p];
    int64_t next = 0;
    for (const auto& [begin, end] : spans[p]) {
      LAKERUN_CHECK_AS(CorruptDataError, begin <= next, path, ": the rank files do not cover parameter '",
                       param.name, "': no file holds its elements [", next, ", ", begin, ") of ", param.numel);
      LAKERUN_CHECK_AS(CorruptDataError, begin == next, path, ": two rank files hold elements [", begin, ", ",
                       std::min(next, end), ") of parameter '", param.name, "'");
      next = end;
    }
    LAKERUN_CHECK_AS(CorruptDataError, next == param.numel, path, ": the rank files do not cover parameter '",
                     param.name, "': no file holds its elements [", next, ", ", param.numel, ") of ", param.numel);
  }
}

}  // namespace

const std::vector<std::string>* SavedOptimizer::FieldsOf(std::size_t p) const {
  for (const auto& [param, names] : fields) {
    if (param == p) return &names;
  }
  return nullptr;
}

std::string IndexToJson(const ShardedIndex& index) {
  json parameters = json::array();
  for (const SavedParameter& p : index.parameters) {
    parameters.push_back({{"name", p.name}, {"shape", p.shape}, {"dtype", p.dtype}, {"numel", p.numel}});
  }
  json optimizers = json::array();
  for (const SavedOptimizer& o : index.optimizers) {
    json params = json::array();
    for (const auto& [p, fields] : o.fields) params.push_back({{"parameter", p}, {"fields", fields}});
    optimizers.push_back({{"kind", o.kind}, {"parameters", params}});
  }
  json files = json::array();
  for (const SavedFile& f : index.files) files.push_back(ToJson(f));
  const json j = {{"format", kShardedCheckpointFormat},
                  {"version", index.version},
                  {"save_id", index.save_id},
                  {"world_size", index.world_size},
                  {"stage", index.stage},
                  {"block_bytes", index.block_bytes},
                  {"parameters", parameters},
                  {"optimizers", optimizers},
                  {"files", files}};
  return j.dump(1) + "\n";
}

ShardedIndex IndexFromJson(std::string_view text, const std::string& path) {
  ShardedIndex index;
  try {
    index = IndexFrom(json::parse(text), path);
  } catch (const json::exception& e) {
    LAKERUN_THROW(CorruptDataError, path, ": malformed sharded checkpoint index: ", e.what());
  }
  CheckFiles(index, path);
  CheckReferences(index, path);
  CheckCoverage(index, path);
  return index;
}

std::string FileToJson(const SavedFile& file) { return ToJson(file).dump(); }

SavedFile FileFromJson(std::string_view text, const std::string& what) {
  try {
    return FileFrom(json::parse(text));
  } catch (const json::exception& e) {
    LAKERUN_THROW(InternalError, what, ": malformed file entry: ", e.what());
  }
}

}  // namespace lakerun::dist
