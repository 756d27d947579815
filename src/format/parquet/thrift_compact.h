// A minimal Thrift compact-protocol reader and writer: just what Parquet's footer and page headers need.
//
// The reader works on a byte span, never reads past it, limits struct/list nesting depth and container sizes, and
// can skip any field it does not know (unknown fields and union members of newer writers). Every malformed input
// throws CorruptDataError with `context` (the file, and where in it) and the byte offset at fault.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace lakerun::parquet::thrift {

/// Compact-protocol wire types.
enum class Type : uint8_t {
  kStop = 0,
  kTrue = 1,
  kFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

class CompactReader {
 public:
  /// `base_offset` is added to positions in error messages (e.g. the file offset of the span).
  CompactReader(std::string_view bytes, std::string context, uint64_t base_offset = 0, int max_depth = 64);

  /// Reads a struct: calls `on_field(field_id, type)` for each field; the callback must consume the field's value
  /// (with the typed readers below, or Skip(type)).
  void ReadStruct(const std::function<void(int16_t, Type)>& on_field);
  /// Reads a list header; returns the element count (bounded by the bytes left) and sets `*element_type`.
  uint32_t ReadListHeader(Type* element_type);
  /// Typed value readers; each checks that `type` is the wire type the caller expects.
  bool ReadBool(Type type);
  int8_t ReadByte(Type type);
  int16_t ReadI16(Type type);
  int32_t ReadI32(Type type);
  int64_t ReadI64(Type type);
  double ReadDouble(Type type);
  std::string ReadBinary(Type type);
  /// Reads a list of i32 (also used for lists of enums).
  void ReadI32List(Type type, const std::function<void(int32_t)>& on_element);
  /// Reads a list of bools (one byte each: 1 is true, anything else false, as Apache Thrift reads them).
  void ReadBoolList(Type type, const std::function<void(bool)>& on_element);
  /// Reads a list of i64 (narrower integer elements are accepted).
  void ReadI64List(Type type, const std::function<void(int64_t)>& on_element);
  /// Reads a list of binary values.
  void ReadBinaryList(Type type, const std::function<void(std::string)>& on_element);
  /// Reads a list of structs, calling on_element(index) positioned at each element (which must ReadStruct).
  void ReadStructList(Type type, const std::function<void(uint32_t)>& on_element);
  void Skip(Type type);

  size_t position() const { return pos_; }
  /// Throws CorruptDataError "<context>: <what> at offset <base+pos>".
  [[noreturn]] void Fail(const std::string& what) const;
  const std::string& context() const { return context_; }

 private:
  uint64_t ReadVarint();
  int64_t ReadZigZag() {
    uint64_t v = ReadVarint();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  uint8_t ReadRawByte();
  void Expect(Type got, Type want, const char* what);
  void SkipValue(Type type, int depth);

  std::string_view bytes_;
  size_t pos_ = 0;
  std::string context_;
  uint64_t base_offset_;
  int max_depth_;
  int depth_ = 0;
  // A boolean field's value lives in its header's type nibble; ReadBool(kTrue/kFalse) reads it from there.
};

class CompactWriter {
 public:
  explicit CompactWriter(std::string* out) : out_(out) {}

  void StructBegin();
  void StructEnd();  ///< writes the stop byte
  void FieldBegin(int16_t id, Type type);
  void WriteBoolField(int16_t id, bool value);
  void WriteI32Field(int16_t id, int32_t value);
  void WriteI64Field(int16_t id, int64_t value);
  void WriteBinaryField(int16_t id, std::string_view value);
  void ListBegin(Type element_type, uint32_t size);
  void WriteI32(int32_t value);
  void WriteI64(int64_t value);
  void WriteByte(int8_t value);
  /// A bool list element (after ListBegin(Type::kTrue, n)): one byte, 1 for true, 2 for false.
  void WriteBoolElement(bool value) { WriteByte(value ? 1 : 2); }
  void WriteBinary(std::string_view value);
  void WriteVarint(uint64_t value);

 private:
  std::string* out_;
  int16_t last_field_ = 0;
  std::string stack_;  // last field ids of enclosing structs, 2 bytes each
};

}  // namespace lakerun::parquet::thrift
