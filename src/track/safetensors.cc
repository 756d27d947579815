#include "lakerun/track/safetensors.h"

#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "lakerun/base/error.h"

namespace lakerun::track {
namespace {

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

size_t SafetensorsDtypeSize(const std::string& dtype) {
  static const std::map<std::string, size_t> kSizes = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2},
                                                       {"I64", 8}, {"I32", 4}, {"I16", 2}, {"I8", 1},
                                                       {"U8", 1},  {"BOOL", 1}};
  auto it = kSizes.find(dtype);
  LAKERUN_CHECK(it != kSizes.end(), "safetensors: unsupported dtype '", dtype,
                "', expected one of F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL");
  return it->second;
}

std::string EncodeSafetensors(const std::vector<TensorView>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  static_assert(sizeof(uint64_t) == 8, "u64");
  std::map<std::string, const TensorView*> by_name;
  for (const auto& t : tensors) {
    LAKERUN_CHECK(!t.name.empty() && t.name != "__metadata__", "safetensors: invalid tensor name '", t.name, "'");
    LAKERUN_CHECK(by_name.emplace(t.name, &t).second, "safetensors: tensor '", t.name, "' appears twice");
    for (int64_t d : t.shape) LAKERUN_CHECK(d >= 0, "safetensors: tensor '", t.name, "' has a negative dimension");
    const uint64_t expected = static_cast<uint64_t>(Numel(t.shape)) * SafetensorsDtypeSize(t.dtype);
    LAKERUN_CHECK(expected == t.nbytes, "safetensors: tensor '", t.name, "' holds ", t.nbytes, " bytes, but ",
                  t.dtype, " with its shape needs ", expected);
  }
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : by_name) {
    header[name] = {{"dtype", t->dtype}, {"shape", t->shape}, {"data_offsets", {offset, offset + t->nbytes}}};
    offset += t->nbytes;
  }
  std::string json = header.dump();
  while ((8 + json.size()) % 8 != 0) json.push_back(' ');
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  out += json;
  out.reserve(out.size() + offset);
  for (const auto& [name, t] : by_name) out.append(static_cast<const char*>(t->data), t->nbytes);
  return out;
}

SafetensorsFile ParseSafetensors(std::string_view bytes, const std::string& where) {
  LAKERUN_CHECK_AS(CorruptDataError, bytes.size() >= 8, where, ": ", bytes.size(),
                   " bytes, too short for a safetensors header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  LAKERUN_CHECK_AS(CorruptDataError, n <= bytes.size() - 8, where, ": header length ", n, " exceeds the file (",
                   bytes.size(), " bytes)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, n));
  } catch (const nlohmann::json::exception& e) {
    LAKERUN_THROW(CorruptDataError, where, ": header is not JSON: ", e.what());
  }
  LAKERUN_CHECK_AS(CorruptDataError, header.is_object(), where, ": header is not a JSON object");
  SafetensorsFile out;
  const uint64_t data_start = 8 + n;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : value.items()) {
        LAKERUN_CHECK_AS(CorruptDataError, v.is_string(), where, ": metadata '", k, "' is not a string");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    try {
      SafetensorsEntry e;
      e.dtype = value.at("dtype").get<std::string>();
      e.shape = value.at("shape").get<std::vector<int64_t>>();
      const auto offsets = value.at("data_offsets").get<std::vector<uint64_t>>();
      LAKERUN_CHECK_AS(CorruptDataError, offsets.size() == 2 && offsets[0] <= offsets[1], where, ": tensor '",
                       name, "' has bad data_offsets");
      e.begin = data_start + offsets[0];
      e.end = data_start + offsets[1];
      LAKERUN_CHECK_AS(CorruptDataError, e.end <= bytes.size(), where, ": tensor '", name,
                       "' ends past the end of the file");
      size_t size = 0;
      try {
        size = SafetensorsDtypeSize(e.dtype);
      } catch (const InvalidArgument&) {
        LAKERUN_THROW(CorruptDataError, where, ": tensor '", name, "' has unknown dtype '", e.dtype, "'");
      }
      LAKERUN_CHECK_AS(CorruptDataError, static_cast<uint64_t>(Numel(e.shape)) * size == e.end - e.begin, where,
                       ": tensor '", name, "' byte range does not match its dtype and shape");
      out.tensors[name] = e;
    } catch (const nlohmann::json::exception& ex) {
      LAKERUN_THROW(CorruptDataError, where, ": tensor '", name, "': ", ex.what());
    }
  }
  return out;
}

}  // namespace lakerun::track
