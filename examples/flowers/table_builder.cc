#include "table_builder.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <ostream>
#include <utility>

#include "jpeg_encode.h"
#include "lakerun/base/error.h"
#include "lakerun/base/file_system.h"
#include "lakerun/data/shuffle.h"
#include "lakerun/format/delta/commit.h"
#include "lakerun/format/delta/schema.h"
#include "lakerun/format/delta/table.h"
#include "lakerun/format/delta/writer.h"
#include "lakerun/format/import/import.h"

namespace lakerun::examples::flowers {
namespace {

constexpr const char* kSplits[] = {"train", "val", "test"};
constexpr const char* kFashionClasses =
    "T-shirt_top/Trouser/Pullover/Dress/Coat/Sandal/Shirt/Sneaker/Bag/Ankle_boot";

// One image waiting to be written: its bytes are produced on demand (encoding, or reading the file).
struct Pending {
  int64_t label = 0;
  int64_t key = 0;  // source index (Fashion-MNIST) or file index (folder)
};

// A value in [0, 1) from (seed, stream, index): the same on every machine.
double Uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<double>(data::CounterRandom(seed, 0, stream, index) >> 11) * 0x1.0p-53;
}

// Fisher-Yates with the counter-based generator.
void Shuffle(std::vector<Pending>& items, uint64_t seed, uint64_t stream) {
  for (size_t i = items.size(); i > 1; --i) {
    const uint64_t j = data::Bounded(data::CounterRandom(seed, 1, stream, i), i);
    std::swap(items[i - 1], items[j]);
  }
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsImageName(const std::string& name) {
  const std::string lower = Lower(name);
  for (const std::string ext : {".jpg", ".jpeg", ".png"}) {
    if (lower.size() > ext.size() && lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0) return true;
  }
  return false;
}

std::string FindIdx(const std::string& dir, const std::string& stem) {
  for (const std::string& name : {stem + ".gz", stem}) {
    if (LocalFileSystem().Exists(JoinPath(dir, name))) return JoinPath(dir, name);
  }
  LAKERUN_THROW(InvalidArgument, "Fashion-MNIST file ", JoinPath(dir, stem + ".gz"),
                " not found (apt-get install dataset-fashion-mnist, or pass --fashion-mnist DIR or --images DIR)");
}

std::string Join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(1, sep) : "") + parts[i];
  return out;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, begin)) {
    out.push_back(s.substr(begin, at - begin));
    begin = at + 1;
  }
  out.push_back(s.substr(begin));
  return out;
}

// Writes the table split by split, `rows_per_file` rows at a time, and commits every file at once.
class Writer {
 public:
  Writer(const std::string& path, const TableBuildOptions& options, std::map<std::string, std::string> config)
      : options_(options) {
    using delta::PrimitiveType;
    const auto schema = delta::MakeStruct({{"image", PrimitiveType("binary"), false},
                                           {"label", PrimitiveType("long"), false},
                                           {"split", PrimitiveType("string"), false}});
    delta::CreateTableOptions create;
    create.partition_columns = {"split"};
    create.configuration = std::move(config);
    create.name = "flowers";
    table_.emplace(delta::CreateTable(path, schema, create));
    write_.codec = parquet::Codec::kZstd;
    write_.parquet.column_codec["image"] = parquet::Codec::kUncompressed;  // JPEG does not compress further
    write_.parquet.dictionary = false;
    write_.parquet.row_group_rows = options.row_group_rows;
    write_.max_rows_per_file = options.rows_per_file;
  }

  // `bytes(key)` yields the encoded image of one pending row.
  template <typename Bytes>
  void WriteSplit(const std::string& split, const std::vector<Pending>& rows, int64_t total, Bytes&& bytes) {
    const delta::Snapshot snapshot = table_->Latest();
    std::vector<parquet::Value> chunk;
    for (size_t i = 0; i < rows.size(); ++i) {
      chunk.push_back(parquet::Value::Struct({{"image", parquet::Value::Bytes(bytes(rows[i].key))},
                                              {"label", parquet::Value::Int(rows[i].label)},
                                              {"split", parquet::Value::String(split)}}));
      if (static_cast<int64_t>(chunk.size()) == options_.rows_per_file || i + 1 == rows.size()) {
        for (auto& add : delta::WriteDataFiles(*table_, snapshot, chunk, write_)) adds_.push_back(std::move(add));
        done_ += static_cast<int64_t>(chunk.size());
        chunk.clear();
        if (options_.progress != nullptr) {
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
          *options_.progress << "[flowers] table: " << done_ << "/" << total << " images written ("
                             << static_cast<int64_t>(done_ / std::max(s, 1e-3)) << " images/s)" << std::endl;
        }
      }
    }
  }

