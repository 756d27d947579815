// Nested data: Dremel levels for LIST, MAP and STRUCT (standard and legacy shapes), assembly and shredding.
#include "format/parquet/parquet_test_util.h"
#include "lakerun_testing/matchers.h"

namespace lakerun::parquet {
namespace {

using testing::MemFile;

Value L(std::vector<Value> items) { return Value::List(std::move(items)); }
Value I(int64_t v) { return Value::Int(v); }
Value S(std::string v) { return Value::String(std::move(v)); }

TEST(NestedTest, ListLevelsMatchTheDremelPaper) {
  // optional group a (LIST) { repeated group list { optional int32 element } }
  Schema schema = Schema::FromFields({ListOf("a", Leaf("element", PhysicalType::kInt32, Repetition::kOptional))});
  const auto& c = schema.column(0);
  EXPECT_EQ(c.dotted_path, "a.list.element");
  EXPECT_EQ(c.max_def_level, 3);
  EXPECT_EQ(c.max_rep_level, 1);
  std::vector<Value> rows = {Value::Struct({{"a", L({I(1), Value::Null()})}}), Value::Struct({{"a", Value::Null()}}),
                             Value::Struct({{"a", L({})}}), Value::Struct({{"a", L({I(3)})}})};
  std::vector<ColumnData> cols = ShredRecords(schema, rows);
  EXPECT_EQ(cols[0].def_levels(), (std::vector<int16_t>{3, 2, 0, 1, 3}));
  EXPECT_EQ(cols[0].rep_levels(), (std::vector<int16_t>{0, 1, 0, 0, 0}));
  EXPECT_EQ(cols[0].num_values(), 2);
  MemFile f;
  f.Write(schema, cols);
  EXPECT_EQ(f.ReadAll(), rows);
}

TEST(NestedTest, StructsMapsAndListsOfStructsRoundTrip) {
  Schema schema = Schema::FromFields({
      Leaf("id", PhysicalType::kInt64),
      Group("st",
            {Leaf("x", PhysicalType::kFloat, Repetition::kOptional),
             ListOf("y", Leaf("element", PhysicalType::kInt64), Repetition::kRequired)},
            Repetition::kOptional),
      MapOf("m", Leaf("key", PhysicalType::kByteArray, Repetition::kRequired, LogicalType::String()),
            Leaf("value", PhysicalType::kInt32, Repetition::kOptional)),
      ListOf("ls",
             Group("element", {Leaf("a", PhysicalType::kInt64),
                               Leaf("b", PhysicalType::kByteArray, Repetition::kOptional, LogicalType::String())},
                   Repetition::kOptional)),
      ListOf("nested", ListOf("element", Leaf("element", PhysicalType::kInt32), Repetition::kOptional)),
  });
  std::vector<Value> rows;
  for (int i = 0; i < 50; ++i) {
    Value st = i % 4 == 3 ? Value::Null()
                          : Value::Struct({{"x", i % 3 ? Value::Float(i * 0.5f) : Value::Null()},
                                           {"y", L(std::vector<Value>(static_cast<size_t>(i % 3), I(i)))}});
    std::vector<std::pair<Value, Value>> entries;
    for (int k = 0; k < i % 4; ++k) entries.emplace_back(S("k" + std::to_string(k)), k == 1 ? Value::Null() : I(i * k));
    Value m = i % 7 == 0 ? Value::Null() : Value::Map(entries);
    std::vector<Value> ls;
    for (int k = 0; k < i % 3; ++k) {
      ls.push_back(k == 1 ? Value::Null()
                          : Value::Struct({{"a", I(k)}, {"b", i % 2 ? S("v" + std::to_string(i)) : Value::Null()}}));
    }
    std::vector<Value> outer;
    for (int k = 0; k < i % 3; ++k) outer.push_back(k == 1 ? Value::Null() : L({I(i), I(k)}));
    if (i % 5 == 0) outer.push_back(L({}));
    rows.push_back(Value::Struct({{"id", I(i)}, {"st", st}, {"m", m}, {"ls", i % 6 == 5 ? Value::Null() : L(ls)},
                                  {"nested", L(outer)}}));
  }
  for (int version : {1, 2}) {
    WriterOptions opts;
    opts.page_version = version;
    opts.page_bytes = 64;
    opts.row_group_rows = 17;
    MemFile f;
    f.WriteRows(schema, rows, opts);
    auto back = f.ReadAll();
    ASSERT_EQ(back.size(), rows.size());
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(back[i], rows[i]) << i << ": " << back[i].ToString();
  }
}

TEST(NestedTest, ProjectionAssemblesOnlySelectedLeaves) {
  Schema schema = Schema::FromFields({Leaf("id", PhysicalType::kInt64),
                                      Group("st", {Leaf("x", PhysicalType::kInt32), Leaf("y", PhysicalType::kInt32)})});
  std::vector<Value> rows = {Value::Struct({{"id", I(1)}, {"st", Value::Struct({{"x", I(2)}, {"y", I(3)}})}})};
  MemFile f;
  f.WriteRows(schema, rows);
  auto file = f.Open();
  TableReadOptions o;
  o.columns = {"st.y"};
  TableReader r(*file, o);
  EXPECT_EQ(r.columns(), std::vector<int>{2});
  auto got = r.ReadRows(10);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].ToString(), "{\"st\": {\"y\": 3}}");
}

