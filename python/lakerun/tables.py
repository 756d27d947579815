"""Making tables: lakerun.import_* and lakerun.convert, as `lakerun table import` and `lakerun table convert` offer
them (docs/python.md). Each runs lakerun's C++ importer or converter with the GIL released; bad input raises
lakerun.CorruptDataError or lakerun.InvalidArgument naming the file and the line or record."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from . import _lakerun

FASHION_MNIST_SOURCE = "/usr/share/datasets/fashion-mnist"


def _import(kind: str, source: str, out: str, splits: Sequence[str] = (), *, format: str = "delta",
            codec: str = "zstd", row_group_rows: int = 0, row_group_bytes: int = 32 << 20, rows_per_file: int = 0,
            files_multiple_of: int = 1, layout: str = "bytes", progress: bool = False) -> List[Dict[str, Any]]:
    return _lakerun._import(kind, str(source), str(out), list(splits), format, codec, row_group_rows,
                            row_group_bytes, rows_per_file, files_multiple_of, layout, progress)


def import_fashion_mnist(out: str, source: str = FASHION_MNIST_SOURCE, splits: Sequence[str] = ("train", "test"),
                         **options: Any) -> List[Dict[str, Any]]:
    """Fashion-MNIST's IDX files (gzipped or not) as the tables out/train and out/test (columns image: 784-byte
    binary, label: long). Returns one {path, rows, files, bytes, seconds} per split.

    Options, as `lakerun table import` takes them: format ("delta" or "parquet"), codec ("zstd", "snappy", "gzip",
    "lz4_raw", "brotli", "uncompressed"), row_group_rows (0: by row_group_bytes), row_group_bytes, rows_per_file (0:
    as few files as allowed), files_multiple_of (give the number of ranks you train on), layout ("bytes" or
    "fixed-list": the image as a [28, 28] list), progress (print progress on stderr)."""
    return _import("mnist", source, out, splits, **options)


def import_mnist(out: str, source: str, splits: Sequence[str] = ("train", "test"),
                 **options: Any) -> List[Dict[str, Any]]:
    """MNIST's IDX files as out/train and out/test; as import_fashion_mnist."""
    return _import("mnist", source, out, splits, **options)


def import_images(directory: str, out: str, **options: Any) -> Dict[str, Any]:
    """A folder of JPEG/PNG images in class sub-folders (directory/<class>/<file>) as a table: image (the encoded
    bytes), label (long, the class's index in sorted order), class and file (strings). Options as
    import_fashion_mnist; returns {path, rows, files, bytes, seconds}."""
    return _import("images", directory, out, **options)[0]


def import_csv(file: str, out: str, **options: Any) -> Dict[str, Any]:
    """A CSV file with a header line as a table, each column typed long, double or string by inference (an empty
    field is null). Options as import_fashion_mnist; returns {path, rows, files, bytes, seconds}."""
    return _import("csv", file, out, **options)[0]


def convert(source: str, cache_dir: str, kind: str = "table", *, columns: Optional[Sequence[str]] = None,
            filter: Optional[str] = None, version: Optional[int] = None, split: str = "train", world_size: int = 1,
            row_group_rows: int = 8192, rows_per_file: int = 1 << 20) -> Dict[str, Any]:
    """Materialises `source` in the converter's cache, laid out for training on `world_size` ranks (a multiple of
    world_size files, row groups of row_group_rows), unless an entry for the same source content and options is
    there already: Petastorm's make_spark_converter, without Spark. kind: "table" (a Delta table, Parquet folder or
    file; columns, filter and version apply), "mnist" (IDX files of `split`), "images" or "csv". Returns {path,
    key, reused, rows, files}: give path to lakerun.Loader."""
    return _lakerun._convert(kind, str(source), str(cache_dir), None if columns is None else list(columns), filter,
                             version, split, world_size, row_group_rows, rows_per_file)


def clear_cache(cache_dir: str, key: Optional[str] = None) -> None:
    """Removes the converter's entry `key` from cache_dir, or every entry when key is None."""
    _lakerun._clear_cache(str(cache_dir), key or "")
