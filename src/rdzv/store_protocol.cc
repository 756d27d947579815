#include "rdzv/store_protocol.h"

#include <cstring>

namespace lakerun::rdzv::internal {
namespace {

struct OpByte {
  StoreOp op;
  int legacy;
  int validated;
};

// The two numberings of the query-type byte (store_protocol.h).
constexpr OpByte kOpBytes[] = {
    {StoreOp::kValidate, -1, 0},    {StoreOp::kSet, 0, 1},         {StoreOp::kCompareSet, 1, 2},
    {StoreOp::kGet, 2, 3},          {StoreOp::kAdd, 3, 4},         {StoreOp::kCheck, 4, 5},
    {StoreOp::kWait, 5, 6},         {StoreOp::kGetNumKeys, 6, 7},  {StoreOp::kWatchKey, 7, -1},
    {StoreOp::kDeleteKey, 8, 8},    {StoreOp::kAppend, 9, 9},      {StoreOp::kMultiGet, 10, 10},
    {StoreOp::kMultiSet, 11, 11},   {StoreOp::kCancelWait, 12, 12}, {StoreOp::kPing, -1, 13},
    {StoreOp::kQueuePush, -1, 14},  {StoreOp::kQueuePop, -1, 15},  {StoreOp::kQueueLen, -1, 16},
};

bool OpFromByte(StoreDialect dialect, uint8_t byte, StoreOp* op) {
  for (const OpByte& entry : kOpBytes) {
    const int b = dialect == StoreDialect::kLegacy ? entry.legacy : entry.validated;
    if (b == byte) {
      *op = entry.op;
      return true;
    }
  }
  return false;
}

// Reads fixed-size fields and length-prefixed strings from a byte range; Need() turns false at the first field that
// has not fully arrived, and every later read is a no-op.
class Cursor {
 public:
  Cursor(const char* data, size_t size, const StoreLimits& limits) : data_(data), size_(size), limits_(limits) {}

