// CSV with a header line (RFC 4180 quoting) and per-column type inference.
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "format/import/sink.h"
#include "lakerun/base/error.h"
#include "lakerun/format/import/import.h"
#include "lakerun/objstore/uri_file_system.h"

namespace lakerun::importer {
namespace {

namespace pq = lakerun::parquet;

struct Record {
  int64_t line = 0;  // line where the record starts (1-based)
  std::vector<std::string> fields;
  std::vector<bool> quoted;
};

// Splits the whole text into records. Quoted fields may hold commas, doubled quotes and newlines.
std::vector<Record> ParseCsv(const std::string& text, const std::string& path) {
  std::vector<Record> records;
  size_t i = 0;
  int64_t line = 1;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 byte-order mark
  while (i < text.size()) {
    Record rec;
    rec.line = line;
    std::string field;
    bool quoted = false;
    bool end_of_record = false;
    while (!end_of_record) {
      if (i < text.size() && text[i] == '"' && field.empty() && !quoted) {
        quoted = true;
        const int64_t start_line = line;
        ++i;
        while (true) {
          LAKERUN_CHECK_AS(CorruptDataError, i < text.size(), path, ": line ", start_line,
                           ": unterminated quoted field");
          if (text[i] == '"') {
            if (i + 1 < text.size() && text[i + 1] == '"') {
              field.push_back('"');
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (text[i] == '\n') ++line;
          field.push_back(text[i++]);
        }
        LAKERUN_CHECK_AS(CorruptDataError,
                         i >= text.size() || text[i] == ',' || text[i] == '\n' || text[i] == '\r', path, ": line ",
                         line, ": unexpected character '", text[i], "' after a closing quote");
        continue;
      }
      if (i >= text.size() || text[i] == '\n' || (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] == '\n'))) {
        rec.fields.push_back(std::move(field));
        rec.quoted.push_back(quoted);
        if (i < text.size()) {
          i += text[i] == '\r' ? 2 : 1;
          ++line;
        }
        end_of_record = true;
      } else if (text[i] == ',') {
        rec.fields.push_back(std::move(field));
        rec.quoted.push_back(quoted);
        field.clear();
        quoted = false;
        ++i;
      } else {
        LAKERUN_CHECK_AS(CorruptDataError, !quoted, path, ": line ", line, ": text after a closing quote");
        LAKERUN_CHECK_AS(CorruptDataError, text[i] != '"', path, ": line ", line,
                         ": a quote inside an unquoted field (quote the whole field and double the quote)");
        field.push_back(text[i++]);
      }
    }
    // Skip blank lines.
    if (rec.fields.size() == 1 && rec.fields[0].empty() && !rec.quoted[0]) continue;
    records.push_back(std::move(rec));
  }
  return records;
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& s, double* out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

enum class Kind { kLong, kDouble, kString };

}  // namespace

ImportResult ImportCsv(const std::string& file, const std::string& out, const ImportOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  FileSystem& fs = options.fs ? *options.fs : UriFileSystem();
  std::string text;
  try {
    text = fs.ReadFile(file);
  } catch (const IoError& e) {
    LAKERUN_THROW(IoError, "cannot read CSV file ", file, ": ", e.what());
  }
  std::vector<Record> records = ParseCsv(text, file);
  LAKERUN_CHECK_AS(CorruptDataError, !records.empty(), file, ": empty CSV file (a header line is required)");
  const Record& header = records[0];
  std::vector<std::string> names = header.fields;
  for (size_t c = 0; c < names.size(); ++c) {
    LAKERUN_CHECK_AS(CorruptDataError, !names[c].empty(), file, ": line ", header.line, ": column ", c + 1,
                     " has an empty name in the header");
    for (size_t d = 0; d < c; ++d) {
      LAKERUN_CHECK_AS(CorruptDataError, names[c] != names[d], file, ": line ", header.line,
                       ": duplicate column name '", names[c], "'");
    }
  }
  const size_t ncols = names.size();
  std::vector<Kind> kinds(ncols, Kind::kLong);
  for (size_t r = 1; r < records.size(); ++r) {
    const Record& rec = records[r];
    LAKERUN_CHECK_AS(CorruptDataError, rec.fields.size() == ncols, file, ": line ", rec.line, " has ",
                     rec.fields.size(), " fields, the header has ", ncols);
    for (size_t c = 0; c < ncols; ++c) {
      const std::string& s = rec.fields[c];
      if (s.empty() && !rec.quoted[c]) continue;  // null
      int64_t i = 0;
      double d = 0;
      if (kinds[c] == Kind::kLong && !rec.quoted[c] && ParseInt(s, &i)) continue;
      if (kinds[c] != Kind::kString && !rec.quoted[c] && ParseDouble(s, &d)) {
        kinds[c] = Kind::kDouble;
        continue;
      }
      kinds[c] = Kind::kString;
    }
  }
  std::vector<internal::SinkColumn> columns;
  for (size_t c = 0; c < ncols; ++c) {
    switch (kinds[c]) {
      case Kind::kLong:
        columns.push_back({names[c], delta::PrimitiveType("long"),
                           pq::Leaf(names[c], pq::PhysicalType::kInt64, pq::Repetition::kOptional)});
        break;
      case Kind::kDouble:
        columns.push_back({names[c], delta::PrimitiveType("double"),
                           pq::Leaf(names[c], pq::PhysicalType::kDouble, pq::Repetition::kOptional)});
        break;
      case Kind::kString:
        columns.push_back({names[c], delta::PrimitiveType("string"),
                           pq::Leaf(names[c], pq::PhysicalType::kByteArray, pq::Repetition::kOptional,
                                    pq::LogicalType::String())});
        break;
    }
  }
  const int64_t n = static_cast<int64_t>(records.size()) - 1;
  internal::TableSink sink(out, options, columns, n,
                           static_cast<int64_t>(text.size() / std::max<size_t>(1, records.size())) + 8,
                           "import csv (" + file + ")");
  for (size_t f = 0; f < sink.files().size(); ++f) {
    sink.WriteFile(f, [&](int64_t b, int64_t e) {
      std::vector<pq::ColumnData> data;
      for (size_t c = 0; c < ncols; ++c) {
        if (kinds[c] == Kind::kLong) {
          std::vector<std::optional<int64_t>> v;
          for (int64_t r = b; r < e; ++r) {
            const std::string& s = records[static_cast<size_t>(r + 1)].fields[c];
            int64_t x = 0;
            v.push_back(ParseInt(s, &x) ? std::optional<int64_t>(x) : std::nullopt);
          }
          data.push_back(internal::OptionalInt64s(v));
        } else if (kinds[c] == Kind::kDouble) {
          std::vector<std::optional<double>> v;
          for (int64_t r = b; r < e; ++r) {
            const std::string& s = records[static_cast<size_t>(r + 1)].fields[c];
            double x = 0;
            v.push_back(ParseDouble(s, &x) ? std::optional<double>(x) : std::nullopt);
          }
          data.push_back(internal::OptionalDoubles(v));
        } else {
          std::vector<std::optional<std::string>> v;
          for (int64_t r = b; r < e; ++r) {
            const Record& rec = records[static_cast<size_t>(r + 1)];
            const bool null = rec.fields[c].empty() && !rec.quoted[c];
            v.push_back(null ? std::nullopt : std::optional<std::string>(rec.fields[c]));
          }
          data.push_back(internal::OptionalByteArrays(v));
        }
      }
      return data;
    });
  }
  ImportResult result = sink.Finish();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace lakerun::importer
