// IDX files (MNIST, Fashion-MNIST) and their import.
#include <zlib.h>

#include <chrono>
#include <cstring>

#include "format/import/sink.h"
#include "lakerun/base/error.h"
#include "lakerun/format/import/import.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::importer {
namespace {

namespace pq = lakerun::parquet;

// Largest IDX payload accepted (the full MNIST train images are 47 MB).
constexpr uint64_t kMaxIdxBytes = 4ull << 30;

std::string Gunzip(const std::string& in, const std::string& path) {
  z_stream zs{};
  LAKERUN_CHECK_AS(IoError, inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK, path, ": cannot start gzip decoding");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      LAKERUN_THROW(CorruptDataError, path, ": corrupt gzip data at compressed offset ", zs.total_in, " (zlib ",
                    rc, ")");
    }
    out.append(buf, sizeof buf - zs.avail_out);
    if (out.size() > kMaxIdxBytes) {
      inflateEnd(&zs);
      LAKERUN_THROW(CorruptDataError, path, ": decompresses to more than ", kMaxIdxBytes, " bytes");
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      LAKERUN_THROW(CorruptDataError, path, ": gzip stream is truncated after ", out.size(), " bytes");
    }
  }
  inflateEnd(&zs);
  return out;
}

uint32_t Big32(const std::string& b, size_t pos) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(b[pos])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(b[pos + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(b[pos + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[pos + 3]));
}

// The first existing of `dir/name` and `dir/name.gz`.
std::string FindIdx(FileSystem& fs, const std::string& dir, const std::string& name) {
  for (const std::string& candidate : {JoinPath(dir, name + ".gz"), JoinPath(dir, name)}) {
    if (fs.Exists(candidate)) return candidate;
  }
  LAKERUN_THROW(InvalidArgument, "cannot find ", name, "[.gz] in ", dir,
                " (expected the MNIST layout: {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz])");
}

}  // namespace

IdxArray ReadIdx(const std::string& path, FileSystem& fs) {
  std::string bytes;
  try {
    bytes = fs.ReadFile(path);
  } catch (const IoError& e) {
    LAKERUN_THROW(IoError, "cannot read IDX file ", path, ": ", e.what());
  }
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b) {
    bytes = Gunzip(bytes, path);
  }
  LAKERUN_CHECK_AS(CorruptDataError, bytes.size() >= 4, path, ": too short for an IDX header (", bytes.size(),
                   " bytes)");
  const uint32_t magic = Big32(bytes, 0);
  const unsigned type = (magic >> 8) & 0xff;
  const unsigned ndims = magic & 0xff;
  LAKERUN_CHECK_AS(CorruptDataError, (magic >> 16) == 0 && type == 0x08 && ndims >= 1 && ndims <= 4, path,
                   ": bad IDX magic number 0x", std::hex, magic, std::dec,
                   " (expected 0x0000080N: unsigned bytes with N dimensions)");
  LAKERUN_CHECK_AS(CorruptDataError, bytes.size() >= 4 + 4 * ndims, path, ": header truncated: ", ndims,
                   " dimensions need ", 4 + 4 * ndims, " bytes");
  IdxArray out;
  uint64_t count = 1;
  for (unsigned d = 0; d < ndims; ++d) {
    const uint32_t dim = Big32(bytes, 4 + 4 * d);
    LAKERUN_CHECK_AS(CorruptDataError, dim > 0 && dim <= (1u << 28), path, ": dimension ", d, " is ", dim);
    out.dims.push_back(dim);
    count *= dim;
    LAKERUN_CHECK_AS(CorruptDataError, count <= kMaxIdxBytes, path, ": dimensions describe more than ",
                     kMaxIdxBytes, " bytes");
  }
  const size_t header = 4 + 4 * ndims;
  LAKERUN_CHECK_AS(CorruptDataError, bytes.size() - header == count, path, ": payload is ", bytes.size() - header,
                   " bytes, the dimensions need ", count);
  out.data = bytes.substr(header);
  return out;
}