  void Commit() {
    delta::ActionSet actions;
    actions.adds = std::move(adds_);
    delta::CommitOptions commit;
    commit.operation = "WRITE";
    delta::Commit(*table_, std::move(actions), commit);
  }

 private:
  TableBuildOptions options_;
  std::optional<delta::DeltaTable> table_;
  delta::WriteOptions write_;
  std::vector<delta::AddFile> adds_;
  int64_t done_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void BuildFashionMnist(const std::string& path, const TableBuildOptions& options) {
  const std::string dir = options.fashion_mnist_dir;
  struct Source {
    importer::IdxArray images, labels;
  };
  std::map<std::string, Source> sources;
  for (const std::string prefix : {"train", "t10k"}) {
    Source s{importer::ReadIdx(FindIdx(dir, prefix + "-images-idx3-ubyte")),
             importer::ReadIdx(FindIdx(dir, prefix + "-labels-idx1-ubyte"))};
    LAKERUN_CHECK_AS(CorruptDataError, s.images.dims.size() == 3 && s.labels.dims.size() == 1 &&
                                           s.images.dims[0] == s.labels.dims[0],
                     dir, ": ", prefix, " images and labels disagree (", s.images.dims.size(), "-d images, ",
                     s.labels.dims.size(), "-d labels)");
    sources[prefix] = std::move(s);
  }
  std::map<std::string, std::vector<Pending>> splits;
  for (const auto& [prefix, s] : sources) {
    int64_t n = s.images.dims[0];
    if (options.limit > 0) n = std::min(n, options.limit);
    for (int64_t i = 0; i < n; ++i) {
      const Pending p{static_cast<unsigned char>(s.labels.data[i]), i};
      if (prefix == "t10k") {
        splits["test"].push_back(p);
      } else {
        splits[Uniform(options.seed, 0, i) < options.val_fraction ? "val" : "train"].push_back(p);
      }
    }
  }
  int64_t total = 0;
  for (const auto& [split, rows] : splits) total += static_cast<int64_t>(rows.size());
  for (const char* split : kSplits) {
    LAKERUN_CHECK(!splits[split].empty(), "flowers table: the ", split, " split of ", dir,
                  " would be empty (limit ", options.limit, ", val_fraction ", options.val_fraction, ")");
  }
  Writer writer(path, options,
                {{"flowers.source", SourceName(options)}, {"flowers.classes", kFashionClasses},
                 {"flowers.channels", "1"}, {"flowers.rows.train", std::to_string(splits["train"].size())},
                 {"flowers.rows.val", std::to_string(splits["val"].size())},
                 {"flowers.rows.test", std::to_string(splits["test"].size())}});
  for (const char* split : kSplits) {
    const Source& s = sources[std::string(split) == "test" ? "t10k" : "train"];
    const int h = static_cast<int>(s.images.dims[1]), w = static_cast<int>(s.images.dims[2]);
    Shuffle(splits[split], options.seed, std::hash<std::string>{}(split) & 0xffff);
    writer.WriteSplit(split, splits[split], total, [&](int64_t i) {
      const auto* pixels = reinterpret_cast<const uint8_t*>(s.images.data.data()) + i * h * w;
      const std::vector<uint8_t> big = ResizeGrey(pixels, h, w, options.image_size);
      return EncodeGreyJpeg(big.data(), options.image_size, options.image_size, options.jpeg_quality);
    });
  }
  writer.Commit();
}

void BuildImageFolder(const std::string& path, const TableBuildOptions& options) {
  FileSystem& fs = LocalFileSystem();
  const std::string& dir = options.images_dir;
  const auto info = fs.Stat(dir);
  LAKERUN_CHECK(info && info->is_directory, "--images ", dir, " is not a directory");
  std::vector<std::string> classes;
  std::vector<std::string> files;  // full paths, indexed by Pending::key
  std::map<std::string, std::vector<Pending>> splits;
  for (const FileInfo& c : fs.List(dir)) {
    if (!c.is_directory || c.name.empty() || c.name[0] == '.') continue;
    const int64_t label = static_cast<int64_t>(classes.size());
    classes.push_back(c.name);
    for (const FileInfo& f : fs.List(JoinPath(dir, c.name))) {
      if (f.is_directory || !IsImageName(f.name)) continue;
      if (options.limit > 0 && static_cast<int64_t>(files.size()) >= options.limit) break;
      const std::string relative = c.name + "/" + f.name;
      const double u = Uniform(options.seed, 2, std::hash<std::string>{}(relative));
      const char* split = u < options.test_fraction                          ? "test"
                          : u < options.test_fraction + options.val_fraction ? "val"
                                                                             : "train";
      splits[split].push_back(Pending{label, static_cast<int64_t>(files.size())});
      files.push_back(JoinPath(dir, relative));
    }
  }
  LAKERUN_CHECK(classes.size() >= 2, "--images ", dir, ": expected at least 2 class sub-folders, found ",
                classes.size(), " (layout: ", dir, "/<class>/<image>.jpg)");
  for (const char* split : kSplits) {
    LAKERUN_CHECK(!splits[split].empty(), "--images ", dir, ": the ", split, " split would be empty (", files.size(),
                  " images; val_fraction ", options.val_fraction, ", test_fraction ", options.test_fraction, ")");
  }
  Writer writer(path, options,
                {{"flowers.source", SourceName(options)}, {"flowers.classes", Join(classes, '/')},
                 {"flowers.channels", "3"}, {"flowers.rows.train", std::to_string(splits["train"].size())},
                 {"flowers.rows.val", std::to_string(splits["val"].size())},
                 {"flowers.rows.test", std::to_string(splits["test"].size())}});
  for (const char* split : kSplits) {
    Shuffle(splits[split], options.seed, std::hash<std::string>{}(split) & 0xffff);
    writer.WriteSplit(split, splits[split], static_cast<int64_t>(files.size()), [&](int64_t key) {
      std::string bytes = fs.ReadFile(files[key]);
      const bool jpeg = bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xff &&
                        static_cast<unsigned char>(bytes[1]) == 0xd8;
      const bool png = bytes.size() >= 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
      LAKERUN_CHECK_AS(CorruptDataError, jpeg || png, files[key], ": neither a JPEG nor a PNG file");
      return bytes;
    });
  }
  writer.Commit();
}

}  // namespace

