// Lists of strings (array<string>) and maps with string keys (map<string, V>, whose keys are the list column
// "m.key") reach the loader as raw bytes: the batch's elements concatenated, their byte offsets and each row's
// element count, with null lists and null elements masked; deletion vectors and filters keep them aligned.
#include <ATen/ATen.h>
#include <gmock/gmock.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/column_policy.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/delta/actions.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/deletion_vector.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;
using pq::LogicalType;
using pq::PhysicalType;
using pq::Value;

constexpr int64_t kRows = 30;

// A row's list of strings: std::nullopt for a null list, a std::nullopt element for a null element.
using Strings = std::optional<std::vector<std::optional<std::string>>>;
// A row's map: std::nullopt for a null map, a std::nullopt value for a null value.
using Entries = std::optional<std::vector<std::pair<std::string, std::optional<int32_t>>>>;

// Row `id`'s tags: every sixth row empty, null, holding a null element, multi-byte UTF-8 or an embedded NUL.
Strings TagsOf(int64_t id) {
  const std::string n = std::to_string(id);
  switch (id % 6) {
    case 0: return std::vector<std::optional<std::string>>{"a" + n, "", "héllo wörld"};
    case 1: return std::vector<std::optional<std::string>>{};
    case 2: return std::nullopt;
    case 3: return std::vector<std::optional<std::string>>{"日本語", std::nullopt, "\xf0\x9f\x99\x82" + n};
    case 4: return std::vector<std::optional<std::string>>{std::string("nul\0byte", 8) + n};
    default: return std::vector<std::optional<std::string>>{"x" + n, "yy", "z"};
  }
}

// Row `id`'s map: every fifth row empty, null, or holding a null value.
Entries MapOf(int64_t id) {
  const auto i = static_cast<int32_t>(id);
  switch (id % 5) {
    case 0: return std::vector<std::pair<std::string, std::optional<int32_t>>>{{"k" + std::to_string(id), i},
                                                                               {"ключ", -i}};
    case 1: return std::vector<std::pair<std::string, std::optional<int32_t>>>{};
    case 2: return std::vector<std::pair<std::string, std::optional<int32_t>>>{{"solo", 10 * i}};
    case 3: return std::nullopt;
    default: return std::vector<std::pair<std::string, std::optional<int32_t>>>{{"a", 1}, {"b", std::nullopt}};
  }
}

// The map's keys as a list of strings (keys are never null).
Strings KeysOf(int64_t id) {
  const Entries entries = MapOf(id);
  if (!entries) return std::nullopt;
  std::vector<std::optional<std::string>> keys;
  for (const auto& [key, value] : *entries) keys.emplace_back(key);
  return keys;
}

Value RowOf(int64_t id) {
  Value tags;
  if (const Strings t = TagsOf(id)) {
    std::vector<Value> items;
    for (const auto& e : *t) items.push_back(e ? Value::String(*e) : Value::Null());
    tags = Value::List(std::move(items));
  }
  Value map;
  if (const Entries m = MapOf(id)) {
    std::vector<std::pair<Value, Value>> entries;
    for (const auto& [k, v] : *m) entries.emplace_back(Value::String(k), v ? Value::Int(*v) : Value::Null());
    map = Value::Map(std::move(entries));
  }
  return Value::Struct({{"id", Value::Int(id)}, {"tags", std::move(tags)}, {"m", std::move(map)}});
}

std::vector<Value> Rows() {
  std::vector<Value> rows;
  for (int64_t id = 0; id < kRows; ++id) rows.push_back(RowOf(id));
  return rows;
}

// A Parquet file of Rows() in row groups of 7 rows: id int64, tags array<string>, m map<string, int32>.
std::string WriteFile(const testing::TempDir& dir) {
  const std::string path = dir.Join("lists.parquet");
  pq::WriterOptions options;
  options.row_group_rows = 7;
  pq::ParquetWriter writer(
      LocalFileSystem(), path,
      pq::Schema::FromFields(
          {pq::Leaf("id", PhysicalType::kInt64),
           pq::ListOf("tags", pq::Leaf("element", PhysicalType::kByteArray, pq::Repetition::kOptional,
                                       LogicalType::String())),
           pq::MapOf("m", pq::Leaf("key", PhysicalType::kByteArray, pq::Repetition::kRequired, LogicalType::String()),
                     pq::Leaf("value", PhysicalType::kInt32, pq::Repetition::kOptional))}),
      options);
  writer.WriteRows(Rows());
  writer.Close();
  return path;
}

