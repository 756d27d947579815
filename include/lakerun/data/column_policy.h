// How the loader collates columns that are not plain fixed-width values: nullable columns, variable-length lists,
// and binary values kept as raw bytes. Set per column name in LoaderOptions (nulls, lists, raw_bytes).
//
//   LoaderOptions o;
//   o.nulls["age"].fill_value = -1;          // age: float32 [B] with -1 where null, age.valid: bool [B]
//   o.lists["tokens"] = {};                   // tokens: int64 [B, longest list], tokens.lengths: int64 [B]
//   o.raw_bytes = {"caption"};                // caption: uint8 [total bytes], caption.offsets: int64 [B + 1]
//
// Without a policy the loader refuses what it cannot represent faithfully: a null value (error naming the column,
// the file, row group and the table row), a list whose length differs from the column's fixed length (error naming
// the column, the row and both lengths), a binary column that is neither an image nor raw bytes (error at
// construction naming the column). Columns that are declared nullable but hold no nulls (Spark and Delta declare
// every column nullable) need no policy.
#pragma once

#include <cstdint>

namespace lakerun::data {

/// Nulls of one column (LoaderOptions::nulls). Applies to nullable scalars, fixed-size values (FIXED_LEN_BYTE_ARRAY,
/// fixed-size lists), null lists and null list elements, and null raw-bytes values.
struct NullPolicy {
  /// Written in place of every element of a null value (converted to the column's element type; lists: null
  /// elements inside a list also get it).
  double fill_value = 0;
  /// Also emit "<column>.valid": bool [B], false where the row's value is null.
  bool emit_mask = true;
};

/// Variable-length lists of numbers (LoaderOptions::lists): "<column>" becomes [B, L] of the element type, padded
/// with `pad_value` after each row's elements, and "<column>.lengths" int64 [B] holds each row's element count.
struct ListPolicy {
  /// L: 0 pads to the longest list of the batch (L varies from batch to batch); > 0 fixes L for every batch.
  int64_t pad_to = 0;
  /// With pad_to > 0: keep the first pad_to elements of a longer list (lengths then says pad_to) instead of
  /// failing with an error naming the column, the row and its length.
  bool truncate = false;
  double pad_value = 0;
};

/// Names of the batch tensors that accompany column `column`.
inline constexpr char kValidSuffix[] = ".valid";      // NullPolicy::emit_mask
inline constexpr char kLengthsSuffix[] = ".lengths";  // ListPolicy
inline constexpr char kOffsetsSuffix[] = ".offsets";  // raw bytes

}  // namespace lakerun::data
