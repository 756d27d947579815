"""lakerun.Table on Delta and Parquet tables, and the mapping of lakerun's C++ errors to Python exceptions."""

from __future__ import annotations

import pytest
import torch

import lakerun
from conftest import ROWS


def test_delta_table_latest_version(delta_table):
    table = lakerun.Table(delta_table)
    assert table.version == 1
    assert table.num_rows == ROWS
    assert table.schema == [("id", "int64"), ("x", "float64"), ("name", "binary")]
    head = table.head(3)
    assert torch.equal(head["id"], torch.tensor([0, 1, 2]))
    assert torch.equal(head["x"], torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64))
    assert head["name"] == [b"row0", b"row1", b"row2"]
    assert table.head(1000)["id"].tolist() == list(range(ROWS))


def test_delta_table_time_travel(delta_table):
    first = lakerun.Table(delta_table, version=0)
    assert (first.version, first.num_rows) == (0, 0)
    assert first.head(3)["id"].shape == (0,)
    assert lakerun.Table(delta_table, timestamp=2**62).version == 1
    assert len(lakerun.Loader(first, columns=["id"])) == 0
    assert len(lakerun.Loader(lakerun.Table(delta_table), columns=["id"], batch_size=ROWS)) == 1


def test_parquet_table_has_no_version(parquet_table):
    table = lakerun.Table(parquet_table)
    assert table.version is None
    assert table.num_rows == ROWS


def test_filter(delta_table, ids):
    loader = lakerun.Loader(delta_table, columns=["id"], filter="id < 10 and x >= 2", shuffle=False)
    assert loader.num_rows == 6
    assert ids(loader) == [4, 5, 6, 7, 8, 9]


def test_missing_table_is_an_io_error_naming_the_path(tmp_path):
    missing = str(tmp_path / "no_such_table")
    for open_it in (lambda: lakerun.Table(missing), lambda: lakerun.Loader(missing)):
        with pytest.raises(lakerun.IoError, match="no_such_table") as error:
            open_it()
        assert isinstance(error.value, OSError) and isinstance(error.value, lakerun.Error)


def test_bad_options_are_config_errors(delta_table):
    with pytest.raises(lakerun.ConfigError, match="batch_size"):
        lakerun.Loader(delta_table, columns=["id"], batch_size=0)
    with pytest.raises(ValueError):
        lakerun.Loader(delta_table, columns=["id"], rank=2, world_size=2)


def test_unknown_column_is_an_invalid_argument(delta_table):
    with pytest.raises(lakerun.InvalidArgument, match="nope"):
        lakerun.Loader(delta_table, columns=["nope"])


def test_error_hierarchy():
    assert issubclass(lakerun.CommTimeout, lakerun.DistError) and issubclass(lakerun.CommTimeout, TimeoutError)
    assert issubclass(lakerun.ConfigError, ValueError) and issubclass(lakerun.InvalidArgument, ValueError)
    assert issubclass(lakerun.CorruptDataError, lakerun.Error)
    assert lakerun.IoError.__module__ == "lakerun"


def test_string_column_in_a_loader_is_not_implemented_yet(delta_table):
    with pytest.raises(lakerun.NotImplementedError, match="'name'"):
        lakerun.Loader(delta_table)
