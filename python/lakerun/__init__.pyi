"""Type hints of the lakerun package (docs/python.md)."""

import builtins
from typing import Any, Callable, Dict, Generic, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

import torch

__version__: str

class Error(Exception):
    """Base of every exception lakerun raises; str(e) is the C++ message."""

class IoError(Error, OSError):
    """A file or socket operation failed (a missing table: the message names the path)."""

class CorruptDataError(Error):
    """Bytes do not follow the format they claim."""

class InvalidArgument(Error, ValueError):
    """A call is wrong for what it is applied to (an unknown column, a state of another table)."""

class ConfigError(Error, ValueError):
    """An option is invalid or inconsistent."""

class NotImplementedError(Error, builtins.NotImplementedError):
    """The input uses a feature lakerun does not implement."""

class InternalError(Error):
    """A lakerun invariant broke: a bug in lakerun."""

class DistError(Error):
    """A distributed operation failed."""

class CommTimeout(DistError, TimeoutError):
    """A distributed wait ran past its deadline."""

class Table:
    """A Parquet file, a folder of Parquet files or a Delta table, opened once, at one version: loaders over it
    (``lakerun.Loader(table, ...)``) read that snapshot and share its decode memory."""

    def __init__(self, path: str, version: Optional[int] = None, timestamp: Optional[int] = None) -> None: ...
    @property
    def path(self) -> str:
        """The path the table was opened from."""
    @property
    def version(self) -> Optional[int]:
        """The Delta version read; None for Parquet files."""
    @property
    def num_rows(self) -> int:
        """Rows of the table (after deletion vectors)."""
    @property
    def schema(self) -> List[Tuple[str, str]]:
        """[(name, type)] of every column: 'int64', 'uint8[784]', 'binary', 'list<float32>'."""
    def head(self, n: int = 5) -> Dict[str, Union[torch.Tensor, List[bytes], List[List[bytes]]]]:
        """The first n rows in table order: tensors for fixed-width columns, lists of bytes for binary ones."""
    def scan(self, columns: Optional[Sequence[str]] = None, filter: Optional[str] = None,
             nulls: Optional[Dict[str, Union[str, Dict[str, Any]]]] = None,
             lists: Optional[Dict[str, Dict[str, Any]]] = None,
             forms: Optional[Dict[str, Dict[str, str]]] = None) -> Dict[str, torch.Tensor]:
        """Every row of `columns` passing `filter`, in table order, as tensors (binary columns as raw bytes with
        column + '.offsets'); nulls, lists and forms as Loader takes them. Holds the whole result in memory."""

class Loader:
    """Batches of a table on this rank: an iterable of {column: torch.Tensor}."""

    def __init__(self, table: Union[str, Table], columns: Optional[Sequence[str]] = None, batch_size: int = 32,
                 shuffle: bool = True, seed: int = 0, filter: Optional[str] = None, rank: Optional[int] = None,
                 world_size: Optional[int] = None, drop_last: bool = False, num_threads: int = 2,
                 shuffle_block_size: Optional[int] = None, shuffle_window_blocks: Optional[int] = None,
                 version: Optional[int] = None, timestamp: Optional[int] = None,
                 raw_bytes: Optional[Sequence[str]] = None, images: Optional[Dict[str, Dict[str, Any]]] = None,
                 nulls: Optional[Dict[str, Union[str, Dict[str, Any]]]] = None,
                 lists: Optional[Dict[str, Dict[str, Any]]] = None,
                 forms: Optional[Dict[str, Dict[str, str]]] = None) -> None: ...
    def __iter__(self) -> Iterator[Dict[str, torch.Tensor]]:
        """Continues the current epoch (replays it once an iteration reached its end)."""
    def __next__(self) -> Dict[str, torch.Tensor]:
        """The next batch; StopIteration at the end of the epoch."""
    def __len__(self) -> int:
        """Batches this rank yields per epoch."""
    def set_epoch(self, epoch: int) -> None:
        """Starts `epoch` from its beginning."""
    def state_dict(self) -> Dict[str, int]:
        """The position after the last batch returned."""
    def load_state_dict(self, state: Dict[str, int]) -> None:
        """Continues from a state_dict()."""
    @property
    def epoch(self) -> int:
        """The current epoch."""
    @property
    def rank(self) -> int:
        """This loader's rank."""
    @property
    def world_size(self) -> int:
        """The number of ranks the table is sharded over."""
    @property
    def num_rows(self) -> int:
        """Rows of the table (after the filter)."""
    @property
    def samples_per_epoch(self) -> int:
        """Samples this rank yields per epoch (padding included)."""

