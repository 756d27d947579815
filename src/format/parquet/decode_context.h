// Where a decoder is working, for error messages: "<file>: row group 3, column 'a.b', page 2 at offset 1234: ...".
#pragma once

#include <cstdint>
#include <string>

#include "lakerun/base/error.h"

namespace lakerun::parquet {

struct DecodeContext {
  std::string file = "<buffer>";
  int row_group = -1;
  std::string column;
  int64_t page = -1;         ///< index of that page in its column chunk (dictionary page included); -1: unknown
  uint64_t page_offset = 0;  ///< file offset of the page header being decoded

  std::string Describe() const {
    const std::string which = page >= 0 ? StrCat("page ", page) : std::string("page");
    return StrCat(file, ": row group ", row_group, ", column '", column, "', ", which, " at offset ", page_offset);
  }
  [[noreturn]] void Fail(const std::string& what) const {
    LAKERUN_THROW(CorruptDataError, Describe(), ": ", what);
  }
  /// An allocation of `bytes` for `what` was refused (std::bad_alloc): ResourceError naming the file, row group,
  /// column, and the page when one is being decoded (ThrowAllocationFailure).
  [[noreturn]] void FailAllocation(uint64_t bytes, const std::string& what) const {
    ThrowAllocationFailure(page >= 0 ? Describe() : StrCat(file, ": row group ", row_group, ", column '", column, "'"),
                           bytes, what);
  }
};

}  // namespace lakerun::parquet