std::string SourceName(const TableBuildOptions& options) {
  return options.images_dir.empty() ? "fashion-mnist" : "images:" + options.images_dir;
}

TableInfo BuildTable(const std::string& path, const TableBuildOptions& options) {
  FileSystem& fs = LocalFileSystem();
  LAKERUN_CHECK(!fs.Exists(path), "flowers table: ", path, " already exists");
  LAKERUN_CHECK(options.image_size >= 8, "flowers table: image_size must be at least 8, got ", options.image_size);
  LAKERUN_CHECK(options.val_fraction >= 0 && options.test_fraction >= 0 &&
                    options.val_fraction + options.test_fraction < 1,
                "flowers table: val_fraction ", options.val_fraction, " and test_fraction ", options.test_fraction,
                " must be >= 0 and leave room for training images");
  // Written beside the final path, then renamed: a crash leaves no half-built table that a later run would use.
  const std::string staging = StrCat(path, ".building-", ::getpid());
  fs.RemoveAll(staging);
  try {
    if (options.images_dir.empty()) {
      BuildFashionMnist(staging, options);
    } else {
      BuildImageFolder(staging, options);
    }
    if (DirName(path) != ".") fs.CreateDirs(DirName(path));
    fs.Rename(staging, path);
  } catch (...) {
    fs.RemoveAll(staging);
    throw;
  }
  auto built = ReadTableInfo(path);
  LAKERUN_INTERNAL_ASSERT(built.has_value());
  return *built;
}

std::optional<TableInfo> ReadTableInfo(const std::string& path) {
  if (!delta::IsDeltaTable(path)) return std::nullopt;
  const delta::Snapshot snapshot = delta::DeltaTable(path).Latest();
  const auto& config = snapshot.metadata.configuration;
  auto get = [&](const std::string& key) {
    auto it = config.find(key);
    LAKERUN_CHECK(it != config.end(), "Delta table ", path, " was not built by the flowers example (no ", key,
                  " in its configuration); pass another --table");
    return it->second;
  };
  TableInfo info;
  info.path = path;
  info.source = get("flowers.source");
  info.classes = Split(get("flowers.classes"), '/');
  info.channels = std::stoi(get("flowers.channels"));
  info.train_rows = std::stoll(get("flowers.rows.train"));
  info.val_rows = std::stoll(get("flowers.rows.val"));
  info.test_rows = std::stoll(get("flowers.rows.test"));
  return info;
}

}  // namespace lakerun::examples::flowers