_R = TypeVar("_R")

class RankError(DistError):
    """The function raised on a rank: the first rank to fail, with its traceback."""

    rank: int
    """The rank whose function raised."""
    function: str
    """The function's qualified name."""
    remote_traceback: str
    """The rank's traceback, as text."""
    exception: Optional[BaseException]
    """The rank's exception when it could be pickled back (also __cause__), else None."""

class DistributedFunction(Generic[_R]):
    """A function that runs on every rank when called (what @lakerun.distributed(...) makes of it)."""

    __wrapped__: Callable[..., _R]
    def __call__(self, *args: Any, **kwargs: Any) -> List[_R]:
        """Runs the function on every rank with these arguments; returns the ranks' return values, by rank."""

class Distributed:
    """The settings of lakerun.distributed(...): a decorator, and run(fn, *args, **kwargs)."""

    processes: int
    use_gpu: bool
    max_restarts: int
    timeout: Optional[float]
    start_method: str
    def __call__(self, fn: Callable[..., _R]) -> DistributedFunction[_R]:
        """Decorates fn: calling the result runs fn on every rank."""
    def run(self, fn: Callable[..., _R], *args: Any, **kwargs: Any) -> List[_R]:
        """Calls fn(*args, **kwargs) on every rank; returns the return values, indexed by rank."""

def distributed(processes: int = 1, use_gpu: bool = False, max_restarts: int = 0,
                timeout: Optional[float] = None, start_method: str = "exec") -> Distributed:
    """Runs a function on `processes` local ranks through lakerun's launcher, each with torchrun's environment
    (torch.distributed.init_process_group() needs no arguments), and returns every rank's return value, by rank.

    Function, arguments and results travel with cloudpickle. Output is prefixed "[rankN] ". Raises RankError (the
    function raised on a rank), DistError (a rank died, by a signal: named), CommTimeout (past `timeout` seconds),
    KeyboardInterrupt (Ctrl-C stopped every rank). start_method "fork" starts one interpreter, which imports torch
    and lakerun once and forks the ranks; "exec" starts one per rank."""

def import_fashion_mnist(out: str, source: str = ..., splits: Sequence[str] = ("train", "test"),
                         **options: Any) -> List[Dict[str, Any]]:
    """Fashion-MNIST's IDX files as out/train and out/test; one {path, rows, files, bytes, seconds} per split."""
def import_mnist(out: str, source: str, splits: Sequence[str] = ("train", "test"),
                 **options: Any) -> List[Dict[str, Any]]:
    """MNIST's IDX files as out/train and out/test."""
def import_images(directory: str, out: str, **options: Any) -> Dict[str, Any]:
    """A folder of images in class sub-folders as a table (image, label, class, file)."""
def import_csv(file: str, out: str, **options: Any) -> Dict[str, Any]:
    """A CSV file with a header line as a table (columns typed long, double or string)."""
def convert(source: str, cache_dir: str, kind: str = "table", *, columns: Optional[Sequence[str]] = None,
            filter: Optional[str] = None, version: Optional[int] = None, split: str = "train", world_size: int = 1,
            row_group_rows: int = 8192, rows_per_file: int = ...) -> Dict[str, Any]:
    """Materialises a source in the converter's cache, laid out for world_size ranks; {path, key, reused, rows,
    files}."""
def clear_cache(cache_dir: str, key: Optional[str] = None) -> None:
    """Removes one entry of the converter's cache, or every entry."""