// The same rows as a Delta table (one data file, row groups of 7 rows) with rows `deleted` removed by a deletion
// vector.
std::string WriteDeltaTable(const testing::TempDir& dir, const std::vector<uint64_t>& deleted) {
  const std::string root = dir.Join("table");
  const auto schema = delta::ParseSchema(R"j({"type":"struct","fields":[
    {"name":"id","type":"long","nullable":false,"metadata":{}},
    {"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},
    {"name":"m","type":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":true},
     "nullable":true,"metadata":{}}]})j", "test");
  delta::CreateTableOptions create;
  create.protocol.min_reader_version = 3;
  create.protocol.min_writer_version = 7;
  create.protocol.reader_features = std::vector<std::string>{"deletionVectors"};
  create.protocol.writer_features = std::vector<std::string>{"deletionVectors"};
  delta::DeltaTable table = delta::CreateTable(root, schema, create);
  delta::WriteOptions write;
  write.parquet.row_group_rows = 7;
  delta::AppendRows(table, Rows(), write);
  const delta::Snapshot snapshot = table.Latest();
  LAKERUN_CHECK(snapshot.files.size() == 1, "expected one data file");
  delta::AddFile with_dv = snapshot.files[0];
  with_dv.deletion_vector = delta::InlineDeletionVector(deleted);
  delta::ActionSet del;
  del.removes.push_back(delta::RemoveOf(snapshot.files[0], 1));
  del.adds.push_back(with_dv);
  delta::Commit(table, del, {});
  return root;
}

std::vector<int64_t> Longs(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

std::vector<int> Flags(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kInt).contiguous();
  return std::vector<int>(c.data_ptr<int>(), c.data_ptr<int>() + c.numel());
}

std::string AsBytes(const at::Tensor& t) {
  EXPECT_EQ(t.scalar_type(), at::kByte);
  return std::string(static_cast<const char*>(t.data_ptr()), static_cast<size_t>(t.numel()));
}

// Checks raw-bytes list column `column` of `b` against `expected(sample id)`: exact bytes, per-element offsets,
// lengths, and (with `masks`) the row and element masks.
void ExpectListBytes(const Batch& b, const std::string& column, const std::function<Strings(int64_t)>& expected,
                     bool masks) {
  SCOPED_TRACE(column);
  std::string bytes;
  std::vector<int64_t> offsets{0}, lengths;
  std::vector<int> valid, element_valid;
  for (const int64_t id : Longs(b.sample_ids)) {
    const Strings row = expected(id);
    valid.push_back(row.has_value());
    lengths.push_back(row ? static_cast<int64_t>(row->size()) : 0);
    if (!row) continue;
    for (const auto& e : *row) {
      bytes += e.value_or("");
      offsets.push_back(static_cast<int64_t>(bytes.size()));
      element_valid.push_back(e.has_value());
    }
  }
  EXPECT_EQ(AsBytes(b.at(column)), bytes);
  EXPECT_EQ(Longs(b.at(column + kOffsetsSuffix)), offsets);
  EXPECT_EQ(Longs(b.at(column + kLengthsSuffix)), lengths);
  if (masks) {
    EXPECT_EQ(Flags(b.at(column + kValidSuffix)), valid);
    EXPECT_EQ(Flags(b.at(column + kElementValidSuffix)), element_valid);
  } else {
    EXPECT_EQ(b.tensors.count(column + kValidSuffix), 0u);
    EXPECT_EQ(b.tensors.count(column + kElementValidSuffix), 0u);
  }
  // Batch::list_bytes reads the same elements back, row by row and for all rows at once.
  const std::vector<int64_t> ids = Longs(b.sample_ids);
  const std::vector<std::vector<std::string_view>> all = b.list_bytes(column);
  ASSERT_EQ(all.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(all[i], b.list_bytes(column, static_cast<int64_t>(i))) << "sample " << i;
    std::vector<std::string> want, got;
    if (const Strings row = expected(ids[i])) {
      for (const auto& e : *row) want.push_back(e.value_or(""));
    }
    for (std::string_view v : b.list_bytes(column, static_cast<int64_t>(i))) got.emplace_back(v);
    EXPECT_EQ(got, want) << "sample " << i << " (row " << ids[i] << ")";
  }
}

