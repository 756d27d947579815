// The safetensors format, written and read without any third-party code:
//
//   [8 bytes: N, little-endian u64][N bytes: JSON header, space-padded to a multiple of 8][raw tensor bytes]
//
// The header maps each tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} (offsets
// relative to the first data byte) plus an optional "__metadata__" object of string values. Data is little-endian
// and C-contiguous. Tensors are laid out in name order, so output is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace lakerun::track {

/// One tensor to write; `data` must stay valid during the call and hold `nbytes` = numel * dtype size.
struct TensorView {
  std::string name;
  std::string dtype;  ///< F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t nbytes = 0;
};

/// Bytes per element of a safetensors dtype; InvalidArgument for an unknown one.
size_t SafetensorsDtypeSize(const std::string& dtype);

/// The whole file. InvalidArgument naming the tensor when its byte count does not match dtype and shape, or a name
/// repeats.
std::string EncodeSafetensors(const std::vector<TensorView>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

/// One tensor of a parsed file.
struct SafetensorsEntry {
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  ///< offset in the file (not in the data section)
  uint64_t end = 0;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::map<std::string, SafetensorsEntry> tensors;
};

/// Parses and validates a file's header (sizes, offsets within the file, dtype and shape consistent with the byte
/// range). CorruptDataError naming `where` on any violation.
SafetensorsFile ParseSafetensors(std::string_view bytes, const std::string& where);

}  // namespace lakerun::track
