// Nested lists (array<array<T>>, three levels too) reach the loader as tensors with one dimension per level: a
// fixed shape needs no policy; a ListPolicy pads the outermost level or lays its elements out flat. Inner lists of
// another length, and null inner lists, are refused with the row named. Flat layout also applies to one-level lists.
#include <ATen/ATen.h>
#include <gmock/gmock.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lakerun/base/error.h"
#include "lakerun/data/column_policy.h"
#include "lakerun/data/loader.h"
#include "lakerun/data/table_source.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/parquet/schema.h"
#include "lakerun/format/parquet/writer.h"
#include "lakerun_testing/matchers.h"
#include "lakerun_testing/temp_dir.h"

namespace lakerun::data {
namespace {

namespace pq = lakerun::parquet;
using pq::PhysicalType;
using pq::Value;

constexpr int64_t kRows = 24;

// A row's nested list: std::nullopt for a null row; inner lists of doubles.
using Matrix = std::optional<std::vector<std::vector<double>>>;

Value ToValue(const Matrix& m) {
  if (!m) return Value::Null();
  std::vector<Value> outer;
  for (const auto& inner : *m) {
    std::vector<Value> items;
    for (double v : inner) items.push_back(Value::Double(v));
    outer.push_back(Value::List(std::move(items)));
  }
  return Value::List(std::move(outer));
}

// 3 x 2 for every row: a fixed-shape nested column.
Matrix GridOf(int64_t id) {
  std::vector<std::vector<double>> m(3, std::vector<double>(2));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) m[i][j] = static_cast<double>(id * 100 + i * 10 + j);
  }
  return m;
}

// A sequence of 4-vectors whose length varies by row: id % 4 vectors, a null row every seventh.
Matrix TokensOf(int64_t id) {
  if (id % 7 == 5) return std::nullopt;
  std::vector<std::vector<double>> m;
  for (int64_t t = 0; t < id % 4; ++t) m.push_back({id + 0.5, static_cast<double>(t), -1.0 * t, 7.0});
  return m;
}

pq::SchemaNode NestedDoubles(const std::string& name) {
  return pq::ListOf(name, pq::ListOf("element", pq::Leaf("element", PhysicalType::kDouble)));
}

// id int64, grid array<array<double>> (3 x 2), tokens array<array<double>> (n x 4), in row groups of 5 rows.
std::string WriteFile(const testing::TempDir& dir, const std::function<Matrix(int64_t)>& tokens = TokensOf) {
  const std::string path = dir.Join("nested.parquet");
  pq::WriterOptions options;
  options.row_group_rows = 5;
  pq::ParquetWriter writer(LocalFileSystem(), path,
                           pq::Schema::FromFields({pq::Leaf("id", PhysicalType::kInt64), NestedDoubles("grid"),
                                                   NestedDoubles("tokens")}),
                           options);
  std::vector<Value> rows;
  for (int64_t id = 0; id < kRows; ++id) {
    rows.push_back(Value::Struct({{"id", Value::Int(id)}, {"grid", ToValue(GridOf(id))},
                                  {"tokens", ToValue(tokens(id))}}));
  }
  writer.WriteRows(rows);
  writer.Close();
  return path;
}

std::shared_ptr<RowSource> Open(const std::string& path, std::vector<std::string> columns) {
  TableOptions t;
  t.columns = std::move(columns);
  return OpenTable(path, t);
}

std::vector<int64_t> Longs(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// The source's rows in order, in one batch (or the first batch of `batch_size`).
Batch ReadAll(const std::shared_ptr<RowSource>& source, LoaderOptions o, int64_t batch_size = kRows) {
  o.batch_size = batch_size;
  o.shuffle.enabled = false;
  Loader loader(source, o);
  std::optional<Batch> b = loader.Next();
  LAKERUN_CHECK(b.has_value(), "no batch");
  return *b;
}

TEST(TableNestedListsTest, FixedShapeNestedListIsATensorWithADimensionPerLevel) {
  testing::TempDir dir;
  const auto source = Open(WriteFile(dir), {"id", "grid"});
  ASSERT_EQ(source->columns().size(), 2u);
  const ColumnInfo& grid = source->columns()[1];
  EXPECT_TRUE(grid.is_list);
  EXPECT_EQ(grid.list_levels, 2);
  EXPECT_EQ(grid.shape, (std::vector<int64_t>{3, 2}));
  const Batch b = ReadAll(source, {});
  const at::Tensor t = b.at("grid");
  ASSERT_EQ(t.sizes().vec(), (std::vector<int64_t>{kRows, 3, 2}));
  ASSERT_EQ(t.scalar_type(), at::kDouble);
  for (int64_t id = 0; id < kRows; ++id) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) EXPECT_EQ(t[id][i][j].item<double>(), (*GridOf(id))[i][j]);
    }
  }
}