// Checks "m.value" (int32 lists padded by a ListPolicy, nulls filled with -7) against MapOf(sample id), element by
// element alongside the keys: same lengths as "m.key".
void ExpectMapValues(const Batch& b) {
  const std::vector<int64_t> ids = Longs(b.sample_ids);
  const at::Tensor values = b.at("m.value");
  ASSERT_EQ(values.scalar_type(), at::kInt);
  EXPECT_EQ(Longs(b.at("m.value.lengths")), Longs(b.at("m.key.lengths")));
  for (size_t i = 0; i < ids.size(); ++i) {
    const Entries m = MapOf(ids[i]);
    const std::vector<std::string_view> keys = b.list_bytes("m.key", static_cast<int64_t>(i));
    ASSERT_EQ(keys.size(), m ? m->size() : 0u) << "row " << ids[i];
    EXPECT_EQ(b.at("m.value.valid")[static_cast<int64_t>(i)].item<bool>(), m.has_value()) << "row " << ids[i];
    for (size_t k = 0; k < keys.size(); ++k) {
      EXPECT_EQ(keys[k], (*m)[k].first) << "row " << ids[i];
      EXPECT_EQ(values[static_cast<int64_t>(i)][static_cast<int64_t>(k)].item<int32_t>(),
                (*m)[k].second.value_or(-7))
          << "row " << ids[i] << " key " << keys[k];
    }
  }
}

// Options reading tags and the map's keys as raw bytes, with null policies (masks) on every list column.
LoaderOptions ListOptions() {
  LoaderOptions o;
  o.raw_bytes = {"tags", "m.key"};
  o.nulls["tags"] = {};
  o.nulls["m.key"] = {};
  o.nulls["m.value"].fill_value = -7;
  o.lists["m.value"] = {};
  return o;
}

// The table's rows in order, in one batch.
Batch ReadAll(const std::shared_ptr<RowSource>& source, LoaderOptions o) {
  o.batch_size = static_cast<int64_t>(source->num_rows());
  o.shuffle.enabled = false;
  Loader loader(source, o);
  std::optional<Batch> b = loader.Next();
  LAKERUN_CHECK(b.has_value(), "no batch");
  return *b;
}

std::vector<int64_t> Range(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(i);
  return out;
}

TEST(TableListsTest, ListsOfStringsAreRawBytesWithElementOffsetsAndLengths) {
  testing::TempDir dir;
  const std::string path = WriteFile(dir);
  TableOptions t;
  t.columns = {"id", "tags"};
  const auto source = OpenTable(path, t);
  ASSERT_EQ(source->columns().size(), 2u);
  const ColumnInfo& tags = source->columns()[1];
  EXPECT_EQ(tags.type, ElementType::kBinary);
  EXPECT_TRUE(tags.is_list);
  EXPECT_TRUE(tags.nullable);
  EXPECT_EQ(source->num_units(), 5u);  // row groups of 7 rows

  LoaderOptions o;
  o.raw_bytes = {"tags"};
  o.nulls["tags"] = {};
  const Batch b = ReadAll(source, o);
  EXPECT_EQ(Longs(b.sample_ids), Range(kRows));
  ExpectListBytes(b, "tags", TagsOf, /*masks=*/true);
  const std::vector<std::string_view> row3 = b.list_bytes("tags", 3);
  EXPECT_THAT(row3, ::testing::ElementsAre("日本語", "", "\xf0\x9f\x99\x82" "3"));
  EXPECT_EQ(b.list_bytes("tags", 4)[0], std::string_view("nul\0byte4", 9));
  EXPECT_TRUE(b.list_bytes("tags", 1).empty());
  EXPECT_TRUE(b.list_bytes("tags", 2).empty());
  EXPECT_THROW_WITH(b.list_bytes("tags", kRows), InvalidArgument, "'tags'", "out of range");
  EXPECT_THROW_WITH(b.bytes("tags", 0), InvalidArgument, "'tags'", "list_bytes");
  EXPECT_THROW_WITH(b.strings("tags"), InvalidArgument, "'tags'", "list_bytes");
  EXPECT_THROW_WITH(b.list_bytes("id", 0), InvalidArgument, "'id'", "raw_bytes");

  // Without masks: the same bytes, no ".valid" / ".element_valid".
  o.nulls["tags"].emit_mask = false;
  ExpectListBytes(ReadAll(source, o), "tags", TagsOf, /*masks=*/false);
}

