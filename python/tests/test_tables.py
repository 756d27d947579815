"""Making and reading whole tables from Python: lakerun.import_*, Table.scan, lakerun.convert and clear_cache."""

from __future__ import annotations

import os
import pathlib

import pytest
import torch

import lakerun
from conftest import ROWS


def test_import_csv_writes_a_delta_table_or_parquet_files(csv_file: pathlib.Path, tmp_path: pathlib.Path) -> None:
    result = lakerun.import_csv(str(csv_file), str(tmp_path / "delta"), codec="snappy", row_group_rows=10)
    assert result["rows"] == ROWS and result["files"] == 1 and result["path"] == str(tmp_path / "delta")
    assert lakerun.Table(result["path"]).version == 1
    parquet = lakerun.import_csv(str(csv_file), str(tmp_path / "parquet"), format="parquet", files_multiple_of=2)
    assert parquet["files"] == 2
    assert lakerun.Table(parquet["path"]).version is None and lakerun.Table(parquet["path"]).num_rows == ROWS


def test_import_options_are_checked(csv_file: pathlib.Path, tmp_path: pathlib.Path) -> None:
    with pytest.raises(lakerun.InvalidArgument, match="format: 'orc'"):
        lakerun.import_csv(str(csv_file), str(tmp_path / "a"), format="orc")
    with pytest.raises(lakerun.Error, match="lz5"):
        lakerun.import_csv(str(csv_file), str(tmp_path / "b"), codec="lz5")
    with pytest.raises(lakerun.ConfigError, match="files_multiple_of"):
        lakerun.import_csv(str(csv_file), str(tmp_path / "c"), files_multiple_of=0)
    with pytest.raises(lakerun.IoError, match="missing.csv"):
        lakerun.import_csv(str(tmp_path / "missing.csv"), str(tmp_path / "d"))


@pytest.mark.skipif(not os.path.isdir(lakerun.tables.FASHION_MNIST_SOURCE),
                    reason="no Fashion-MNIST IDX files (scripts/setup.sh installs them)")
def test_import_fashion_mnist_one_split(tmp_path: pathlib.Path) -> None:
    (test,) = lakerun.import_fashion_mnist(str(tmp_path / "fm"), splits=["test"], codec="snappy")
    assert test["rows"] == 10_000 and test["path"] == str(tmp_path / "fm" / "test")
    assert lakerun.Table(test["path"]).schema == [("image", "binary"), ("label", "int64")]


def test_scan_reads_every_row_passing_the_filter_as_tensors(delta_table: str) -> None:
    table = lakerun.Table(delta_table)
    every = table.scan()
    assert torch.equal(every["id"], torch.arange(ROWS))
    names = bytes(every["name"].tolist())
    offsets = every["name.offsets"].tolist()
    assert [names[offsets[i]:offsets[i + 1]] for i in (0, 7)] == [b"row0", b"row7"]
    some = table.scan(columns=["x"], filter="id >= 100")
    assert set(some) == {"x"} and torch.equal(some["x"], torch.arange(100, ROWS, dtype=torch.float64) / 2)
    none = table.scan(columns=["id", "name"], filter="id < 0")
    assert none["id"].shape == (0,) and none["name"].shape == (0,) and none["name.offsets"].tolist() == [0]


def test_scan_takes_the_loaders_null_policies(tmp_path: pathlib.Path) -> None:
    csv = tmp_path / "nulls.csv"
    csv.write_text("id,x\n0,0.5\n1,\n2,2.5\n")
    table = lakerun.Table(lakerun.import_csv(str(csv), str(tmp_path / "t"))["path"])
    assert table.scan(nulls={"x": "drop_row"})["id"].tolist() == [0, 2]
    filled = table.scan(nulls={"x": {"fill_value": -1.0}})
    assert filled["x"].tolist() == [0.5, -1.0, 2.5] and filled["x.valid"].tolist() == [True, False, True]
    with pytest.raises(lakerun.InvalidArgument, match="'x'"):
        table.scan()


def test_convert_reuses_its_entry_until_the_options_change(delta_table: str, csv_file: pathlib.Path,
                                                           tmp_path: pathlib.Path) -> None:
    cache = str(tmp_path / "cache")
    first = lakerun.convert(delta_table, cache, columns=["id"], filter="id < 50", world_size=2, row_group_rows=8)
    assert (first["reused"], first["rows"], first["files"]) == (False, 50, 2)
    assert lakerun.convert(delta_table, cache, columns=["id"], filter="id < 50", world_size=2,
                           row_group_rows=8)["reused"]
    other = lakerun.convert(delta_table, cache, columns=["id"], filter="id < 50", world_size=4, row_group_rows=8)
    assert not other["reused"] and other["key"] != first["key"]
    loader = lakerun.Loader(first["path"], batch_size=50, shuffle=False)
    assert next(iter(loader))["id"].tolist() == list(range(50))
    from_csv = lakerun.convert(str(csv_file), cache, kind="csv")
    assert from_csv["rows"] == ROWS
    lakerun.clear_cache(cache, first["key"])
    assert not os.path.exists(first["path"]) and os.path.exists(other["path"])
    lakerun.clear_cache(cache)
    assert os.listdir(cache) == []


def test_convert_arguments_are_checked(delta_table: str, csv_file: pathlib.Path, tmp_path: pathlib.Path) -> None:
    with pytest.raises(lakerun.InvalidArgument, match="kind 'tables'"):
        lakerun.convert(delta_table, str(tmp_path), kind="tables")
    with pytest.raises(lakerun.InvalidArgument, match="apply to kind='table' only"):
        lakerun.convert(str(csv_file), str(tmp_path), kind="csv", columns=["id"])
    with pytest.raises(lakerun.ConfigError, match="world_size"):
        lakerun.convert(delta_table, str(tmp_path), world_size=0)