// Builds a file whose schema uses a legacy shape; values are shredded through the same schema.
std::vector<Value> RoundTrip(const SchemaNode& field, const std::vector<Value>& rows) {
  MemFile f;
  f.WriteRows(Schema::FromFields({field}), rows);
  return f.ReadAll();
}

TEST(NestedTest, LegacyTwoLevelListOfPrimitives) {
  // optional group arr (LIST) { repeated int32 array; }  (rule 1: a repeated primitive is the element)
  SchemaNode arr = Group("arr", {Leaf("array", PhysicalType::kInt32, Repetition::kRepeated)}, Repetition::kOptional,
                         LogicalType::List());
  std::vector<Value> rows = {Value::Struct({{"arr", L({I(1), I(2)})}}), Value::Struct({{"arr", L({})}}),
                             Value::Struct({{"arr", Value::Null()}})};
  EXPECT_EQ(RoundTrip(arr, rows), rows);
  Schema s = Schema::FromFields({arr});
  EXPECT_EQ(s.column(0).max_def_level, 2);
  EXPECT_EQ(s.column(0).max_rep_level, 1);
}

TEST(NestedTest, LegacyTupleAndArrayNamedGroupsAreElements) {
  // Rule 3: a repeated group with one field named "array" or "<list>_tuple" is itself the element (a struct).
  for (const std::string name : {"array", "x_tuple"}) {
    SchemaNode x = Group("x", {Group(name, {Leaf("a", PhysicalType::kInt32)}, Repetition::kRepeated)},
                         Repetition::kOptional, LogicalType::List());
    std::vector<Value> rows = {Value::Struct({{"x", L({Value::Struct({{"a", I(7)}}), Value::Struct({{"a", I(8)}})})}})};
    EXPECT_EQ(RoundTrip(x, rows), rows) << name;
  }
  // Rule 2: a repeated group with two fields is the element.
  SchemaNode y = Group("y", {Group("pair", {Leaf("a", PhysicalType::kInt32), Leaf("b", PhysicalType::kInt32)},
                                   Repetition::kRepeated)},
                       Repetition::kRequired, LogicalType::List());
  std::vector<Value> rows = {Value::Struct({{"y", L({Value::Struct({{"a", I(1)}, {"b", I(2)}})})}})};
  EXPECT_EQ(RoundTrip(y, rows), rows);
}

TEST(NestedTest, ListElementNamesAreNotRequired) {
  // parquet-rs and older pyarrow write "item"; any name works.
  SchemaNode list = Group("l", {Group("whatever", {Leaf("item", PhysicalType::kInt64, Repetition::kOptional)},
                                      Repetition::kRepeated)},
                          Repetition::kOptional, LogicalType::List());
  std::vector<Value> rows = {Value::Struct({{"l", L({I(1), Value::Null(), I(3)})}})};
  EXPECT_EQ(RoundTrip(list, rows), rows);
}