TEST(TableNestedListsTest, VaryingOuterLengthNeedsAListPolicyThenPadsOrLaysOutFlat) {
  testing::TempDir dir;
  const auto source = Open(WriteFile(dir), {"id", "tokens"});
  EXPECT_EQ(source->columns()[1].shape[1], 4);  // guessed from the first row holding a vector
  // No policy: the first row whose length differs from the guess is named.
  EXPECT_THROW_WITH(ReadAll(source, {}), InvalidArgument, "column 'tokens'");

  LoaderOptions o;
  o.lists["tokens"].pad_value = -9;
  o.nulls["tokens"] = {};
  const Batch padded = ReadAll(source, o);
  const at::Tensor t = padded.at("tokens");
  ASSERT_EQ(t.sizes().vec(), (std::vector<int64_t>{kRows, 3, 4}));
  std::vector<int64_t> lengths;
  for (int64_t id = 0; id < kRows; ++id) {
    const Matrix m = TokensOf(id);
    lengths.push_back(m ? static_cast<int64_t>(m->size()) : 0);
    EXPECT_EQ(padded.at("tokens.valid")[id].item<bool>(), m.has_value()) << "row " << id;
    for (int64_t k = 0; k < 3; ++k) {
      for (int64_t j = 0; j < 4; ++j) {
        const double want = m && k < static_cast<int64_t>(m->size()) ? (*m)[k][j] : -9;
        EXPECT_EQ(t[id][k][j].item<double>(), want) << "row " << id << " element " << k << " value " << j;
      }
    }
  }
  EXPECT_EQ(Longs(padded.at("tokens.lengths")), lengths);

  o.lists["tokens"].layout = ListLayout::kFlat;
  const Batch flat = ReadAll(source, o);
  EXPECT_EQ(Longs(flat.at("tokens.lengths")), lengths);
  std::vector<double> want;
  for (int64_t id = 0; id < kRows; ++id) {
    if (const Matrix m = TokensOf(id)) {
      for (const auto& v : *m) want.insert(want.end(), v.begin(), v.end());
    }
  }
  const at::Tensor f = flat.at("tokens").contiguous();
  ASSERT_EQ(f.dim(), 2);
  EXPECT_EQ(f.size(1), 4);
  EXPECT_EQ(std::vector<double>(f.data_ptr<double>(), f.data_ptr<double>() + f.numel()), want);
}

TEST(TableNestedListsTest, InnerListsOfAnotherLengthOrNullAreRefusedWithTheRowNamed) {
  {
    testing::TempDir dir;
    const auto ragged = [](int64_t id) -> Matrix {
      return std::vector<std::vector<double>>{{1, 2}, id == 13 ? std::vector<double>{3} : std::vector<double>{3, 4}};
    };
    const auto source = Open(WriteFile(dir, ragged), {"tokens"});
    LoaderOptions o;
    o.lists["tokens"].layout = ListLayout::kFlat;
    // Row 13 is row 3 of row group 2 (rows of 5).
    EXPECT_THROW_WITH(ReadAll(source, o), InvalidArgument,
                      "row group 2", "row 3 of the row group",
                            "nesting level 2 holds 1 elements", "[2, 2]");
  }
  {
    testing::TempDir dir;
    const std::string path = dir.Join("null_inner.parquet");
    pq::ParquetWriter writer(LocalFileSystem(), path, pq::Schema::FromFields({NestedDoubles("m")}), {});
    writer.WriteRows({Value::Struct({{"m", Value::List({Value::List({Value::Double(1)})})}}),
                      Value::Struct({{"m", Value::List({Value::Null()})}})});
    writer.Close();
    LoaderOptions o;
    o.nulls["m"] = {};
    EXPECT_THROW_WITH(ReadAll(Open(path, {"m"}), o, 2), InvalidArgument,
                      "row 1 of the row group", "null list at nesting level 2");
  }
}

TEST(TableNestedListsTest, ThreeLevelsOfFixedLists) {
  testing::TempDir dir;
  const std::string path = dir.Join("cube.parquet");
  pq::ParquetWriter writer(
      LocalFileSystem(), path,
      pq::Schema::FromFields({pq::ListOf("cube", pq::ListOf("element", pq::ListOf("element", pq::Leaf(
                                                                                      "element", PhysicalType::kInt32))))}),
      {});
  std::vector<Value> rows;
  for (int64_t id = 0; id < 4; ++id) {
    std::vector<Value> planes;
    for (int a = 0; a < 2; ++a) {
      std::vector<Value> lines;
      for (int b = 0; b < 3; ++b) {
        std::vector<Value> cells;
        for (int c = 0; c < 4; ++c) cells.push_back(Value::Int(id * 1000 + a * 100 + b * 10 + c));
        lines.push_back(Value::List(std::move(cells)));
      }
      planes.push_back(Value::List(std::move(lines)));
    }
    rows.push_back(Value::Struct({{"cube", Value::List(std::move(planes))}}));
  }
  writer.WriteRows(rows);
  writer.Close();
  const auto source = Open(path, {"cube"});
  EXPECT_EQ(source->columns()[0].list_levels, 3);
  const at::Tensor t = ReadAll(source, {}, 4).at("cube");
  ASSERT_EQ(t.sizes().vec(), (std::vector<int64_t>{4, 2, 3, 4}));
  const at::Tensor c = t.contiguous();
  const int32_t* v = c.data_ptr<int32_t>();
  for (int64_t i = 0; i < c.numel(); ++i) {  // row-major [id][a][b][c] holds id*1000 + a*100 + b*10 + c
    EXPECT_EQ(v[i], i / 24 * 1000 + i / 12 % 2 * 100 + i / 4 % 3 * 10 + i % 4) << "value " << i;
  }
}

