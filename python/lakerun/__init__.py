"""lakerun: train PyTorch models from Parquet and Delta tables.

A thin layer over lakerun's C++ core (the ``_lakerun`` extension): the same loader a C++ training program uses,
with the same guarantees (docs/data.md): every rank yields the same number of batches, the order depends only on
(seed, epoch), and a loader resumes mid-epoch from its ``state_dict()``. Batches are dicts of ``torch.Tensor``
handed over from C++ without a copy. ``lakerun.distributed(processes=N)`` runs a function on N ranks through
lakerun's launcher and returns every rank's result. See docs/python.md.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import torch  # loads libtorch_python, which the extension's tensor conversions need

from . import _lakerun
from ._lakerun import (
    CommTimeout,
    ConfigError,
    CorruptDataError,
    DistError,
    Error,
    InternalError,
    InvalidArgument,
    IoError,
    NotImplementedError,
    Table,
)
from .distributed import Distributed, DistributedFunction, RankError, distributed
from .tables import clear_cache, convert, import_csv, import_fashion_mnist, import_images, import_mnist

__version__: str = _lakerun.__version__

__all__ = [
    "Loader", "Table", "distributed", "Distributed", "DistributedFunction", "Error", "IoError", "CorruptDataError",
    "InvalidArgument", "ConfigError", "NotImplementedError", "InternalError", "DistError", "CommTimeout", "RankError",
    "import_fashion_mnist", "import_mnist", "import_images", "import_csv", "convert", "clear_cache", "__version__",
]

Table.__module__ = "lakerun"


def _distributed_place() -> Tuple[Optional[int], Optional[int]]:
    """(rank, world_size) of torch.distributed's default group when it is initialised, else (None, None)."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None, None