  template <typename T>
  bool Read(T* v) {
    if (!ok_ || !Need(sizeof(T))) return false;
    std::memcpy(v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

  // A uint64 length, then that many bytes. Lengths past the request limit are an error before the bytes arrive.
  bool ReadString(const char* field, std::string* out) {
    uint64_t len = 0;
    if (!Read(&len)) return false;
    if (len > limits_.max_request_bytes || pos_ + len > limits_.max_request_bytes) {
      Fail(std::string(field) + " of " + std::to_string(len) + " bytes exceeds the request limit of " +
           std::to_string(limits_.max_request_bytes) + " bytes");
      return false;
    }
    if (!Need(static_cast<size_t>(len))) return false;
    out->assign(data_ + pos_, static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return true;
  }

  // A key count (uint64, or int64 for MULTI_SET) within limits.
  bool ReadCount(const char* op, size_t* n) {
    uint64_t count = 0;
    if (!Read(&count)) return false;
    if (count > limits_.max_keys) {
      Fail(std::string(op) + " with " + std::to_string(static_cast<int64_t>(count)) + " keys (at most " +
           std::to_string(limits_.max_keys) + ")");
      return false;
    }
    *n = static_cast<size_t>(count);
    return true;
  }

  void Fail(std::string message) {
    ok_ = false;
    error_ = std::move(message);
  }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  size_t pos() const { return pos_; }

 private:
  bool Need(size_t n) {
    if (size_ - pos_ < n) ok_ = false;
    return ok_;
  }

  const char* data_;
  size_t size_;
  const StoreLimits& limits_;
  size_t pos_ = 0;
  bool ok_ = true;
  std::string error_;
};

bool ReadKeys(Cursor& in, const char* op, StoreRequest* out) {
  size_t n = 0;
  if (!in.ReadCount(op, &n)) return false;
  // Grown as keys arrive: a count alone does not allocate.
  for (size_t i = 0; i < n; ++i) {
    out->keys.emplace_back();
    if (!in.ReadString("key", &out->keys.back())) return false;
  }
  return true;
}

bool ReadBody(Cursor& in, StoreRequest* out) {
  const char* name = StoreOpName(out->op);
  switch (out->op) {
    case StoreOp::kValidate:
    case StoreOp::kPing:
      return in.Read(&out->word);
    case StoreOp::kSet:
    case StoreOp::kAppend:
    case StoreOp::kQueuePush:
      out->keys.resize(1);
      out->values.resize(1);
      return in.ReadString("key", &out->keys[0]) && in.ReadString("value", &out->values[0]);
    case StoreOp::kCompareSet:
      out->keys.resize(1);
      out->values.resize(2);
      return in.ReadString("key", &out->keys[0]) && in.ReadString("expected value", &out->values[0]) &&
             in.ReadString("desired value", &out->values[1]);
    case StoreOp::kGet:
    case StoreOp::kWatchKey:
    case StoreOp::kDeleteKey:
    case StoreOp::kQueuePop:
    case StoreOp::kQueueLen:
      out->keys.resize(1);
      return in.ReadString("key", &out->keys[0]);
    case StoreOp::kAdd:
      out->keys.resize(1);
      return in.ReadString("key", &out->keys[0]) && in.Read(&out->integer);
    case StoreOp::kCheck:
    case StoreOp::kWait:
    case StoreOp::kMultiGet:
      return ReadKeys(in, name, out);
    case StoreOp::kMultiSet: {
      size_t n = 0;
      if (!in.ReadCount(name, &n)) return false;
      for (size_t i = 0; i < n; ++i) {
        out->keys.emplace_back();
        out->values.emplace_back();
        if (!in.ReadString("key", &out->keys.back()) || !in.ReadString("value", &out->values.back())) return false;
      }
      return true;
    }
    case StoreOp::kGetNumKeys:
    case StoreOp::kCancelWait:
      return true;
  }
  return true;
}

template <typename T>
void Put(std::string* out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out->append(bytes, sizeof(T));
}

}  // namespace

int QueryByte(StoreDialect dialect, StoreOp op) {
  for (const OpByte& entry : kOpBytes) {
    if (entry.op == op) return dialect == StoreDialect::kLegacy ? entry.legacy : entry.validated;
  }
  return -1;
}

const char* StoreOpName(StoreOp op) {
  switch (op) {
    case StoreOp::kValidate: return "VALIDATE";
    case StoreOp::kSet: return "SET";
    case StoreOp::kCompareSet: return "COMPARE_SET";
    case StoreOp::kGet: return "GET";
    case StoreOp::kAdd: return "ADD";
    case StoreOp::kCheck: return "CHECK";
    case StoreOp::kWait: return "WAIT";
    case StoreOp::kGetNumKeys: return "GETNUMKEYS";
    case StoreOp::kWatchKey: return "WATCH_KEY";
    case StoreOp::kDeleteKey: return "DELETE_KEY";
    case StoreOp::kAppend: return "APPEND";
    case StoreOp::kMultiGet: return "MULTI_GET";
    case StoreOp::kMultiSet: return "MULTI_SET";
    case StoreOp::kCancelWait: return "CANCEL_WAIT";
    case StoreOp::kPing: return "PING";
    case StoreOp::kQueuePush: return "QUEUE_PUSH";
    case StoreOp::kQueuePop: return "QUEUE_POP";
    case StoreOp::kQueueLen: return "QUEUE_LEN";
  }
  return "?";
}

StoreDialect DetectDialect(const char* data, size_t size) {
  if (size == 0) return StoreDialect::kUnknown;
  if (static_cast<uint8_t>(data[0]) != 0) return StoreDialect::kLegacy;
  if (size < 1 + sizeof(uint32_t)) return StoreDialect::kUnknown;
  uint32_t magic = 0;
  std::memcpy(&magic, data + 1, sizeof(magic));
  return magic == kValidationMagic ? StoreDialect::kValidated : StoreDialect::kLegacy;
}

ParseResult ParseRequest(StoreDialect dialect, const char* data, size_t size, const StoreLimits& limits,
                         StoreRequest* out) {
  ParseResult result;
  if (size == 0) return result;
  const auto byte = static_cast<uint8_t>(data[0]);
  *out = StoreRequest{};
  if (!OpFromByte(dialect, byte, &out->op)) {
    result.status = ParseStatus::kError;
    result.error = "unknown query type " + std::to_string(byte) +
                   (dialect == StoreDialect::kLegacy ? " (c10d <= 2.1 numbering)" : " (c10d >= 2.3 numbering)");
    return result;
  }
  Cursor in(data + 1, size - 1, limits);
  const bool complete = ReadBody(in, out);
  if (in.failed()) {
    result.status = ParseStatus::kError;
    result.error = std::string(StoreOpName(out->op)) + ": " + in.error();
    return result;
  }
  if (!complete) return result;
  result.status = ParseStatus::kDone;
  result.consumed = 1 + in.pos();
  return result;
}

void PutU8(std::string* out, uint8_t v) { out->push_back(static_cast<char>(v)); }
void PutU32(std::string* out, uint32_t v) { Put(out, v); }
void PutI64(std::string* out, int64_t v) { Put(out, v); }
void PutU64(std::string* out, uint64_t v) { Put(out, v); }
void PutBytes(std::string* out, const std::string& bytes) {
  Put<uint64_t>(out, bytes.size());
  out->append(bytes);
}

}  // namespace lakerun::rdzv::internal
