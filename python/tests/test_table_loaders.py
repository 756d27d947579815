"""Loaders over a lakerun.Table: they read the version the table was opened at and share what it opened."""

from __future__ import annotations

import gc
import json
import pathlib
import resource
import shutil

import pytest

import lakerun
from conftest import ROWS, import_csv


def remove_every_file(table: pathlib.Path) -> None:
    """Commits the next version of a Delta table by hand: every data file removed."""
    log = table / "_delta_log"
    commits = sorted(log.glob("*.json"))
    added = [json.loads(line)["add"]["path"] for c in commits for line in c.read_text().splitlines()
             if line.startswith('{"add"')]
    actions = [{"remove": {"path": p, "deletionTimestamp": 1, "dataChange": True}} for p in added]
    (log / f"{len(commits):020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))


def test_loaders_over_a_table_read_its_version_after_a_later_commit(delta_table, tmp_path):
    path = tmp_path / "t"
    shutil.copytree(delta_table, path)
    table = lakerun.Table(str(path))
    remove_every_file(path)
    assert lakerun.Table(str(path)).num_rows == 0
    assert len(lakerun.Loader(str(path), columns=["id"], batch_size=1)) == 0
    assert table.version == 1
    assert len(lakerun.Loader(table, raw_bytes=["name"], batch_size=1)) == ROWS
    # A projection opened after the commit reads the table's version too.
    assert len(lakerun.Loader(table, columns=["id"], filter="id < 10", batch_size=1)) == 10


def test_a_table_refuses_another_version(delta_table):
    table = lakerun.Table(delta_table, version=1)
    assert len(lakerun.Loader(table, version=1, columns=["id"], batch_size=ROWS)) == 1
    for other in ({"version": 0}, {"timestamp": 2**62}):
        with pytest.raises(lakerun.InvalidArgument, match="opened at \\(1\\)"):
            lakerun.Loader(table, columns=["id"], **other)


@pytest.fixture(scope="module")
def wide_table(tmp_path_factory: pytest.TempPathFactory) -> str:
    """20,000 rows of 400-byte strings: 8 MB decoded, about 2,000 pages of memory."""
    csv = tmp_path_factory.mktemp("wide") / "wide.csv"
    csv.write_text("id,text\n" + "".join(f"{i},{str(i).rjust(400, 'x')}\n" for i in range(20_000)))
    return str(import_csv(csv, tmp_path_factory.mktemp("wide") / "t", "--codec", "snappy"))


def epoch_page_faults(loader: lakerun.Loader) -> int:
    """Minor page faults of this process while `loader` runs one epoch."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in loader:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_a_new_loader_over_a_table_decodes_into_memory_already_mapped(wide_table):
    table = lakerun.Table(wide_table)
    # Small batches: the batches in flight (up to 64) are fresh memory of every loader, and must not hide the 8 MB of
    # decode memory the table's loaders share.
    settings = dict(raw_bytes=["text"], batch_size=50, num_threads=1, seed=3)
    epoch_page_faults(lakerun.Loader(table, **settings))  # the table's first loader faults its decode memory in
    gc.collect()
    from_path = epoch_page_faults(lakerun.Loader(wide_table, **settings))
    gc.collect()
    over_table = epoch_page_faults(lakerun.Loader(table, **settings))
    assert from_path > 1000  # fresh decode memory: 8 MB in 4 KiB pages
    assert over_table < from_path / 2, (over_table, from_path)