TEST(TableListsTest, ShuffledBatchesHoldEachSamplesElements) {
  testing::TempDir dir;
  const auto source = OpenTable(WriteFile(dir), {});
  LoaderOptions o = ListOptions();
  o.batch_size = 4;
  o.drop_last = false;
  o.shuffle.block_size = 3;
  o.shuffle.window_blocks = 4;
  o.seed = 7;
  Loader loader(source, o);
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    loader.SetEpoch(epoch);
    std::set<int64_t> seen;
    bool shuffled = false;
    int64_t next = 0;
    while (auto b = loader.Next()) {
      ExpectListBytes(*b, "tags", TagsOf, /*masks=*/true);
      ExpectListBytes(*b, "m.key", KeysOf, /*masks=*/true);
      ExpectMapValues(*b);
      for (const int64_t id : Longs(b->sample_ids)) {
        seen.insert(id);
        shuffled = shuffled || id != next++;
      }
    }
    EXPECT_EQ(seen.size(), static_cast<size_t>(kRows));
    EXPECT_TRUE(shuffled);
  }
}

TEST(TableListsTest, ListsOfStringsNeedRawBytesAndANullPolicyForNulls) {
  testing::TempDir dir;
  const std::string path = WriteFile(dir);
  TableOptions t;
  t.columns = {"tags"};
  const auto source = OpenTable(path, t);
  EXPECT_THROW_WITH(Loader(source, LoaderOptions{}), NotImplemented, "'tags'", "LoaderOptions::raw_bytes");
  LoaderOptions padded;
  padded.raw_bytes = {"tags"};
  padded.lists["tags"] = {};
  EXPECT_THROW_WITH(Loader(source, padded), InvalidArgument, "'tags'", "raw_bytes");
  LoaderOptions images;
  images.images["tags"] = {};
  EXPECT_THROW_WITH(Loader(source, images), InvalidArgument, "'tags'", "list");

  // A null list without a policy: the column, the file and the table row.
  LoaderOptions raw;
  raw.raw_bytes = {"tags"};
  EXPECT_THROW_WITH(ReadAll(source, raw), InvalidArgument, "column 'tags'", "lists.parquet", "table row 2",
                    "the list is null");
  // A null element without a policy, once the rows with null lists are filtered out (ids 0, 1, 3, 4, 5).
  t.columns = {"id", "tags"};
  t.filter = Filter::Parse("id < 6 and id != 2");
  const auto filtered = OpenTable(path, t);
  EXPECT_THROW_WITH(ReadAll(filtered, raw), InvalidArgument, "column 'tags'", "table row 2", "a list element");
  raw.nulls["tags"] = {};
  const Batch b = ReadAll(filtered, raw);
  EXPECT_EQ(Longs(b.at("id")), (std::vector<int64_t>{0, 1, 3, 4, 5}));
  const auto by_id = [&b](int64_t table_row) { return TagsOf(Longs(b.at("id"))[static_cast<size_t>(table_row)]); };
  ExpectListBytes(b, "tags", by_id, /*masks=*/true);
}

TEST(TableListsTest, DeletionVectorsAndFiltersKeepElementsAligned) {
  testing::TempDir dir;
  const std::vector<uint64_t> deleted = {0, 3, 4, 9, 14, 20, 29};
  const std::string root = WriteDeltaTable(dir, deleted);
  TableOptions t;
  t.columns = {"id", "tags", "m"};
  const auto source = OpenTable(root, t);
  std::vector<std::string> names;
  for (const ColumnInfo& c : source->columns()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "tags", "m.key", "m.value"}));
  std::vector<int64_t> kept;
  for (int64_t id = 0; id < kRows; ++id) {
    if (std::find(deleted.begin(), deleted.end(), static_cast<uint64_t>(id)) == deleted.end()) kept.push_back(id);
  }
  ASSERT_EQ(source->num_rows(), kept.size());
  // Table row i is the i-th row the deletion vector kept.
  const auto tags = [&kept](int64_t row) { return TagsOf(kept[static_cast<size_t>(row)]); };
  const auto keys = [&kept](int64_t row) { return KeysOf(kept[static_cast<size_t>(row)]); };
  const Batch b = ReadAll(source, ListOptions());
  EXPECT_EQ(Longs(b.at("id")), kept);
  ExpectListBytes(b, "tags", tags, /*masks=*/true);
  ExpectListBytes(b, "m.key", keys, /*masks=*/true);

  // A filter on another column drops more rows of the same units.
  t.filter = Filter::Parse("id > 10");
  const auto filtered = OpenTable(root, t);
  std::vector<int64_t> later;
  for (const int64_t id : kept) {
    if (id > 10) later.push_back(id);
  }
  const Batch f = ReadAll(filtered, ListOptions());
  EXPECT_EQ(Longs(f.at("id")), later);
  ExpectListBytes(f, "tags", [&later](int64_t row) { return TagsOf(later[static_cast<size_t>(row)]); }, true);
  ExpectListBytes(f, "m.key", [&later](int64_t row) { return KeysOf(later[static_cast<size_t>(row)]); }, true);
  const std::vector<int64_t> m_lengths = Longs(f.at("m.value.lengths"));
  for (size_t i = 0; i < later.size(); ++i) {
    const Entries m = MapOf(later[i]);
    EXPECT_EQ(m_lengths[i], m ? static_cast<int64_t>(m->size()) : 0) << "id " << later[i];
  }
}

