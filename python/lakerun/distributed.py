"""lakerun.distributed: a Python function run on N local ranks by lakerun's launcher, every rank's result returned.

The caller's side. The function and its arguments are pickled with cloudpickle and put in the launcher's store;
each rank is ``python -m lakerun._rank`` (``_rank.py``) with torchrun's environment, which unpickles them, calls the
function and stores its result or its exception. The launcher (C++, the GIL released) prefixes the ranks' output,
stops every rank when one fails, and stops them all on Ctrl-C (docs/python.md, "Running a function on N ranks").
"""

from __future__ import annotations

import functools
import os
import pickle
import sys
from typing import Any, Callable, Dict, List, Optional

import cloudpickle

from . import _lakerun
from ._console import Console
from ._lakerun import CommTimeout, DistError

# Limit on the pickled function and arguments, and on each rank's pickled result (as the C++ function API's).
MAX_PAYLOAD_BYTES = 64 << 20
# How long a rank waits for the payload, and to reach the store.
STORE_TIMEOUT_S = 120.0


class RankError(DistError):
    """The function raised on a rank. ``rank``: which; ``remote_traceback``: the rank's traceback text;
    ``exception``: the rank's exception object when it could be pickled back (also ``__cause__``), else None."""

    def __init__(self, rank: int, function: str, summary: str, remote_traceback: str,
                 exception: Optional[BaseException] = None) -> None:
        super().__init__(f"rank {rank}: function '{function}' raised {summary}\n\n"
                         f"Traceback on rank {rank}:\n{remote_traceback.rstrip()}")
        self.rank = rank
        self.function = function
        self.remote_traceback = remote_traceback
        self.exception = exception


RankError.__module__ = "lakerun"


class DistributedFunction:
    """A function that runs on every rank when called: what ``@lakerun.distributed(...)`` makes of ``fn``.
    Calling it returns the list of the ranks' return values, indexed by rank."""

    def __init__(self, fn: Callable[..., Any], runner: "Distributed") -> None:
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self._runner = runner

    def __call__(self, *args: Any, **kwargs: Any) -> List[Any]:
        return self._runner.run(self.__wrapped__, *args, **kwargs)


class Distributed:
    """The settings of ``lakerun.distributed(...)``: a decorator, and ``run(fn, *args, **kwargs)``."""

    def __init__(self, processes: int, use_gpu: bool, max_restarts: int, timeout: Optional[float],
                 start_method: str = "exec") -> None:
        if not isinstance(processes, int) or processes < 1:
            raise ValueError(f"lakerun.distributed: processes must be an int >= 1, got {processes!r}")
        if not isinstance(max_restarts, int) or max_restarts < 0:
            raise ValueError(f"lakerun.distributed: max_restarts must be an int >= 0, got {max_restarts!r}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"lakerun.distributed: timeout must be a positive number of seconds or None, "
                             f"got {timeout!r}")
        if start_method not in ("exec", "fork"):
            raise ValueError(f"lakerun.distributed: start_method must be 'exec' or 'fork', got {start_method!r}")
        self.processes = processes
        self.use_gpu = use_gpu
        self.max_restarts = max_restarts
        self.timeout = timeout
        self.start_method = start_method

    def __call__(self, fn: Callable[..., Any]) -> DistributedFunction:
        if not callable(fn):
            raise TypeError(f"lakerun.distributed(...) decorates a function, got {fn!r}")
        return DistributedFunction(fn, self)

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> List[Any]:
        """Calls ``fn(*args, **kwargs)`` on every rank; returns the return values, indexed by rank."""
        fn = _unwrap(fn)
        name = getattr(fn, "__qualname__", repr(fn))
        payload = _payload(fn, args, kwargs)
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        with Console() as console:
            outcome = _lakerun._launch([sys.executable or "python3", "-m", "lakerun._rank"], self.processes,
                                       payload, use_gpu=self.use_gpu, max_restarts=self.max_restarts,
                                       timeout=self.timeout, extra_env=_rank_environment(),
                                       start_method=self.start_method, stdout_fd=console.fds[0],
                                       stderr_fd=console.fds[1])
        return _results(outcome, name, self.timeout)


