// How the loader collates columns that are not plain fixed-width values: nullable columns, variable-length lists,
// and binary values kept as raw bytes. Set per column name in LoaderOptions (nulls, lists, raw_bytes).
//
//   LoaderOptions o;
//   o.nulls["age"].fill_value = -1;          // age: float32 [B] with -1 where null, age.valid: bool [B]
//   o.lists["tokens"] = {};                   // tokens: int64 [B, longest list], tokens.lengths: int64 [B]
//   o.lists["ids"].layout = ListLayout::kFlat;  // ids: int64 [E] (the batch's elements), ids.lengths: int64 [B]
//   o.raw_bytes = {"caption"};                // caption: uint8 [total bytes], caption.offsets: int64 [B + 1]
//   o.raw_bytes.push_back("tags");            // array<string> (or a map's keys "m.key"): tags: uint8 [total bytes],
//                                             // tags.offsets: int64 [E + 1] per element, tags.lengths: int64 [B]
//
// Lists of binary values (array<string>, array<binary>, map<string, V> keys) are raw bytes too: the batch's E
// elements, row after row, element e being bytes [offsets[e], offsets[e+1]) of "<column>", and "<column>.lengths"
// the elements of each row (Batch::list_bytes reads row i's). With a NullPolicy a null list is empty (length 0,
// "<column>.valid" false) and a null element is empty bytes, "<column>.element_valid" bool [E] false (both masks
// when emit_mask); fill_value does not apply. Without one, a null list or null element is an error like any null.
//
// Without a policy the loader refuses what it cannot represent faithfully: a null value (error naming the column,
// the file, row group and the table row), a list whose length differs from the column's fixed length (error naming
// the column, the row and both lengths), a binary column or list of binary values that is neither an image nor raw
// bytes (error at construction naming the column and the option). Columns that are declared nullable but hold no
// nulls (Spark and Delta declare every column nullable) need no policy.
#pragma once

#include <cstdint>

namespace lakerun::data {

/// Nulls of one column (LoaderOptions::nulls). Applies to nullable scalars, fixed-size values (FIXED_LEN_BYTE_ARRAY,
/// fixed-size lists), null lists and null list elements, and null raw-bytes values (empty bytes).
struct NullPolicy {
  /// Written in place of every element of a null value (converted to the column's element type; lists: null
  /// elements inside a list also get it). Not used by raw bytes (a null is empty).
  double fill_value = 0;
  /// Also emit "<column>.valid": bool [B], false where the row's value is null; lists of binary values also
  /// "<column>.element_valid": bool [E], false where an element is null.
  bool emit_mask = true;
};

/// How a ListPolicy lays out a batch of variable-length lists.
enum class ListLayout {
  kPadded,  ///< "<column>" [B, L, ...]: each row's elements, then pad_value up to L
  kFlat,    ///< "<column>" [E, ...]: the batch's E elements, row after row (no padding; feeds EmbeddingBag, nested
            ///< tensors, packed sequences)
};

/// Variable-length lists of numbers (LoaderOptions::lists). "<column>.lengths" int64 [B] holds each row's element
/// count; "<column>" is [B, L] padded (ListLayout::kPadded) or [E] flat (kFlat), of the element type. A nested list
/// column (array<array<T>>) has elements that are its inner lists, all of the column's inner shape: "<column>" is
/// then [B, L, inner...] or [E, inner...]. Lists of binary values take no ListPolicy: they are raw bytes (above).
struct ListPolicy {
  ListLayout layout = ListLayout::kPadded;
  /// kPadded: L. 0 pads to the longest list of the batch (L varies from batch to batch); > 0 fixes L for every
  /// batch.
  int64_t pad_to = 0;
  /// With pad_to > 0: keep the first pad_to elements of a longer list (lengths then says pad_to) instead of
  /// failing with an error naming the column, the row and its length.
  bool truncate = false;
  double pad_value = 0;
};

/// Names of the batch tensors that accompany column `column`.
inline constexpr char kValidSuffix[] = ".valid";                 // NullPolicy::emit_mask
inline constexpr char kElementValidSuffix[] = ".element_valid";  // NullPolicy::emit_mask, lists of binary values
inline constexpr char kLengthsSuffix[] = ".lengths";             // ListPolicy, lists of binary values
inline constexpr char kOffsetsSuffix[] = ".offsets";             // raw bytes

}  // namespace lakerun::data
