"""lakerun.distributed: every rank's result, a rank's exception, a rank's death, restarts, timeouts, torch.distributed
inside the ranks, rank-prefixed output, and Ctrl-C leaving no process behind."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch

import lakerun


def rank_and_environment(x):
    """What a rank sees: its place (torchrun's variables) and the argument."""
    return (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"]), x)


@lakerun.distributed(processes=2)
def decorated_square(x):
    return int(os.environ["RANK"]), x * x


@pytest.mark.parametrize("processes,start_method", [(2, "exec"), (4, "exec"), (2, "fork"), (4, "fork")])
def test_returns_every_ranks_result_indexed_by_rank(processes, start_method):
    # Under fork start os.environ must follow the environment each forked rank was given.
    results = lakerun.distributed(processes=processes, start_method=start_method)(rank_and_environment)({"k": [1, 2]})
    assert results == [(r, processes, r, {"k": [1, 2]}) for r in range(processes)]


def test_decorator_and_run_forms():
    assert decorated_square(7) == [(0, 49), (1, 49)]
    assert decorated_square.__name__ == "decorated_square"
    assert lakerun.distributed(processes=2).run(rank_and_environment, x="kw") == [(0, 2, 0, "kw"), (1, 2, 1, "kw")]
    # A closure (pickled by value) with a captured tensor, returning a tensor.
    base = torch.arange(3)
    assert [t.tolist() for t in lakerun.distributed(processes=2).run(lambda: base * 2)] == [[0, 2, 4]] * 2


def raise_on_rank_1():
    if os.environ["RANK"] == "1":
        raise KeyError("missing-on-rank-1")
    time.sleep(60)  # rank 0 is stopped by the launcher once rank 1 fails


def test_a_ranks_exception_names_the_rank_and_carries_its_traceback():
    start = time.monotonic()
    with pytest.raises(lakerun.RankError) as info:
        lakerun.distributed(processes=2)(raise_on_rank_1)()
    error = info.value
    assert time.monotonic() - start < 30  # fail-fast: rank 0 did not sleep its minute
    assert error.rank == 1 and isinstance(error, lakerun.DistError)
    assert "rank 1" in str(error) and "KeyError: 'missing-on-rank-1'" in str(error)
    assert "in raise_on_rank_1" in error.remote_traceback and "test_distributed.py" in error.remote_traceback
    assert isinstance(error.__cause__, KeyError) and error.exception is error.__cause__


def die_by_sigkill_on_rank_1():
    if os.environ["RANK"] == "1":
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)


def test_a_rank_killed_by_a_signal_is_a_dist_error_naming_rank_and_signal():
    with pytest.raises(lakerun.DistError, match=r"rank 1 was killed by signal 9 \(SIGKILL\)") as info:
        lakerun.distributed(processes=2)(die_by_sigkill_on_rank_1)()
    assert not isinstance(info.value, lakerun.RankError)


def fail_on_first_attempt():
    if os.environ["LAKERUN_RESTART_COUNT"] == "0" and os.environ["RANK"] == "0":
        raise RuntimeError("first attempt fails")
    return int(os.environ["LAKERUN_RESTART_COUNT"])


def test_max_restarts_runs_the_group_again():
    assert lakerun.distributed(processes=2, max_restarts=1)(fail_on_first_attempt)() == [1, 1]
    with pytest.raises(lakerun.RankError, match="first attempt fails"):
        lakerun.distributed(processes=2)(fail_on_first_attempt)()


def test_timeout_stops_the_ranks():
    start = time.monotonic()
    with pytest.raises(lakerun.CommTimeout, match="timeout of 1.5 s"):
        lakerun.distributed(processes=2, timeout=1.5)(time.sleep)(60)
    assert time.monotonic() - start < 30


def all_reduce_ranks():
    import torch.distributed as dist

    dist.init_process_group("gloo")  # torchrun's environment: no arguments
    try:
        t = torch.tensor([float(dist.get_rank() + 1)])
        dist.all_reduce(t)
        return t.item(), dist.get_world_size()
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("start_method", ["exec", "fork"])
def test_torch_distributed_all_reduce_inside_the_ranks(start_method):
    assert lakerun.distributed(processes=2, start_method=start_method)(all_reduce_ranks)() == [(3.0, 2), (3.0, 2)]


def print_hello():
    print(f"hello from {os.environ['RANK']}")
    print(f"warning from {os.environ['RANK']}", file=sys.stderr)


def test_output_is_rank_prefixed(capfd):
    lakerun.distributed(processes=2)(print_hello)()
    out, err = capfd.readouterr()
    assert "[rank0] hello from 0" in out and "[rank1] hello from 1" in out
    assert "[rank1] warning from 1" in err


def test_output_reaches_a_replaced_sys_stdout(capsys):
    # capsys replaces sys.stdout and sys.stderr with objects that have no file descriptor, as a notebook does.
    lakerun.distributed(processes=2)(print_hello)()
    out, err = capsys.readouterr()
    assert "[rank0] hello from 0" in out and "[rank1] hello from 1" in out
    assert "[rank0] warning from 0" in err and "hello" not in err


def oversized_result():
    return b"x" * (64 << 20)


def test_payloads_over_the_limit_are_clear_errors():
    with pytest.raises(ValueError, match="limit of 67108864 bytes"):
        lakerun.distributed(processes=2).run(len, b"x" * (64 << 20))  # refused before any rank starts
    with pytest.raises(lakerun.RankError, match="the pickled result is .* more than the limit of 67108864 bytes"):
        lakerun.distributed(processes=2)(oversized_result)()


def test_bad_settings_are_clear_errors():
    with pytest.raises(ValueError, match="processes"):
        lakerun.distributed(processes=0)
    with pytest.raises(ValueError, match="timeout"):
        lakerun.distributed(processes=2, timeout=-1)
    with pytest.raises(ValueError, match="start_method"):
        lakerun.distributed(processes=2, start_method="spawn")
    with pytest.raises(TypeError, match="cannot pickle"):
        lakerun.distributed(processes=2).run(rank_and_environment, (i for i in range(3)))


# A script that runs 2 ranks which write their pids and sleep; the test Ctrl-C's it once both pids are written.
CTRL_C_SCRIPT = textwrap.dedent("""
    import os, pathlib, sys, time
    import lakerun

    def sleeper(directory):
        pathlib.Path(directory, os.environ["RANK"] + ".pid").write_text(str(os.getpid()))
        time.sleep(120)

    try:
        lakerun.distributed(processes=2, start_method=sys.argv[2])(sleeper)(sys.argv[1])
    except KeyboardInterrupt:
        print("KeyboardInterrupt in the caller", flush=True)
        sys.exit(3)
    """)


def alive(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie."""
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.parametrize("start_method", ["exec", "fork"])
def test_ctrl_c_stops_every_rank_and_raises_keyboard_interrupt(tmp_path, start_method):
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C_SCRIPT)
    caller = subprocess.Popen([sys.executable, str(script), str(tmp_path), start_method], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    pid_files = [tmp_path / "0.pid", tmp_path / "1.pid"]
    pids = []
    try:
        assert wait_for(lambda: all(f.exists() and f.read_text() for f in pid_files), 60), "the ranks did not start"
        pids = [int(f.read_text()) for f in pid_files]
        assert all(alive(pid) for pid in pids)
        caller.send_signal(signal.SIGINT)
        out, err = caller.communicate(timeout=30)
        assert caller.returncode == 3, (out, err)
        assert "KeyboardInterrupt in the caller" in out
        assert wait_for(lambda: not any(alive(pid) for pid in pids), 10), f"ranks left behind: {pids}"
    finally:
        if caller.poll() is None:
            caller.kill()
            caller.wait(timeout=10)
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
