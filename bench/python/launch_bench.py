#!/usr/bin/python3
"""lakerun.distributed(processes=2) against torch.distributed's elastic_launch (torchrun's engine), same function:
the time from the call to every rank being past its first all-reduce, and to the call's return, in one run.

  PYTHONPATH=build/python python3 bench/python/launch_bench.py [--rounds 5] [--processes 2]

The function initialises torch.distributed (gloo, from torchrun's environment), all-reduces one tensor, and returns
the wall-clock time just after it. Rounds alternate the two launchers; medians and the median of per-round ratios
are printed. elastic_launch runs as torchrun does on one machine: c10d rendezvous on loopback, spawn start, the
monitor polling every 0.1 s, OMP_NUM_THREADS=1 as torchrun sets it for several ranks; lakerun gives its ranks
OMP_NUM_THREADS = cores / ranks.
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


def run_lakerun(processes: int):
    import lakerun

    start = time.time()
    done = lakerun.distributed(processes=processes)(first_all_reduce)()
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
    times = {"lakerun": [], "elastic": []}
    ratios = []
    for _ in range(args.rounds):
        times["lakerun"].append(run_lakerun(args.processes))
        times["elastic"].append(run_elastic(args.processes))
        ratios.append(times["elastic"][-1][0] / times["lakerun"][-1][0])
    med = {k: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v)) for k, v in times.items()}
    print(f"{args.processes} ranks, {args.rounds} alternating rounds, load average {os.getloadavg()[0]:.1f}")
    print(f"  lakerun.distributed: first all-reduce done after {med['lakerun'][0]:.2f} s, call returned after "
          f"{med['lakerun'][1]:.2f} s")
    print(f"  elastic_launch:      first all-reduce done after {med['elastic'][0]:.2f} s, call returned after "
          f"{med['elastic'][1]:.2f} s")
    print(f"  start to first all-reduce: lakerun {statistics.median(ratios):.2f}x faster (rounds "
          f"{', '.join(f'{r:.2f}x' for r in ratios)})")


if __name__ == "__main__":
    sys.exit(main())
