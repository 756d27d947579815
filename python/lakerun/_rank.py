"""One rank of lakerun.distributed (distributed.py): ``python -m lakerun._rank``, started by lakerun's launcher
(under start_method="fork", started once and forked into every rank at ``_fork_point()``, after the imports).

Reads the payload from the launcher's authenticated store (MASTER_ADDR:LAKERUN_RDZV_PORT, with
LAKERUN_RDZV_SECRET), calls the function and writes one record under ``_result_key(attempt, rank)``: ``b"R"`` + the
cloudpickled result, or ``b"E"`` + a pickled dict {summary, traceback, exception} when the function raised. Exits 0
when it returned, 1 when it raised, so the launcher stops the other ranks at once. Not for running by hand.
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback


def _error_record(error: BaseException) -> bytes:
    """b"E" + {summary: "ValueError: boom", traceback: text, exception: cloudpickle bytes or None}."""
    import cloudpickle

    try:
        exception = cloudpickle.dumps(error)
    except Exception:
        exception = None
    summary = "".join(traceback.format_exception_only(type(error), error)).strip()
    frames = error.__traceback__
    if frames is not None and frames.tb_next is not None:
        frames = frames.tb_next  # from the function's frame on, without _call's
    text = "".join(traceback.format_exception(type(error), error, frames))
    return b"E" + pickle.dumps({"summary": summary, "traceback": text, "exception": exception})


def _call(payload: bytes) -> bytes:
    """The record of calling the pickled function: b"R" + its result, or an error record."""
    import cloudpickle

    from .distributed import MAX_PAYLOAD_BYTES, _unwrap

    caller_path, call = pickle.loads(payload)
    sys.path[:0] = [p for p in caller_path if p not in sys.path]  # the caller's modules import here too
    try:
        fn, args, kwargs = cloudpickle.loads(call)
        result = cloudpickle.dumps(_unwrap(fn)(*args, **kwargs))
        if len(result) > MAX_PAYLOAD_BYTES:
            raise ValueError(f"the pickled result is {len(result)} bytes, more than the limit of "
                             f"{MAX_PAYLOAD_BYTES} bytes")
        return b"R" + result
    except BaseException as error:  # SystemExit and KeyboardInterrupt too: the caller hears of them
        return _error_record(error)


def _follow_environment(environment: dict) -> None:
    """Makes os.environ (read once at start-up) the process environment a fork start gave this rank."""
    for name in [name for name in os.environ if name not in environment]:
        del os.environ[name]
    for name, value in environment.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def main() -> int:
    import cloudpickle  # noqa: F401  (loaded before the fork point: once for every rank under fork start)

    from . import _lakerun
    from .distributed import STORE_TIMEOUT_S

    environment = _lakerun._fork_point()  # start_method="fork": the ranks are forked here, each returns
    if environment is not None:
        _follow_environment(environment)
    rank = int(os.environ["RANK"])
    attempt = int(os.environ.get("LAKERUN_RESTART_COUNT", "0"))
    store = _lakerun._StoreClient(STORE_TIMEOUT_S)
    record = _call(store.get(_lakerun._PAYLOAD_KEY, STORE_TIMEOUT_S))
    key = _lakerun._result_key(attempt, rank)
    store.set(key, record)
    # A set has no reply; a request that has one, after it on the same connection, makes sure the record is stored
    # before this process exits and the caller, seeing the exit, reads it.
    store.add(key + "/written", 1)
    if record[:1] == b"R":
        return 0
    summary = pickle.loads(record[1:])["summary"]
    print(f"lakerun.distributed: the function raised on rank {rank}: {summary}", file=sys.stderr, flush=True)
    return 1


if __name__ == "__main__":
    sys.stdout.flush()
    sys.exit(main())
