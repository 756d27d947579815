// Snapshot helpers and small action utilities.
#include "lakerun/format/delta/snapshot.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <random>

#include "format/delta/uri.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"

namespace lakerun::delta {

bool Protocol::HasReaderFeature(const std::string& name) const {
  return reader_features && std::find(reader_features->begin(), reader_features->end(), name) !=
                                reader_features->end();
}

bool Protocol::HasWriterFeature(const std::string& name) const {
  return writer_features && std::find(writer_features->begin(), writer_features->end(), name) !=
                                writer_features->end();
}

std::string DeletionVectorDescriptor::UniqueId() const {
  std::string id(1, storage_type);
  id += path_or_inline_dv;
  if (offset) id += StrCat("@", *offset);
  return id;
}

RemoveFile RemoveOf(const AddFile& add, int64_t deletion_timestamp_ms) {
  RemoveFile r;
  r.path = add.path;
  r.deletion_timestamp = deletion_timestamp_ms;
  r.data_change = true;
  r.extended_file_metadata = true;
  r.partition_values = add.partition_values;
  r.size = add.size;
  r.deletion_vector = add.deletion_vector;
  return r;
}

std::string UuidToString(const std::string& b) {
  LAKERUN_CHECK(b.size() == 16, "a UUID has 16 bytes, got ", b.size());
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    const auto c = static_cast<unsigned char>(b[i]);
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string UuidFromRandomBits(uint64_t high, uint64_t low) {
  std::string bytes(16, '\0');
  const uint64_t halves[2] = {high, low};
  for (size_t i = 0; i < 16; i += 8) {
    for (size_t j = 0; j < 8; ++j) bytes[i + j] = static_cast<char>(halves[i / 8] >> (8 * j));
  }
  bytes[6] = static_cast<char>((bytes[6] & 0x0f) | 0x40);
  bytes[8] = static_cast<char>((bytes[8] & 0x3f) | 0x80);
  return UuidToString(bytes);
}

std::string RandomUuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const uint64_t high = rng();
  return UuidFromRandomBits(high, rng());
}

ColumnMappingMode Snapshot::column_mapping_mode() const {
  const bool supported = protocol.min_reader_version == 2 ||
                         (protocol.min_reader_version >= 3 && protocol.HasReaderFeature("columnMapping"));
  if (!supported) return ColumnMappingMode::kNone;
  auto it = metadata.configuration.find("delta.columnMapping.mode");
  if (it == metadata.configuration.end()) return ColumnMappingMode::kNone;
  if (it->second == "name") return ColumnMappingMode::kName;
  if (it->second == "id") return ColumnMappingMode::kId;
  return ColumnMappingMode::kNone;
}

std::optional<int64_t> Snapshot::TxnVersion(const std::string& app_id) const {
  auto it = app_versions.find(app_id);
  if (it == app_versions.end()) return std::nullopt;
  return it->second;
}

std::string Snapshot::Describe() const { return StrCat("table ", table_path, " version ", version); }

std::string Snapshot::DataFilePath(const AddFile& file) const {
  const std::string context = StrCat(Describe(), " file ", file.path);
  const std::string decoded = internal::UriToLocalPath(internal::PercentDecode(file.path, context), context);
  if (internal::IsAbsolutePath(decoded)) return decoded;
  return lakerun::JoinPath(table_path, decoded);
}

std::optional<int64_t> Snapshot::NumRecords() const {
  int64_t total = 0;
  for (const auto& f : files) {
    if (!f.stats) return std::nullopt;
    auto j = nlohmann::json::parse(*f.stats, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("numRecords") || !j["numRecords"].is_number_integer()) {
      return std::nullopt;
    }
    total += j["numRecords"].get<int64_t>() - (f.deletion_vector ? f.deletion_vector->cardinality : 0);
  }
  return total;
}

}  // namespace lakerun::delta
