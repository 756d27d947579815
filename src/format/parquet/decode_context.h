// Where a decoder is working, for error messages: "<file>: row group 3, column 'a.b', page at offset 1234: ...".
#pragma once

#include <cstdint>
#include <string>

#include "lakerun/base/error.h"

namespace lakerun::parquet {

struct DecodeContext {
  std::string file = "<buffer>";
  int row_group = -1;
  std::string column;
  uint64_t page_offset = 0;  ///< file offset of the page header being decoded

  std::string Describe() const {
    return StrCat(file, ": row group ", row_group, ", column '", column, "', page at offset ", page_offset);
  }
  [[noreturn]] void Fail(const std::string& what) const {
    LAKERUN_THROW(CorruptDataError, Describe(), ": ", what);
  }
};

}  // namespace lakerun::parquet