TEST(NestedTest, BareRepeatedFieldsAreLists) {
  SchemaNode tags = Leaf("tags", PhysicalType::kByteArray, Repetition::kRepeated, LogicalType::String());
  std::vector<Value> rows = {Value::Struct({{"tags", L({S("a"), S("b")})}}), Value::Struct({{"tags", L({})}})};
  EXPECT_EQ(RoundTrip(tags, rows), rows);
}

TEST(NestedTest, MapKeyValueConvertedTypeIsAMap) {
  SchemaNode kv = Group("map", {Leaf("key", PhysicalType::kInt32), Leaf("value", PhysicalType::kInt32)},
                        Repetition::kRepeated);
  kv.converted_type = ConvertedType::kMapKeyValue;
  SchemaNode m = Group("m", {kv}, Repetition::kOptional);
  std::vector<Value> rows = {Value::Struct({{"m", Value::Map({{I(1), I(10)}, {I(2), I(20)}})}})};
  EXPECT_EQ(RoundTrip(m, rows), rows);
}

TEST(NestedTest, ConvertedTypeOnlyFilesGetLogicalTypes) {
  // DuckDB writes ConvertedType only for strings, ints and DATE.
  SchemaNode s = Leaf("s", PhysicalType::kByteArray);
  s.converted_type = ConvertedType::kUtf8;
  SchemaNode d = Leaf("d", PhysicalType::kInt32);
  d.converted_type = ConvertedType::kDate;
  SchemaNode u = Leaf("u", PhysicalType::kInt32);
  u.converted_type = ConvertedType::kUint16;
  SchemaNode dec = Leaf("dec", PhysicalType::kInt64);
  dec.converted_type = ConvertedType::kDecimal;
  MemFile f;
  std::vector<Value> rows = {Value::Struct({{"s", S("x")}, {"d", I(3)}, {"u", I(65535)}, {"dec", I(5)}})};
  f.WriteRows(Schema::FromFields({s, d, u, dec}), rows);
  auto file = f.Open();
  EXPECT_EQ(file->schema().column(0).logical_type, LogicalType::String());
  EXPECT_EQ(file->schema().column(1).logical_type, LogicalType::Date());
  EXPECT_EQ(file->schema().column(2).logical_type, LogicalType::Int(16, false));
  EXPECT_EQ(file->schema().column(3).logical_type.kind, LogicalType::Kind::kDecimal);
  EXPECT_EQ(f.ReadAll(), rows);
}

TEST(NestedTest, FixedListLengthRecognisesOnlyUniformLists) {
  Schema schema = Schema::FromFields({ListOf("v", Leaf("element", PhysicalType::kFloat))});
  auto make = [&](std::vector<int> lengths) {
    std::vector<Value> rows;
    for (int n : lengths) rows.push_back(Value::Struct({{"v", L(std::vector<Value>(n, Value::Float(1)))}}));
    return ShredRecords(schema, rows)[0];
  };
  EXPECT_EQ(make({3, 3, 3}).FixedListLength(), 3);
  EXPECT_EQ(make({3, 2, 3}).FixedListLength(), std::nullopt);
  EXPECT_EQ(make({0, 0}).FixedListLength(), std::nullopt);
}

TEST(NestedTest, ShredderRejectsValuesThatDoNotFit) {
  Schema schema = Schema::FromFields({Leaf("a", PhysicalType::kInt32)});
  const std::vector<Value> null_row = {Value::Struct({{"a", Value::Null()}})};
  const std::vector<Value> big_row = {Value::Struct({{"a", I(1LL << 40)}})};
  const std::vector<Value> text_row = {Value::Struct({{"a", S("x")}})};
  EXPECT_THROW_WITH(ShredRecords(schema, null_row), InvalidArgument, "row 0", "'a'", "required");
  EXPECT_THROW_WITH(ShredRecords(schema, big_row), InvalidArgument, "does not fit");
  EXPECT_THROW_WITH(ShredRecords(schema, text_row), InvalidArgument, "expected an integer");
}

}  // namespace
}  // namespace lakerun::parquet