TEST(TableNestedListsTest, FlatLayoutOfOneLevelListsKeepsElementsAndFillsNulls) {
  testing::TempDir dir;
  const std::string path = dir.Join("ids.parquet");
  pq::ParquetWriter writer(LocalFileSystem(), path,
                           pq::Schema::FromFields({pq::ListOf(
                               "ids", pq::Leaf("element", PhysicalType::kInt64, pq::Repetition::kOptional))}),
                           {});
  writer.WriteRows({Value::Struct({{"ids", Value::List({Value::Int(1), Value::Int(2), Value::Int(3)})}}),
                    Value::Struct({{"ids", Value::Null()}}),
                    Value::Struct({{"ids", Value::List({})}}),
                    Value::Struct({{"ids", Value::List({Value::Null(), Value::Int(5)})}})});
  writer.Close();
  LoaderOptions o;
  o.lists["ids"].layout = ListLayout::kFlat;
  o.nulls["ids"].fill_value = -1;
  const Batch b = ReadAll(Open(path, {"ids"}), o, 4);
  EXPECT_EQ(Longs(b.at("ids")), (std::vector<int64_t>{1, 2, 3, -1, 5}));
  EXPECT_EQ(Longs(b.at("ids.lengths")), (std::vector<int64_t>{3, 0, 0, 2}));
  EXPECT_EQ(Longs(b.at("ids.valid").to(at::kLong)), (std::vector<int64_t>{1, 0, 1, 1}));
}

TEST(TableNestedListsTest, DeltaTableNestedColumnAndNestedStringsRefused) {
  testing::TempDir dir;
  const std::string root = dir.Join("table");
  const auto schema = delta::ParseSchema(R"j({"type":"struct","fields":[
    {"name":"grid","type":{"type":"array","elementType":{"type":"array","elementType":"double","containsNull":false},
     "containsNull":false},"nullable":true,"metadata":{}},
    {"name":"words","type":{"type":"array","elementType":{"type":"array","elementType":"string","containsNull":true},
     "containsNull":true},"nullable":true,"metadata":{}}]})j", "test");
  delta::DeltaTable table = delta::CreateTable(root, schema, {});
  std::vector<Value> rows;
  for (int64_t id = 0; id < 6; ++id) {
    rows.push_back(Value::Struct({{"grid", ToValue(GridOf(id))},
                                  {"words", Value::List({Value::List({Value::String("w")})})}}));
  }
  delta::AppendRows(table, rows, {});
  const auto source = Open(root, {"grid"});
  EXPECT_EQ(source->columns()[0].shape, (std::vector<int64_t>{3, 2}));
  const at::Tensor t = ReadAll(source, {}, 6).at("grid");
  EXPECT_EQ(t[5][2][1].item<double>(), 521);
  EXPECT_THROW_WITH(Open(root, {"words"}), NotImplemented,
                    "column 'words'", "nested lists of strings");
}

TEST(TableNestedListsTest, AFileWhoseNestedListsAreAllNullTakesTheShapeOfALaterFile) {
  testing::TempDir dir;
  LocalFileSystem().CreateDirs(dir.Join("t"));
  for (int f = 0; f < 2; ++f) {
    pq::ParquetWriter writer(LocalFileSystem(), dir.Join("t/part-" + std::to_string(f) + ".parquet"),
                             pq::Schema::FromFields({pq::Leaf("id", PhysicalType::kInt64), NestedDoubles("grid")}),
                             {});
    std::vector<Value> rows;
    for (int64_t id = f * 3; id < f * 3 + 3; ++id) {
      rows.push_back(Value::Struct({{"id", Value::Int(id)}, {"grid", f == 0 ? Value::Null() : ToValue(GridOf(id))}}));
    }
    writer.WriteRows(rows);
    writer.Close();
  }
  const auto source = Open(dir.Join("t"), {"id", "grid"});
  EXPECT_EQ(source->columns()[1].shape, (std::vector<int64_t>{3, 2}));
  LoaderOptions o;
  o.nulls["grid"].fill_value = -1;
  const Batch b = ReadAll(source, o, 6);
  EXPECT_EQ(b.at("grid").sizes().vec(), (std::vector<int64_t>{6, 3, 2}));
  EXPECT_EQ(b.at("grid")[1][2][1].item<double>(), -1);
  EXPECT_EQ(b.at("grid")[4][2][1].item<double>(), 421);
  EXPECT_EQ(Longs(b.at("grid.valid").to(at::kLong)), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  // Only null rows: a [B, 0, 0] tensor, every row masked.
  const auto empty = Open(dir.Join("t/part-0.parquet"), {"grid"});
  EXPECT_EQ(ReadAll(empty, o, 3).at("grid").sizes().vec(), (std::vector<int64_t>{3, 0, 0}));
}

}  // namespace
}  // namespace lakerun::data
