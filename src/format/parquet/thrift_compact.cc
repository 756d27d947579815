#include "format/parquet/thrift_compact.h"

#include <cstring>

#include "lakerun/base/error.h"

namespace lakerun::parquet::thrift {

CompactReader::CompactReader(std::string_view bytes, std::string context, uint64_t base_offset, int max_depth)
    : bytes_(bytes), context_(std::move(context)), base_offset_(base_offset), max_depth_(max_depth) {}

void CompactReader::Fail(const std::string& what) const {
  LAKERUN_THROW(CorruptDataError, context_, ": corrupt Thrift: ", what, " at offset ", base_offset_ + pos_);
}

uint8_t CompactReader::ReadRawByte() {
  if (pos_ >= bytes_.size()) Fail("unexpected end of data");
  return static_cast<uint8_t>(bytes_[pos_++]);
}

uint64_t CompactReader::ReadVarint() {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = ReadRawByte();
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return result;
  }
  Fail("varint longer than 10 bytes");
}

void CompactReader::Expect(Type got, Type want, const char* what) {
  bool ok = got == want || (want == Type::kTrue && got == Type::kFalse);
  if (!ok) {
    Fail(StrCat("field ", what, " has wire type ", static_cast<int>(got), ", expected ", static_cast<int>(want)));
  }
}

void CompactReader::ReadStruct(const std::function<void(int16_t, Type)>& on_field) {
  if (++depth_ > max_depth_) Fail(StrCat("nesting deeper than ", max_depth_));
  int16_t last_id = 0;
  while (true) {
    uint8_t header = ReadRawByte();
    if (header == 0) break;
    Type type = static_cast<Type>(header & 0x0f);
    if (static_cast<uint8_t>(type) > static_cast<uint8_t>(Type::kStruct) || type == Type::kStop) {
      --pos_;
      Fail(StrCat("invalid field type ", static_cast<int>(type)));
    }
    int delta = header >> 4;
    int16_t id;
    if (delta != 0) {
      id = static_cast<int16_t>(last_id + delta);
    } else {
      int64_t v = ReadZigZag();
      if (v < INT16_MIN || v > INT16_MAX) Fail("field id out of range");
      id = static_cast<int16_t>(v);
    }
    last_id = id;
    on_field(id, type);
  }
  --depth_;
}

bool CompactReader::ReadBool(Type type) {
  // In a field header the value is the type itself; inside a list it is one byte.
  if (type == Type::kTrue) return true;
  if (type == Type::kFalse) return false;
  Fail(StrCat("expected a bool, got wire type ", static_cast<int>(type)));
}

int8_t CompactReader::ReadByte(Type type) {
  Expect(type, Type::kByte, "byte");
  return static_cast<int8_t>(ReadRawByte());
}

int16_t CompactReader::ReadI16(Type type) {
  Expect(type, Type::kI16, "i16");
  int64_t v = ReadZigZag();
  if (v < INT16_MIN || v > INT16_MAX) Fail("i16 out of range");
  return static_cast<int16_t>(v);
}

int32_t CompactReader::ReadI32(Type type) {
  // Old writers sometimes used other integer widths for i32 fields; accept byte/i16/i32.
  if (type == Type::kByte) return static_cast<int8_t>(ReadRawByte());
  if (type != Type::kI16) Expect(type, Type::kI32, "i32");
  int64_t v = ReadZigZag();
  if (v < INT32_MIN || v > INT32_MAX) Fail("i32 out of range");
  return static_cast<int32_t>(v);
}

int64_t CompactReader::ReadI64(Type type) {
  if (type == Type::kByte) return static_cast<int8_t>(ReadRawByte());
  if (type != Type::kI16 && type != Type::kI32) Expect(type, Type::kI64, "i64");
  return ReadZigZag();
}

double CompactReader::ReadDouble(Type type) {
  Expect(type, Type::kDouble, "double");
  if (bytes_.size() - pos_ < 8) Fail("truncated double");
  double d;
  std::memcpy(&d, bytes_.data() + pos_, 8);
  pos_ += 8;
  return d;
}

std::string CompactReader::ReadBinary(Type type) {
  Expect(type, Type::kBinary, "binary");
  uint64_t n = ReadVarint();
  if (n > bytes_.size() - pos_) Fail(StrCat("binary of ", n, " bytes overruns the ", bytes_.size() - pos_,
                                           " bytes left"));
  std::string s(bytes_.substr(pos_, n));
  pos_ += n;
  return s;
}

uint32_t CompactReader::ReadListHeader(Type* element_type) {
  uint8_t header = ReadRawByte();
  uint64_t size = header >> 4;
  *element_type = static_cast<Type>(header & 0x0f);
  if (size == 15) size = ReadVarint();
  // Every element takes at least one byte (bools in lists too), so a count above the bytes left is corrupt.
  if (size > bytes_.size() - pos_) Fail(StrCat("list of ", size, " elements overruns the data"));
  return static_cast<uint32_t>(size);
}

void CompactReader::ReadI32List(Type type, const std::function<void(int32_t)>& on_element) {
  Expect(type, Type::kList, "list");
  Type et;
  uint32_t n = ReadListHeader(&et);
  for (uint32_t i = 0; i < n; ++i) on_element(ReadI32(et));
}

void CompactReader::ReadBoolList(Type type, const std::function<void(bool)>& on_element) {
  Expect(type, Type::kList, "list");
  Type et;
  uint32_t n = ReadListHeader(&et);
  if (n > 0 && et != Type::kTrue && et != Type::kFalse) Fail("expected a list of bools");
  for (uint32_t i = 0; i < n; ++i) on_element(ReadRawByte() == 1);
}