def distributed(processes: int = 1, use_gpu: bool = False, max_restarts: int = 0,
                timeout: Optional[float] = None, start_method: str = "exec") -> Distributed:
    """Runs a function on ``processes`` local ranks through lakerun's launcher.

    As a decorator::

        @lakerun.distributed(processes=2)
        def train(lr):
            torch.distributed.init_process_group("gloo")   # torchrun's environment: no arguments needed
            ...
            return accuracy
        accuracies = train(0.01)            # [rank 0's, rank 1's]

    or as a call: ``lakerun.distributed(processes=2)(train)(0.01)``, ``lakerun.distributed(processes=2).run(train,
    0.01)``.

    The function and its arguments travel with cloudpickle (functions of ``__main__`` and notebooks by value, those
    of importable modules by reference: the ranks get this process's ``sys.path``); so do the results, at most
    MAX_PAYLOAD_BYTES each. Each rank has torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
    MASTER_PORT, ...). The ranks' output reaches this process's sys.stdout and sys.stderr prefixed ``[rankN] ``
    (also when they are a notebook's streams rather than file descriptors 1 and 2).

    Args:
        processes: the number of ranks.
        use_gpu: one GPU per rank (CUDA_VISIBLE_DEVICES); more ranks than visible GPUs are capped with a warning.
        max_restarts: whole-group restarts after a rank fails.
        timeout: seconds each attempt may run; None for no limit.
        start_method: "exec" starts a fresh interpreter per rank; "fork" starts one, which imports torch and
            lakerun and then forks the ranks (each skips the interpreter's start and torch's import; the calling
            process becomes the child subreaper of what the ranks leave behind).

    Calling raises:
        lakerun.RankError: the function raised on a rank (the first to fail); it names the rank and carries the
            rank's traceback, and the rank's exception as ``__cause__`` when it could be pickled.
        lakerun.DistError: a rank died (by a signal: named) or exited without a result.
        lakerun.CommTimeout: the ranks ran past ``timeout``.
        KeyboardInterrupt: Ctrl-C (SIGINT) stopped every rank (each gets SIGTERM, then SIGKILL after 5 s).
    """
    return Distributed(processes, use_gpu, max_restarts, timeout, start_method)


def _unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function under DistributedFunction wrappers (a rank resolves a module's decorated name to one)."""
    while isinstance(fn, DistributedFunction):
        fn = fn.__wrapped__
    return fn


def _payload(fn: Callable[..., Any], args: tuple, kwargs: Dict[str, Any]) -> bytes:
    """(sys.path, cloudpickle of (fn, args, kwargs)), pickled; ValueError naming the size over the limit."""
    try:
        call = cloudpickle.dumps((fn, args, kwargs))
    except Exception as e:
        raise TypeError(f"lakerun.distributed: cannot pickle the function or its arguments with cloudpickle: "
                        f"{type(e).__name__}: {e}") from e
    payload = pickle.dumps((list(sys.path), call))
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise ValueError(f"lakerun.distributed: the pickled function and arguments are {len(payload)} bytes, more "
                         f"than the limit of {MAX_PAYLOAD_BYTES} bytes (pass paths, not data)")
    return payload


def _rank_environment() -> Dict[str, str]:
    """What each rank gets besides torchrun's variables: this package on PYTHONPATH, unbuffered output."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [package_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}
    if "PYTHONUNBUFFERED" not in os.environ:
        env["PYTHONUNBUFFERED"] = "1"  # lines reach the console as printed, as in a notebook cell
    return env


def _results(outcome: Dict[str, Any], name: str, timeout: Optional[float]) -> List[Any]:
    """The ranks' results from _launch's outcome, or the exception that says why there are none."""
    records = outcome["records"]
    failure = outcome["failure"]
    if outcome["exit_code"] == 0:
        missing = [rank for rank, record in enumerate(records) if not record or record[:1] != b"R"]
        if missing:
            raise DistError(f"lakerun.distributed: function '{name}': rank {missing[0]} exited with code 0 without "
                            f"a result (did the function call os._exit()?)")
        return [cloudpickle.loads(record[1:]) for record in records]
    if failure is not None:
        rank = failure["rank"]
        record = records[rank] if rank < len(records) else None
        if record and record[:1] == b"E":
            raise _rank_error(rank, name, record[1:])
        # "was killed by signal 9 (SIGKILL), ...", "exited with code 3"
        message = f"lakerun.distributed: function '{name}': rank {rank} {failure['description']}"
        for line in failure["stderr_tail"]:
            message += f"\n  | {line}"
        raise DistError(message)
    if outcome["timed_out"]:
        raise CommTimeout(f"lakerun.distributed: function '{name}' ran past the timeout of {timeout} s on "
                          f"{len(records)} ranks; every rank was stopped")
    raise DistError(f"lakerun.distributed: function '{name}' was interrupted by signal {outcome['interrupted_by']}; "
                    f"every rank was stopped")


def _rank_error(rank: int, name: str, record: bytes) -> RankError:
    """The RankError of an 'E' record (_rank.py writes it)."""
    error = pickle.loads(record)
    exception = None
    if error.get("exception") is not None:
        try:
            exception = cloudpickle.loads(error["exception"])
        except Exception:  # a class this process cannot import: the text is enough
            exception = None
    result = RankError(rank, name, error["summary"], error["traceback"], exception)
    result.__cause__ = exception
    return result
