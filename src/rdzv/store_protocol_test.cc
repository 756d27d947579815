#include "rdzv/store_protocol.h"

#include <string>

#include "lakerun_testing/matchers.h"

namespace lakerun::rdzv::internal {
namespace {

std::string Request(StoreDialect dialect, StoreOp op) {
  std::string r;
  PutU8(&r, static_cast<uint8_t>(QueryByte(dialect, op)));
  return r;
}

TEST(StoreProtocolTest, NumberingsDifferWhereC10dChangedThem) {
  EXPECT_EQ(QueryByte(StoreDialect::kLegacy, StoreOp::kSet), 0);
  EXPECT_EQ(QueryByte(StoreDialect::kValidated, StoreOp::kSet), 1);
  EXPECT_EQ(QueryByte(StoreDialect::kLegacy, StoreOp::kWatchKey), 7);
  EXPECT_EQ(QueryByte(StoreDialect::kValidated, StoreOp::kWatchKey), -1);
  EXPECT_EQ(QueryByte(StoreDialect::kLegacy, StoreOp::kDeleteKey), 8);
  EXPECT_EQ(QueryByte(StoreDialect::kValidated, StoreOp::kDeleteKey), 8);
  EXPECT_EQ(QueryByte(StoreDialect::kValidated, StoreOp::kPing), 13);
  EXPECT_EQ(QueryByte(StoreDialect::kLegacy, StoreOp::kPing), -1);
}

TEST(StoreProtocolTest, DetectsTheDialectFromTheFirstRequest) {
  std::string validate = Request(StoreDialect::kValidated, StoreOp::kValidate);
  PutU32(&validate, kValidationMagic);
  EXPECT_EQ(DetectDialect(validate.data(), 0), StoreDialect::kUnknown);
  EXPECT_EQ(DetectDialect(validate.data(), 3), StoreDialect::kUnknown);
  EXPECT_EQ(DetectDialect(validate.data(), validate.size()), StoreDialect::kValidated);
  std::string legacy_set = Request(StoreDialect::kLegacy, StoreOp::kSet);
  PutBytes(&legacy_set, "key");
  EXPECT_EQ(DetectDialect(legacy_set.data(), legacy_set.size()), StoreDialect::kLegacy);
  std::string legacy_get = Request(StoreDialect::kLegacy, StoreOp::kGet);
  EXPECT_EQ(DetectDialect(legacy_get.data(), 1), StoreDialect::kLegacy);
}

TEST(StoreProtocolTest, ParsesOnlyCompleteRequests) {
  std::string r = Request(StoreDialect::kValidated, StoreOp::kCompareSet);
  PutBytes(&r, "k");
  PutBytes(&r, "old");
  PutBytes(&r, std::string("n\0w", 3));
  r += "trailing";
  const size_t whole = r.size() - 8;
  StoreRequest req;
  for (size_t cut = 0; cut < whole; ++cut) {
    EXPECT_EQ(ParseRequest(StoreDialect::kValidated, r.data(), cut, StoreLimits{}, &req).status,
              ParseStatus::kNeedMore)
        << cut;
  }
  const ParseResult done = ParseRequest(StoreDialect::kValidated, r.data(), r.size(), StoreLimits{}, &req);
  ASSERT_EQ(done.status, ParseStatus::kDone);
  EXPECT_EQ(done.consumed, whole);
  EXPECT_EQ(req.op, StoreOp::kCompareSet);
  ASSERT_EQ(req.keys.size(), 1u);
  EXPECT_EQ(req.keys[0], "k");
  ASSERT_EQ(req.values.size(), 2u);
  EXPECT_EQ(req.values[0], "old");
  EXPECT_EQ(req.values[1], std::string("n\0w", 3));
}

TEST(StoreProtocolTest, ParsesKeyListsAndMultiSet) {
  std::string wait = Request(StoreDialect::kLegacy, StoreOp::kWait);
  PutU64(&wait, 2);
  PutBytes(&wait, "a");
  PutBytes(&wait, "bb");
  StoreRequest req;
  ASSERT_EQ(ParseRequest(StoreDialect::kLegacy, wait.data(), wait.size(), StoreLimits{}, &req).status,
            ParseStatus::kDone);
  EXPECT_EQ(req.op, StoreOp::kWait);
  EXPECT_EQ(req.keys, (std::vector<std::string>{"a", "bb"}));

  std::string multi = Request(StoreDialect::kValidated, StoreOp::kMultiSet);
  PutI64(&multi, 2);
  PutBytes(&multi, "x");
  PutBytes(&multi, "1");
  PutBytes(&multi, "y");
  PutBytes(&multi, "2");
  ASSERT_EQ(ParseRequest(StoreDialect::kValidated, multi.data(), multi.size(), StoreLimits{}, &req).status,
            ParseStatus::kDone);
  EXPECT_EQ(req.keys, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(req.values, (std::vector<std::string>{"1", "2"}));
}

TEST(StoreProtocolTest, RejectsUnknownTypesAndOversizedFieldsBeforeTheyArrive) {
  StoreRequest req;
  const std::string unknown(1, static_cast<char>(200));
  const ParseResult bad = ParseRequest(StoreDialect::kLegacy, unknown.data(), 1, StoreLimits{}, &req);
  EXPECT_EQ(bad.status, ParseStatus::kError);
  EXPECT_THAT(bad.error, ::testing::HasSubstr("unknown query type 200"));
  // PING exists only in the >= 2.3 numbering.
  const std::string ping(1, static_cast<char>(13));
  EXPECT_EQ(ParseRequest(StoreDialect::kLegacy, ping.data(), 1, StoreLimits{}, &req).status, ParseStatus::kError);

  StoreLimits small;
  small.max_request_bytes = 100;
  std::string huge = Request(StoreDialect::kValidated, StoreOp::kSet);
  PutU64(&huge, 1000);  // only the length has arrived
  const ParseResult too_big = ParseRequest(StoreDialect::kValidated, huge.data(), huge.size(), small, &req);
  EXPECT_EQ(too_big.status, ParseStatus::kError);
  EXPECT_THAT(too_big.error, ::testing::HasSubstr("SET: key of 1000 bytes exceeds the request limit of 100"));

  small.max_keys = 4;
  std::string many = Request(StoreDialect::kValidated, StoreOp::kMultiGet);
  PutU64(&many, 5);
  const ParseResult too_many = ParseRequest(StoreDialect::kValidated, many.data(), many.size(), small, &req);
  EXPECT_EQ(too_many.status, ParseStatus::kError);
  EXPECT_THAT(too_many.error, ::testing::HasSubstr("MULTI_GET with 5 keys (at most 4)"));
}

}  // namespace
}  // namespace lakerun::rdzv::internal
