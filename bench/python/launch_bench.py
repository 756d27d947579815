#!/usr/bin/python3
"""lakerun.distributed(processes=N) against torch.distributed's elastic_launch (torchrun's engine), same function:
the time from the call to every rank being past its first all-reduce, and to the call's return, in one run.

  PYTHONPATH=build/python python3 bench/python/launch_bench.py [--rounds 5] [--processes 2]

The function initialises torch.distributed (gloo, from torchrun's environment), all-reduces one tensor, and returns
the wall-clock time just after it; lakerun runs with start_method "exec" (the default: an interpreter per rank) and
"fork" (one interpreter imports torch, then forks the ranks). Rounds alternate the three; medians and the median of
per-round ratios are printed. elastic_launch runs as torchrun does on one machine: c10d rendezvous on loopback,
spawn start, the monitor polling every 0.1 s, OMP_NUM_THREADS=1 as torchrun sets it for several ranks; lakerun gives
its ranks OMP_NUM_THREADS = cores / ranks.
"""
import argparse
import os
import statistics
import sys
import time
import uuid


def first_all_reduce():
    """Runs on every rank: init, one all-reduce, the time just after it."""
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    t = torch.ones(1)
    dist.all_reduce(t)
    done = time.time()
    assert t.item() == dist.get_world_size()
    dist.destroy_process_group()
    return done


def run_lakerun(processes: int, start_method: str):
    import lakerun

    start = time.time()
    done = lakerun.distributed(processes=processes, start_method=start_method)(first_all_reduce)()
    return max(done) - start, time.time() - start


def run_elastic(processes: int):
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=processes, run_id=uuid.uuid4().hex,
                          rdzv_backend="c10d", rdzv_endpoint="127.0.0.1:0", max_restarts=0, monitor_interval=0.1)
    start = time.time()
    done = elastic_launch(config, first_all_reduce)()
    return max(done.values()) - start, time.time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    runners = {"exec": lambda: run_lakerun(args.processes, "exec"),
               "fork": lambda: run_lakerun(args.processes, "fork"),
               "elastic": lambda: run_elastic(args.processes)}
    times = {name: [] for name in runners}
    for _ in range(args.rounds):
        for name, runner in runners.items():
            times[name].append(runner())
    print(f"{args.processes} ranks, {args.rounds} alternating rounds, load average {os.getloadavg()[0]:.1f}")
    labels = {"exec": "lakerun.distributed (exec)", "fork": "lakerun.distributed (fork)", "elastic": "elastic_launch"}
    for name, label in labels.items():
        print(f"  {label:27}: first all-reduce done after {statistics.median(t[0] for t in times[name]):.2f} s, "
              f"call returned after {statistics.median(t[1] for t in times[name]):.2f} s")
    for name in ("exec", "fork"):
        ratios = [e[0] / l[0] for e, l in zip(times["elastic"], times[name])]
        print(f"  start to first all-reduce, start_method={name}: {statistics.median(ratios):.2f}x faster than "
              f"elastic_launch (rounds {', '.join(f'{r:.2f}x' for r in ratios)})")


if __name__ == "__main__":
    sys.exit(main())
