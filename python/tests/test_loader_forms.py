"""lakerun.Loader's column forms (decimals, timestamps), list policies and the "drop_row" null policy, on a Parquet
file DuckDB writes (tests/interop/write_parquet.mjs): the column types Spark and Databricks tables hold, which
lakerun's CSV import does not make."""

from __future__ import annotations

import datetime
import pathlib
import shutil
import subprocess

import pytest
import torch

import lakerun
from conftest import ROOT

WRITER = ROOT / "tests" / "interop" / "write_parquet.mjs"
ROWS = 24
# id; price = 1.25 id as DECIMAL(12, 2); ts = 2024-01-02 03:04:05.123456 + id seconds; maybe = id, null where
# id % 3 == 0; tokens = [0, 1, ..., id % 4 - 1].
QUERY = (f"SELECT i::BIGINT AS id, (i * 1.25)::DECIMAL(12,2) AS price, "
         f"TIMESTAMP '2024-01-02 03:04:05.123456' + to_seconds(i) AS ts, "
         f"CASE WHEN i % 3 = 0 THEN NULL ELSE i END AS maybe, range(i % 4) AS tokens FROM range({ROWS}) t(i)")
TS0_US = int((datetime.datetime(2024, 1, 2, 3, 4, 5, 123456) - datetime.datetime(1970, 1, 1))
             / datetime.timedelta(microseconds=1))


@pytest.fixture(scope="module")
def typed_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    node = shutil.which("node")
    if node is None or not (ROOT / "tests" / "interop" / "node_modules" / "@duckdb" / "node-api").is_dir():
        pytest.skip("needs node and DuckDB's @duckdb/node-api (scripts/setup.sh runs npm ci in tests/interop)")
    out = tmp_path_factory.mktemp("typed") / "typed.parquet"
    subprocess.run([node, str(WRITER), str(out), QUERY], check=True, timeout=120)
    return str(out)


def one_batch(path: str, **options) -> dict:
    return next(iter(lakerun.Loader(path, batch_size=ROWS, shuffle=False, **options)))


def test_decimals_read_as_float64_or_as_their_unscaled_integers(typed_file: str) -> None:
    ids = torch.arange(ROWS)
    default = one_batch(typed_file, columns=["price"])["price"]
    assert default.dtype == torch.float64
    assert torch.equal(default, ids * 1.25)
    unscaled = one_batch(typed_file, columns=["price"], forms={"price": {"decimal": "unscaled_int64"}})["price"]
    assert unscaled.dtype == torch.int64
    assert torch.equal(unscaled, ids * 125)  # value = tensor / 10^2


def test_timestamps_read_in_microseconds_or_nanoseconds(typed_file: str) -> None:
    micros = one_batch(typed_file, columns=["ts"])["ts"]
    assert torch.equal(micros, TS0_US + torch.arange(ROWS) * 1_000_000)
    nanos = one_batch(typed_file, columns=["ts"], forms={"ts": {"timestamp": "ns"}})["ts"]
    assert torch.equal(nanos, micros * 1000)


def test_form_settings_are_checked_by_name(typed_file: str) -> None:
    with pytest.raises(lakerun.InvalidArgument, match=r"forms\['price'\]\['decimal'\]: 'int' is not one of"):
        lakerun.Loader(typed_file, columns=["price"], forms={"price": {"decimal": "int"}})
    with pytest.raises(lakerun.InvalidArgument, match=r"forms\['ts'\]: unknown setting 'unit'"):
        lakerun.Loader(typed_file, columns=["ts"], forms={"ts": {"unit": "ns"}})


def test_list_columns_padded_flat_or_truncated(typed_file: str) -> None:
    lengths = torch.arange(ROWS) % 4
    padded = one_batch(typed_file, columns=["tokens"], lists={"tokens": {"pad_value": -1}})
    assert torch.equal(padded["tokens.lengths"], lengths)
    assert padded["tokens"].shape == (ROWS, 3)
    assert padded["tokens"][3].tolist() == [0, 1, 2] and padded["tokens"][5].tolist() == [0, -1, -1]
    flat = one_batch(typed_file, columns=["tokens"], lists={"tokens": {"layout": "flat"}})
    assert flat["tokens"].tolist() == [t for n in lengths.tolist() for t in range(n)]
    cut = one_batch(typed_file, columns=["tokens"], lists={"tokens": {"pad_to": 2, "truncate": True}})
    assert cut["tokens"].shape == (ROWS, 2) and cut["tokens.lengths"].max() == 2
    with pytest.raises(lakerun.InvalidArgument, match=r"lists\['tokens'\]\['layout'\]: 'ragged' is not one of"):
        lakerun.Loader(typed_file, columns=["tokens"], lists={"tokens": {"layout": "ragged"}})
    with pytest.raises(lakerun.InvalidArgument, match="tokens"):
        one_batch(typed_file, columns=["tokens"])  # lists of several lengths need a policy


def test_drop_row_leaves_the_null_rows_out_before_sharding(typed_file: str) -> None:
    kept = [i for i in range(ROWS) if i % 3 != 0]
    loader = lakerun.Loader(typed_file, columns=["id", "maybe"], batch_size=ROWS, shuffle=False,
                            nulls={"maybe": "drop_row"})
    assert loader.num_rows == len(kept)
    assert next(iter(loader))["id"].tolist() == kept
    ranks = [lakerun.Loader(typed_file, columns=["id"], batch_size=ROWS, shuffle=False, rank=r, world_size=2,
                            nulls={"maybe": "drop_row"}) for r in range(2)]
    assert sorted(i for r in ranks for i in next(iter(r))["id"].tolist()) == kept
    with pytest.raises(lakerun.InvalidArgument, match=r"nulls\['maybe'\]: 'drop' is not a policy"):
        lakerun.Loader(typed_file, columns=["maybe"], nulls={"maybe": "drop"})


def test_loaders_over_one_table_share_a_source_per_projection(typed_file: str) -> None:
    table = lakerun.Table(typed_file)
    dropped = lakerun.Loader(table, columns=["id"], batch_size=ROWS, shuffle=False, nulls={"maybe": "drop_row"})
    every = lakerun.Loader(table, columns=["id"], batch_size=ROWS, shuffle=False)
    unscaled = lakerun.Loader(table, columns=["price"], batch_size=ROWS, shuffle=False,
                              forms={"price": {"decimal": "unscaled_int64"}})
    assert (dropped.num_rows, every.num_rows) == (16, ROWS)
    assert next(iter(unscaled))["price"].dtype == torch.int64
    assert next(iter(lakerun.Loader(table, columns=["price"], batch_size=ROWS)))["price"].dtype == torch.float64
