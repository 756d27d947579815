// c10d TCPStore's wire protocol, as the store server and client of lakerun::launch speak it (private).
//
// Every integer is in the host's byte order (c10d sends raw memory; all supported hosts are little-endian). A
// string or byte value is a uint64 length followed by that many bytes. A request is one query-type byte followed by
// its arguments; replies carry no type byte. Two numberings of the query-type byte exist:
//
//  - kLegacy: c10d up to 2.1 (libtorch 1.13 included). SET=0 COMPARE_SET=1 GET=2 ADD=3 CHECK=4 WAIT=5 GETNUMKEYS=6
//    WATCH_KEY=7 DELETE_KEY=8 APPEND=9 MULTI_GET=10 MULTI_SET=11 CANCEL_WAIT=12. A 1.13 client also opens a second
//    "callback" connection that sends nothing until watchKey() sends WATCH_KEY on it.
//  - kValidated: c10d 2.3 and later. VALIDATE=0 SET=1 COMPARE_SET=2 GET=3 ADD=4 CHECK=5 WAIT=6 GETNUMKEYS=7
//    DELETE_KEY=8 APPEND=9 MULTI_GET=10 MULTI_SET=11 CANCEL_WAIT=12 PING=13 QUEUE_PUSH=14 QUEUE_POP=15 QUEUE_LEN=16.
//    A client's first request is VALIDATE with the uint32 kValidationMagic; then it PINGs (uint32 nonce, echoed).
//
// The server tells them apart by the first request of each connection (DetectDialect): VALIDATE + magic selects
// kValidated, anything else kLegacy. (A legacy SET whose key length has 0x3C85F7CE as its low 32 bits is not a
// request any client sends.)
//
// Arguments and replies per operation (key/value = length-prefixed bytes, n = uint64 unless noted):
//   SET key value                      -> (none)
//   COMPARE_SET key expected desired   -> value: the current value after the operation (see the server)
//   GET key                            -> value (the key must exist; clients WAIT first)
//   ADD key int64                      -> int64 new value (stored as decimal text)
//   CHECK n key...                     -> uint8 0 all exist / 1 not all
//   WAIT n key...                      -> uint8 0 (STOP_WAITING) once all exist, at once or later
//   GETNUMKEYS                         -> int64
//   WATCH_KEY key (legacy)             -> uint8 3 (registered); later per change: uint8 type, key, old, new
//   DELETE_KEY key                     -> int64 number deleted (0 or 1)
//   APPEND key value                   -> (none)
//   MULTI_GET n key...                 -> n values
//   MULTI_SET int64 n (key value)...   -> (none)
//   CANCEL_WAIT                        -> uint8 1 (WAIT_CANCELED), after a STOP_WAITING that may already be on its way
//   VALIDATE uint32                    -> (none)
//   PING uint32                        -> uint32 (the same)
//   QUEUE_PUSH key value               -> (none)
//   QUEUE_POP key                      -> int64 0 (empty) | int64 1, value
//   QUEUE_LEN key                      -> int64
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lakerun::rdzv::internal {

inline constexpr uint32_t kValidationMagic = 0x3C85F7CE;

/// c10d's TCPStore client puts "/" before every key it sends (its keyPrefix_, 1.13 and 2.x alike), so key "k" of
/// the c10d API is "/k" on the wire. StoreServer's and StoreClient's methods do the same, so the launcher, lakerun
/// ranks and c10d clients see one key space.
inline std::string WireKey(const std::string& key) { return "/" + key; }

enum class StoreDialect : uint8_t { kUnknown, kLegacy, kValidated };

enum class StoreOp : uint8_t {
  kValidate,
  kSet,
  kCompareSet,
  kGet,
  kAdd,
  kCheck,
  kWait,
  kGetNumKeys,
  kWatchKey,
  kDeleteKey,
  kAppend,
  kMultiGet,
  kMultiSet,
  kCancelWait,
  kPing,
  kQueuePush,
  kQueuePop,
  kQueueLen,
};

/// The query-type byte of `op` in `dialect`; -1 if the dialect has no such operation.
int QueryByte(StoreDialect dialect, StoreOp op);
const char* StoreOpName(StoreOp op);

/// Reply bytes of CHECK, WAIT / CANCEL_WAIT and legacy WATCH_KEY.
inline constexpr uint8_t kCheckReady = 0;
inline constexpr uint8_t kCheckNotReady = 1;
inline constexpr uint8_t kStopWaiting = 0;
inline constexpr uint8_t kWaitCanceled = 1;
enum class WatchEvent : uint8_t { kUpdated = 0, kCreated = 1, kDeleted = 2, kCallbackRegistered = 3, kAppended = 4 };

struct StoreLimits {
  /// Largest request (all its fields together) a connection may send; a larger one closes the connection.
  size_t max_request_bytes = size_t{256} << 20;
  /// Most keys in one CHECK / WAIT / MULTI_GET / MULTI_SET.
  size_t max_keys = size_t{1} << 20;
};

/// One decoded request. `keys` holds the key(s), `values` the value(s) (COMPARE_SET: expected, desired; MULTI_SET:
/// one per key), `integer` the ADD delta, `word` the VALIDATE magic or PING nonce.
struct StoreRequest {
  StoreOp op = StoreOp::kSet;
  std::vector<std::string> keys;
  std::vector<std::string> values;
  int64_t integer = 0;
  uint32_t word = 0;
};

enum class ParseStatus : uint8_t { kNeedMore, kDone, kError };

struct ParseResult {
  ParseStatus status = ParseStatus::kNeedMore;
  /// Bytes the request took (kDone).
  size_t consumed = 0;
  /// What is wrong (kError): names the operation, the field and the bad value.
  std::string error;
};

/// The dialect of a connection from its first bytes: kUnknown while fewer than 5 bytes decide it.
StoreDialect DetectDialect(const char* data, size_t size);

/// Decodes one request from the start of data[0, size). kNeedMore never reads past `size`; a length beyond
/// `limits` or an unknown query byte is kError at once (before the bytes arrive).
ParseResult ParseRequest(StoreDialect dialect, const char* data, size_t size, const StoreLimits& limits,
                         StoreRequest* out);

/// Encoding helpers (requests and replies).
void PutU8(std::string* out, uint8_t v);
void PutU32(std::string* out, uint32_t v);
void PutI64(std::string* out, int64_t v);
void PutU64(std::string* out, uint64_t v);
void PutBytes(std::string* out, const std::string& bytes);

}  // namespace lakerun::rdzv::internal
