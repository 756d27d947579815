// A folder of encoded images in class sub-folders (the "flowers" layout).
#include <algorithm>
#include <cctype>
#include <chrono>

#include "format/import/sink.h"
#include "lakerun/base/error.h"
#include "lakerun/format/import/import.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::importer {
namespace {

namespace pq = lakerun::parquet;

struct ImageFile {
  std::string path;      // full path
  std::string relative;  // class/file
  std::string class_name;
  int64_t label = 0;
  uint64_t size = 0;
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool IsImageName(const std::string& name) {
  const std::string lower = Lower(name);
  for (const char* ext : {".jpg", ".jpeg", ".png"}) {
    const std::string e = ext;
    if (lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

// Checks that `bytes` start like the JPEG or PNG its name promises.
void CheckSignature(const std::string& bytes, const ImageFile& file) {
  const std::string lower = Lower(file.relative);
  const bool png = lower.size() > 4 && lower.compare(lower.size() - 4, 4, ".png") == 0;
  if (png) {
    LAKERUN_CHECK_AS(CorruptDataError, bytes.size() >= 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0, file.path,
                     ": not a PNG file (bad signature)");
  } else {
    LAKERUN_CHECK_AS(CorruptDataError,
                     bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xff &&
                         static_cast<unsigned char>(bytes[1]) == 0xd8 && static_cast<unsigned char>(bytes[2]) == 0xff,
                     file.path, ": not a JPEG file (bad signature)");
  }
}

}  // namespace

ImportResult ImportImageFolder(const std::string& dir, const std::string& out, const ImportOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  FileSystem& fs = options.fs ? *options.fs : UriFileSystem();
  auto info = fs.Stat(dir);
  LAKERUN_CHECK(info && info->is_directory, "image folder ", dir, " is not a directory");
  std::vector<ImageFile> files;
  int64_t label = 0;
  uint64_t total_bytes = 0;
  for (const FileInfo& cls : fs.List(dir)) {  // List is sorted by name: sorted class order
    if (!cls.is_directory || cls.name.empty() || cls.name[0] == '.') continue;
    bool any = false;
    for (const FileInfo& f : fs.List(JoinPath(dir, cls.name))) {
      if (f.is_directory || !IsImageName(f.name)) continue;
      files.push_back({JoinPath(JoinPath(dir, cls.name), f.name), cls.name + "/" + f.name, cls.name, label, f.size});
      total_bytes += f.size;
      any = true;
    }
    if (any) ++label;
  }
  LAKERUN_CHECK(!files.empty(), "image folder ", dir,
                " holds no class sub-folders with .jpg, .jpeg or .png files (expected DIR/<class>/<image>)");
  std::vector<internal::SinkColumn> columns = {
      {"image", delta::PrimitiveType("binary"),
       pq::Leaf("image", pq::PhysicalType::kByteArray, pq::Repetition::kOptional)},
      {"label", delta::PrimitiveType("long"), pq::Leaf("label", pq::PhysicalType::kInt64, pq::Repetition::kOptional)},
      {"class", delta::PrimitiveType("string"),
       pq::Leaf("class", pq::PhysicalType::kByteArray, pq::Repetition::kOptional, pq::LogicalType::String())},
      {"file", delta::PrimitiveType("string"),
       pq::Leaf("file", pq::PhysicalType::kByteArray, pq::Repetition::kOptional, pq::LogicalType::String())},
  };
  const int64_t n = static_cast<int64_t>(files.size());
  internal::TableSink sink(out, options, columns, n, static_cast<int64_t>(total_bytes / files.size()) + 64,
                           "import images (" + dir + ")");
  for (size_t f = 0; f < sink.files().size(); ++f) {
    sink.WriteFile(f, [&](int64_t b, int64_t e) {
      std::vector<std::string> images, classes, names;
      std::vector<int64_t> labels;
      for (int64_t i = b; i < e; ++i) {
        const ImageFile& file = files[static_cast<size_t>(i)];
        std::string bytes;
        try {
          bytes = fs.ReadFile(file.path);
        } catch (const IoError& err) {
          LAKERUN_THROW(IoError, "cannot read image ", file.path, ": ", err.what());
        }
        CheckSignature(bytes, file);
        images.push_back(std::move(bytes));
        labels.push_back(file.label);
        classes.push_back(file.class_name);
        names.push_back(file.relative);
      }
      std::vector<int16_t> ones(images.size(), 1);
      std::vector<pq::ColumnData> data;
      data.push_back(pq::ColumnData::ByteArrays(images).set_def_levels(ones, 1));
      data.push_back(pq::ColumnData::Int64s(labels).set_def_levels(ones, 1));
      data.push_back(pq::ColumnData::ByteArrays(classes).set_def_levels(ones, 1));
      data.push_back(pq::ColumnData::ByteArrays(names).set_def_levels(ones, 1));
      return data;
    });
  }
  ImportResult result = sink.Finish();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace lakerun::importer