void CompactReader::ReadI64List(Type type, const std::function<void(int64_t)>& on_element) {
  Expect(type, Type::kList, "list");
  Type et;
  uint32_t n = ReadListHeader(&et);
  for (uint32_t i = 0; i < n; ++i) on_element(ReadI64(et));
}

void CompactReader::ReadBinaryList(Type type, const std::function<void(std::string)>& on_element) {
  Expect(type, Type::kList, "list");
  Type et;
  uint32_t n = ReadListHeader(&et);
  for (uint32_t i = 0; i < n; ++i) on_element(ReadBinary(et));
}

void CompactReader::ReadStructList(Type type, const std::function<void(uint32_t)>& on_element) {
  Expect(type, Type::kList, "list");
  Type et;
  uint32_t n = ReadListHeader(&et);
  if (n > 0 && et != Type::kStruct) Fail("expected a list of structs");
  for (uint32_t i = 0; i < n; ++i) on_element(i);
}

void CompactReader::Skip(Type type) { SkipValue(type, 0); }

void CompactReader::SkipValue(Type type, int depth) {
  if (depth_ + depth > max_depth_) Fail(StrCat("nesting deeper than ", max_depth_));
  switch (type) {
    case Type::kTrue:
    case Type::kFalse:
      return;  // field-header bool: no payload
    case Type::kByte:
      ReadRawByte();
      return;
    case Type::kI16:
    case Type::kI32:
    case Type::kI64:
      ReadVarint();
      return;
    case Type::kDouble:
      if (bytes_.size() - pos_ < 8) Fail("truncated double");
      pos_ += 8;
      return;
    case Type::kBinary: {
      uint64_t n = ReadVarint();
      if (n > bytes_.size() - pos_) Fail("binary overruns the data");
      pos_ += n;
      return;
    }
    case Type::kList:
    case Type::kSet: {
      Type et;
      uint32_t n = ReadListHeader(&et);
      for (uint32_t i = 0; i < n; ++i) {
        if (et == Type::kTrue || et == Type::kFalse) {
          ReadRawByte();  // list bools take one byte each
        } else {
          SkipValue(et, depth + 1);
        }
      }
      return;
    }
    case Type::kMap: {
      uint64_t n = ReadVarint();
      if (n == 0) return;
      if (n > bytes_.size() - pos_) Fail("map overruns the data");
      uint8_t kv = ReadRawByte();
      Type kt = static_cast<Type>(kv >> 4), vt = static_cast<Type>(kv & 0x0f);
      for (uint64_t i = 0; i < n; ++i) {
        for (Type t : {kt, vt}) {
          if (t == Type::kTrue || t == Type::kFalse) {
            ReadRawByte();
          } else {
            SkipValue(t, depth + 1);
          }
        }
      }
      return;
    }
    case Type::kStruct: {
      depth_ += depth;
      ReadStruct([&](int16_t, Type t) { SkipValue(t, 0); });
      depth_ -= depth;
      return;
    }
    default:
      Fail(StrCat("invalid wire type ", static_cast<int>(type)));
  }
}

void CompactWriter::WriteVarint(uint64_t v) {
  while (v >= 0x80) {
    out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_->push_back(static_cast<char>(v));
}

static uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }

void CompactWriter::StructBegin() {
  stack_.append(reinterpret_cast<const char*>(&last_field_), 2);
  last_field_ = 0;
}

void CompactWriter::StructEnd() {
  out_->push_back(0);
  std::memcpy(&last_field_, stack_.data() + stack_.size() - 2, 2);
  stack_.resize(stack_.size() - 2);
}

void CompactWriter::FieldBegin(int16_t id, Type type) {
  int delta = id - last_field_;
  if (delta > 0 && delta <= 15) {
    out_->push_back(static_cast<char>((delta << 4) | static_cast<uint8_t>(type)));
  } else {
    out_->push_back(static_cast<char>(type));
    WriteVarint(ZigZag(id));
  }
  last_field_ = id;
}

void CompactWriter::WriteBoolField(int16_t id, bool value) { FieldBegin(id, value ? Type::kTrue : Type::kFalse); }
void CompactWriter::WriteI32Field(int16_t id, int32_t value) {
  FieldBegin(id, Type::kI32);
  WriteI32(value);
}
void CompactWriter::WriteI64Field(int16_t id, int64_t value) {
  FieldBegin(id, Type::kI64);
  WriteI64(value);
}
void CompactWriter::WriteBinaryField(int16_t id, std::string_view value) {
  FieldBegin(id, Type::kBinary);
  WriteBinary(value);
}
void CompactWriter::ListBegin(Type element_type, uint32_t size) {
  if (size < 15) {
    out_->push_back(static_cast<char>((size << 4) | static_cast<uint8_t>(element_type)));
  } else {
    out_->push_back(static_cast<char>(0xf0 | static_cast<uint8_t>(element_type)));
    WriteVarint(size);
  }
}
void CompactWriter::WriteI32(int32_t value) { WriteVarint(ZigZag(value)); }
void CompactWriter::WriteI64(int64_t value) { WriteVarint(ZigZag(value)); }
void CompactWriter::WriteByte(int8_t value) { out_->push_back(static_cast<char>(value)); }
void CompactWriter::WriteBinary(std::string_view value) {
  WriteVarint(value.size());
  out_->append(value);
}

}  // namespace lakerun::parquet::thrift