class Loader(_lakerun._Loader):
    """Batches of a table on this rank: an iterable of ``{column: torch.Tensor}``.

    Iterating continues the current epoch from its position and stops at its end; iterating again after the end
    replays that epoch, so call ``set_epoch(e)`` before each epoch for a new order (as with a DistributedSampler).

    Args:
        table: a Delta table, a folder of Parquet files or one Parquet file (a path or URI), or a ``lakerun.Table``.
            A path is opened by this loader (at ``version`` / ``timestamp``). A ``Table`` was opened once, at its
            version, and loaders over it share what it opened: the same snapshot, and decode memory that an earlier
            loader already faulted in, so a new loader's first epoch runs as fast as the next epochs' decoding.
        columns: columns to read, in this order; None reads every column. Binary and string columns must be
            named in ``raw_bytes`` or ``images``.
        batch_size: samples per batch.
        shuffle: shuffle the samples (block/window shuffle, docs/data.md); False reads them in table order.
        seed: the shuffle's seed; the order of an epoch depends only on (seed, epoch).
        filter: rows to read, in lakerun's filter syntax, e.g. ``"split = 'train' and label < 5"``.
        rank, world_size: this process's place among the ranks; each rank reads its own 1/world_size of the
            samples, the same number on every rank (the last samples padded from the start of the epoch). None for
            both: torch.distributed's rank and world size when it is initialised, else every sample (0 of 1).
        drop_last: drop each rank's last partial batch.
        num_threads: decoding threads (0: decode inside ``next()``).
        shuffle_block_size, shuffle_window_blocks: the block/window shuffle's sizes; None keeps lakerun's
            defaults (1024 and 8).
        version, timestamp: a Delta table's version, or the newest version committed at or before ``timestamp``
            (ms since 1970); the latest when both are None. With a ``Table``, its own version (another one is an
            InvalidArgument).
        raw_bytes: binary or string columns handed over undecoded: ``batch[c]`` is uint8 [total bytes of the
            batch] and ``batch[c + ".offsets"]`` int64 [B + 1] (sample i is ``batch[c][offsets[i]:offsets[i+1]]``);
            a column of fixed-size values (Fashion-MNIST's 784-byte images) is ``batch[c].view(B, -1)``.
        images: binary columns of JPEG or PNG images, decoded (and transformed) on the loader's threads into
            ``batch[c]``, uint8 [B, C, H, W] (float32 with ``to_float``). Per column, a dict of settings:
            ``channels`` (1 or 3; default 3), ``resize`` (the shorter side, bilinear; 0 keeps the size), ``crop``
            (an int or (height, width); needed unless every image has one size), ``random_crop`` (else centred),
            ``flip_probability`` (horizontal flips), ``to_float`` (to [0, 1]), ``mean`` / ``std`` (per channel,
            with ``to_float``), ``max_pixels`` (a larger image is a CorruptDataError). Random crops and flips
            depend only on (seed, epoch, sample).
        nulls: what a null becomes, per column, instead of an error naming the column and row: a dict with
            ``fill_value`` (written in its place; default 0) and ``emit_mask`` (default True: also
            ``batch[c + ".valid"]``, bool [B], False where the value was null); or ``"drop_row"``: rows where the
            column is null are left out, before the rows are counted and sharded (every rank still gets as many).
        lists: variable-length list columns, per column, instead of an error at the first list whose length
            differs from the column's: a dict with ``layout`` (``"padded"``, the default: ``batch[c]`` [B, L, ...]
            padded with ``pad_value``; or ``"flat"``: [E, ...], the batch's elements row after row), ``pad_to`` (L;
            0, the default, pads to the batch's longest list), ``truncate`` (with ``pad_to``, cut longer lists
            instead of raising) and ``pad_value`` (default 0). ``batch[c + ".lengths"]``, int64 [B], holds each
            row's element count.
        forms: how decimal and timestamp columns become numbers, per column: ``decimal`` is ``"float64"`` (the
            default: the nearest float64) or ``"unscaled_int64"`` (the unscaled integer; value = tensor / 10^scale;
            a value beyond int64 raises); ``timestamp`` is ``"us"`` (the default: microseconds since 1970, Delta's
            unit) or ``"ns"`` (nanoseconds; years 1677-2262, a value outside raises).

    Raises:
        lakerun.IoError: the table cannot be read (the message names the path).
        lakerun.ConfigError: an option is invalid (batch_size < 1, a rank outside world_size, one of the two).
        lakerun.InvalidArgument: a column the table lacks, a malformed filter.
    """

    def __init__(self, table: Union[str, "Table"], columns: Optional[Sequence[str]] = None, batch_size: int = 32,
                 shuffle: bool = True, seed: int = 0, filter: Optional[str] = None, rank: Optional[int] = None,
                 world_size: Optional[int] = None, drop_last: bool = False, num_threads: int = 2,
                 shuffle_block_size: Optional[int] = None, shuffle_window_blocks: Optional[int] = None,
                 version: Optional[int] = None, timestamp: Optional[int] = None,
                 raw_bytes: Optional[Sequence[str]] = None, images: Optional[Dict[str, Dict[str, Any]]] = None,
                 nulls: Optional[Dict[str, Union[str, Dict[str, Any]]]] = None,
                 lists: Optional[Dict[str, Dict[str, Any]]] = None,
                 forms: Optional[Dict[str, Dict[str, str]]] = None) -> None:
        if rank is None and world_size is None:
            rank, world_size = _distributed_place()
        super().__init__(table, None if columns is None else list(columns), batch_size, shuffle, seed,
                         filter, rank, world_size, drop_last, num_threads, shuffle_block_size,
                         shuffle_window_blocks, version, timestamp, None if raw_bytes is None else list(raw_bytes),
                         None if images is None else {c: dict(s) for c, s in images.items()},
                         None if nulls is None else {c: p if isinstance(p, str) else dict(p)
                                                     for c, p in nulls.items()},
                         None if lists is None else {c: dict(s) for c, s in lists.items()},
                         None if forms is None else {c: dict(s) for c, s in forms.items()})

    def __iter__(self) -> Iterator[Dict[str, torch.Tensor]]:
        """Continues the current epoch (replays it once an iteration reached its end)."""
        return super().__iter__()

    # __next__ is the C++ one (its docstring says the same): a Python override cost 0.75 us a batch.

    def __len__(self) -> int:
        """Batches this rank yields per epoch (the same on every rank)."""
        return super().__len__()

    def set_epoch(self, epoch: int) -> None:
        """Starts ``epoch`` from its beginning (its order differs from other epochs' when shuffling)."""
        super().set_epoch(epoch)

    def state_dict(self) -> Dict[str, int]:
        """The position after the last batch returned, as named integers (save it with a checkpoint)."""
        return super().state_dict()

    def load_state_dict(self, state: Dict[str, int]) -> None:
        """Continues from ``state`` (a ``state_dict()``, taken under any world size): the next batches are the
        samples of its epoch not yet yielded. Raises lakerun.InvalidArgument for another table's or seed's state."""
        super().load_state_dict(state)