std::vector<ImportResult> ImportMnist(const std::string& source_dir, const std::string& out,
                                      const ImportOptions& options, const std::vector<std::string>& splits) {
  FileSystem& fs = options.fs ? *options.fs : UriFileSystem();
  std::vector<ImportResult> results;
  for (const auto& split : splits) {
    LAKERUN_CHECK(split == "train" || split == "test", "unknown split '", split, "', expected train or test");
    const auto start = std::chrono::steady_clock::now();  // the result's time covers reading the IDX files too
    const std::string prefix = split == "train" ? "train" : "t10k";
    const std::string images_path = FindIdx(fs, source_dir, prefix + "-images-idx3-ubyte");
    const std::string labels_path = FindIdx(fs, source_dir, prefix + "-labels-idx1-ubyte");
    const IdxArray images = ReadIdx(images_path, fs);
    const IdxArray labels = ReadIdx(labels_path, fs);
    LAKERUN_CHECK_AS(CorruptDataError, images.dims.size() == 3, images_path, ": images need 3 dimensions, got ",
                     images.dims.size());
    LAKERUN_CHECK_AS(CorruptDataError, labels.dims.size() == 1, labels_path, ": labels need 1 dimension, got ",
                     labels.dims.size());
    LAKERUN_CHECK_AS(CorruptDataError, images.dims[0] == labels.dims[0], images_path, " holds ", images.dims[0],
                     " images but ", labels_path, " holds ", labels.dims[0], " labels");
    for (size_t i = 0; i < labels.data.size(); ++i) {
      const int label = static_cast<unsigned char>(labels.data[i]);
      LAKERUN_CHECK_AS(CorruptDataError, label <= 9, labels_path, ": label ", i, " is ", label,
                       ", expected 0 to 9");
    }
    const int64_t n = images.dims[0];
    const int64_t rows = images.dims[1], cols = images.dims[2];
    const int64_t pixels = rows * cols;
    const bool list = options.image_layout == ImageLayout::kFixedList;
    const bool delta_out = options.format == OutputFormat::kDelta;

    std::vector<internal::SinkColumn> columns;
    if (list) {
      // Delta has no unsigned byte type: Delta tables store the pixels as short, Parquet output as UINT_8.
      pq::SchemaNode element = pq::Leaf("element", pq::PhysicalType::kInt32, pq::Repetition::kRequired,
                                        delta_out ? pq::LogicalType::Int(16, true) : pq::LogicalType::Int(8, false));
      columns.push_back({"image", delta::MakeArray(delta::PrimitiveType("short"), false),
                         pq::ListOf("image", element, pq::Repetition::kOptional)});
    } else {
      columns.push_back({"image", delta::PrimitiveType("binary"),
                         pq::Leaf("image", pq::PhysicalType::kByteArray, pq::Repetition::kOptional)});
    }
    columns.push_back({"label", delta::PrimitiveType("long"),
                       pq::Leaf("label", pq::PhysicalType::kInt64, pq::Repetition::kOptional)});
    std::map<std::string, std::vector<int64_t>> shapes;
    if (list) shapes["image"] = {rows, cols};
    internal::TableSink sink(JoinPath(out, split), options, columns, n, pixels + 8,
                             "import " + split + " (" + BaseName(images_path) + ")", shapes);
    for (size_t f = 0; f < sink.files().size(); ++f) {
      sink.WriteFile(f, [&](int64_t b, int64_t e) {
        std::vector<pq::ColumnData> data;
        const int64_t count = e - b;
        std::vector<int16_t> ones(static_cast<size_t>(count), 1);
        if (list) {
          std::vector<int32_t> values(static_cast<size_t>(count * pixels));
          const auto* src = reinterpret_cast<const unsigned char*>(images.data.data()) + b * pixels;
          for (size_t i = 0; i < values.size(); ++i) values[i] = src[i];
          std::vector<int16_t> defs(values.size(), 2), reps(values.size(), 1);
          for (int64_t r = 0; r < count; ++r) reps[static_cast<size_t>(r * pixels)] = 0;
          pq::ColumnData col = pq::ColumnData::Int32s(values);
          col.set_def_levels(std::move(defs), 2);
          col.set_rep_levels(std::move(reps), 1);
          data.push_back(std::move(col));
        } else {
          pq::ColumnData col(pq::PhysicalType::kByteArray, 0);
          const size_t bytes = static_cast<size_t>(count * pixels);
          col.mutable_value_buffer().Resize(bytes);
          std::memcpy(col.mutable_value_buffer().data(), images.data.data() + b * pixels, bytes);
          auto& offsets = col.mutable_offsets();
          offsets.resize(static_cast<size_t>(count) + 1);
          for (int64_t r = 0; r <= count; ++r) offsets[static_cast<size_t>(r)] = r * pixels;
          col.set_num_values(count);
          col.set_def_levels(ones, 1);
          data.push_back(std::move(col));
        }
        std::vector<int64_t> label_values(static_cast<size_t>(count));
        for (int64_t r = 0; r < count; ++r) label_values[static_cast<size_t>(r)] = static_cast<unsigned char>(labels.data[static_cast<size_t>(b + r)]);
        data.push_back(pq::ColumnData::Int64s(label_values).set_def_levels(ones, 1));
        return data;
      });
    }
    results.push_back(sink.Finish());
    results.back().seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return results;
}

}  // namespace lakerun::importer
