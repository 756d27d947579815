"""The GIL is released while lakerun's C++ code produces batches: another Python thread runs meanwhile."""

from __future__ import annotations

import sys
import threading
import time

import pytest

import lakerun
from conftest import import_csv

ROWS = 300_000
LOADERS = 3


@pytest.fixture(scope="module")
def large_table(tmp_path_factory: pytest.TempPathFactory) -> str:
    """ROWS rows of (id long, x double): enough that producing its batches takes milliseconds."""
    directory = tmp_path_factory.mktemp("large")
    csv = directory / "rows.csv"
    csv.write_text("id,x\n" + "".join(f"{i},{i * 0.5}\n" for i in range(ROWS)))
    return str(import_csv(csv, directory / "t", "--row-group-rows", "50000"))


class Counter(threading.Thread):
    """Counts while it holds the GIL, sleeping 100 us between counts (a sleep releases the GIL)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.count = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.count += 1
            time.sleep(0.0001)


def test_another_thread_counts_while_batches_are_produced(large_table):
    # With a switch interval of a minute, the main thread keeps the GIL through its own Python code, so the counter
    # can only count while the main thread is inside a call that released the GIL: if next() held it, every count
    # taken around next() would be equal.
    interval = sys.getswitchinterval()
    counter = Counter()
    counter.start()
    try:
        sys.setswitchinterval(60)
        during_next = 0
        samples = 0
        for seed in range(LOADERS):  # fresh loaders: every batch decodes its rows inside next()
            it = iter(lakerun.Loader(large_table, columns=["id", "x"], batch_size=25_000, seed=seed, num_threads=0))
            while True:
                before = counter.count
                batch = next(it, None)
                during_next += counter.count - before
                if batch is None:
                    break
                samples += batch["id"].shape[0]
                del batch  # freeing a tensor may release the GIL: not inside the window counted
    finally:
        sys.setswitchinterval(interval)
        counter.stop.set()
        counter.join(timeout=10)
    assert samples == LOADERS * ROWS
    assert during_next > 0, f"no count while next() produced {LOADERS * 12} batches: the GIL was held"
