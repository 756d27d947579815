"""Fixtures of the lakerun package's tests: tables written by lakerun's own writer (`lakerun table import csv`)."""

from __future__ import annotations

import os
import pathlib
import subprocess
from typing import Callable

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROWS = 104


def lakerun_bin() -> str:
    """The `lakerun` command: $LAKERUN_BIN (set by ctest), else the default build tree's."""
    return os.environ.get("LAKERUN_BIN", str(ROOT / "build" / "bin" / "lakerun"))


def import_csv(csv: pathlib.Path, out: pathlib.Path, *flags: str) -> pathlib.Path:
    """Writes `csv` as a table at `out` with `lakerun table import csv`."""
    subprocess.run([lakerun_bin(), "table", "import", "csv", str(csv), str(out), "--no-progress", *flags],
                   check=True, stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="session")
def csv_file(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """ROWS rows: id = 0..ROWS-1 (long), x = id / 2 (double), name = 'row<id>' (string)."""
    path = tmp_path_factory.mktemp("csv") / "rows.csv"
    path.write_text("id,x,name\n" + "".join(f"{i},{i / 2},row{i}\n" for i in range(ROWS)))
    return path


@pytest.fixture(scope="session")
def delta_table(csv_file: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Delta table of two versions: 0 creates it (no rows), 1 appends the CSV's rows in row groups of 10."""
    return str(import_csv(csv_file, tmp_path_factory.mktemp("delta") / "t", "--row-group-rows", "10"))


@pytest.fixture(scope="session")
def parquet_table(csv_file: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same rows as a folder of Parquet files (no Delta log)."""
    return str(import_csv(csv_file, tmp_path_factory.mktemp("parquet") / "t", "--format", "parquet"))


@pytest.fixture
def ids() -> Callable:
    """Returns the ids of an iterable of batches, in order."""
    def collect(batches) -> list:
        return [i for batch in batches for i in batch["id"].tolist()]
    return collect