TEST(TableListsTest, MapWithStringKeysReadsAsKeyAndValueListsRowByRow) {
  testing::TempDir dir;
  const auto source = OpenTable(WriteFile(dir), {});  // every column
  std::vector<std::string> names;
  for (const ColumnInfo& c : source->columns()) names.push_back(c.name);
  ASSERT_EQ(names, (std::vector<std::string>{"id", "tags", "m.key", "m.value"}));
  EXPECT_EQ(source->columns()[2].type, ElementType::kBinary);
  EXPECT_TRUE(source->columns()[2].is_list);
  EXPECT_EQ(source->columns()[3].type, ElementType::kInt32);
  EXPECT_TRUE(source->columns()[3].is_list);

  LoaderOptions o = ListOptions();
  o.raw_bytes = {"tags"};
  EXPECT_THROW_WITH(Loader(source, o), NotImplemented, "'m.key'", "raw_bytes");
  const Batch b = ReadAll(source, ListOptions());
  EXPECT_EQ(Longs(b.sample_ids), Range(kRows));
  ExpectListBytes(b, "m.key", KeysOf, /*masks=*/true);
  ExpectMapValues(b);
  EXPECT_THAT(b.list_bytes("m.key", 0), ::testing::ElementsAre("k0", "ключ"));
  EXPECT_EQ(b.at("m.value")[0][1].item<int32_t>(), 0);
  EXPECT_EQ(b.at("m.value")[4][1].item<int32_t>(), -7);  // a null value, filled
}

TEST(TableListsTest, MemoryRowSourceServesListsOfBinaryValues) {
  MemoryRowSource::Column words;
  words.info.name = "words";
  words.info.type = ElementType::kBinary;
  words.info.is_list = true;
  const std::string bytes = "abcdef";
  words.bytes.assign(bytes.begin(), bytes.end());
  words.offsets = {0, 2, 2, 3};              // rows: [ab, c], [], [def]
  words.value_offsets = {0, 2, 3, 6};
  MemoryRowSource::Column name;
  name.info.name = "name";
  name.info.type = ElementType::kBinary;
  name.bytes = {'x', 'y', 'z'};
  name.offsets = {0, 1, 3, 3};
  const auto source = std::make_shared<MemoryRowSource>(
      std::vector<MemoryRowSource::Column>{words, name}, /*unit_rows=*/2);
  LoaderOptions o;
  o.raw_bytes = {"words", "name"};
  const Batch b = ReadAll(source, o);
  EXPECT_THAT(b.list_bytes("words", 0), ::testing::ElementsAre("ab", "c"));
  EXPECT_TRUE(b.list_bytes("words", 1).empty());
  EXPECT_THAT(b.list_bytes("words", 2), ::testing::ElementsAre("def"));
  EXPECT_EQ(Longs(b.at("words.offsets")), (std::vector<int64_t>{0, 2, 3, 6}));
  EXPECT_EQ(Longs(b.at("words.lengths")), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(b.strings("name"), (std::vector<std::string>{"x", "yz", ""}));

  words.value_offsets = {0, 2};
  EXPECT_THROW_WITH(MemoryRowSource({words}, 2), InvalidArgument, "'words'", "value_offsets");
}

}  // namespace
}  // namespace lakerun::data
