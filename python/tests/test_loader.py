"""lakerun.Loader: sharding, deterministic shuffle, resume, zero-copy batches."""

from __future__ import annotations

import pytest
import torch

import lakerun
from conftest import ROWS


def test_batches_are_dicts_of_tensors(delta_table, ids):
    loader = lakerun.Loader(delta_table, columns=["id", "x"], batch_size=10, shuffle=False, num_threads=0)
    batches = list(loader)
    assert len(loader) == len(batches) == 11
    assert set(batches[0]) == {"id", "x"}
    assert batches[0]["id"].dtype == torch.int64 and batches[0]["x"].dtype == torch.float64
    assert ids(batches) == list(range(ROWS))
    assert torch.equal(batches[3]["x"], batches[3]["id"].double() / 2)


@pytest.mark.parametrize("drop_last", [False, True])
def test_two_ranks_cover_every_sample_once_with_equal_lengths(delta_table, ids, drop_last):
    loaders = [lakerun.Loader(delta_table, columns=["id"], batch_size=8, seed=3, rank=r, world_size=2,
                              drop_last=drop_last) for r in range(2)]
    assert len(loaders[0]) == len(loaders[1]) == (6 if drop_last else 7)
    shards = [ids(loader) for loader in loaders]
    assert len(shards[0]) == len(shards[1])
    assert not set(shards[0]) & set(shards[1])
    if drop_last:
        assert len(shards[0]) == 48
    else:
        assert sorted(shards[0] + shards[1]) == list(range(ROWS))


def test_rank_and_world_size_default_to_torch_distributed(delta_table, monkeypatch):
    assert lakerun.Loader(delta_table, columns=["id"]).world_size == 1
    monkeypatch.setattr(torch.distributed, "is_available", lambda: True)
    monkeypatch.setattr(torch.distributed, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.distributed, "get_rank", lambda: 1)
    monkeypatch.setattr(torch.distributed, "get_world_size", lambda: 2)
    loader = lakerun.Loader(delta_table, columns=["id"])
    assert (loader.rank, loader.world_size) == (1, 2)
    explicit = lakerun.Loader(delta_table, columns=["id"], rank=0, world_size=4)
    assert (explicit.rank, explicit.world_size) == (0, 4)


def test_shuffle_depends_only_on_seed_and_epoch(delta_table, ids):
    def order(seed: int, epoch: int, threads: int = 2) -> list:
        loader = lakerun.Loader(delta_table, columns=["id"], batch_size=7, seed=seed, num_threads=threads,
                                shuffle_block_size=4, shuffle_window_blocks=4)
        loader.set_epoch(epoch)
        return ids(loader)

    first = order(seed=5, epoch=0)
    assert sorted(first) == list(range(ROWS)) and first != list(range(ROWS))
    assert order(seed=5, epoch=0, threads=0) == first
    assert order(seed=5, epoch=1) != first
    assert order(seed=6, epoch=0) != first


def test_iterating_again_replays_the_epoch(delta_table, ids):
    loader = lakerun.Loader(delta_table, columns=["id"], batch_size=16, seed=1)
    assert ids(loader) == ids(loader)
    assert loader.epoch == 0


def test_resume_mid_epoch_yields_the_rest_of_the_epoch(delta_table, ids):
    def make() -> lakerun.Loader:
        return lakerun.Loader(delta_table, columns=["id"], batch_size=8, seed=9, rank=1, world_size=2)

    uninterrupted = make()
    uninterrupted.set_epoch(2)
    whole = ids(uninterrupted)

    interrupted = make()
    interrupted.set_epoch(2)
    it = iter(interrupted)
    head = ids(next(it) for _ in range(3))
    state = interrupted.state_dict()
    assert state["epoch"] == 2 and state["samples_yielded"] == 24

    resumed = make()
    resumed.load_state_dict(state)
    assert head + ids(resumed) == whole


def test_load_state_dict_of_another_seed_is_an_error(delta_table):
    state = lakerun.Loader(delta_table, columns=["id"], seed=1).state_dict()
    with pytest.raises(lakerun.InvalidArgument):
        lakerun.Loader(delta_table, columns=["id"], seed=2).load_state_dict(state)


def test_batches_are_the_cpp_tensors_not_copies(delta_table):
    loader = lakerun.Loader(delta_table, columns=["id", "x"], batch_size=10)
    for batch in loader:
        # The addresses the C++ side recorded for this batch's tensors before handing them over: a copy anywhere
        # in the binding (a clone, a numpy round trip, a contiguous() of a strided tensor) would differ.
        assert {name: t.data_ptr() for name, t in batch.items()} == loader._last_batch_data_ptrs()


def test_raw_bytes_hands_a_string_column_over_undecoded(delta_table, ids):
    loader = lakerun.Loader(delta_table, columns=["id", "name"], raw_bytes=["name"], batch_size=10, shuffle=False)
    for batch in loader:
        data, offsets = batch["name"], batch["name.offsets"]
        assert data.dtype == torch.uint8 and offsets.shape == (batch["id"].shape[0] + 1,)
        names = [bytes(data[offsets[i]:offsets[i + 1]].tolist()).decode() for i in range(len(offsets) - 1)]
        assert names == [f"row{i}" for i in batch["id"].tolist()]
