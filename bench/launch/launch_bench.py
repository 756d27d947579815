"""Launch benchmark driver (run.sh calls it; it builds nothing).

For each N it measures, in the same run, the wall time from starting the launcher to every rank being past its first
all-reduce:
  lakerun:  `lakerun launch -n N -- bench_launch_rank` (C++ ranks; c10d TCPStore client + ProcessGroupGloo)
  pytorch:  torch_launch.py N rank.py (PyTorch's elastic_launch, the engine of torchrun; Python ranks)
and prints the ratio. It also splits the lakerun time: the launcher's own share (its main() to every rank exec'd,
from LAKERUN_LAUNCH_TIMING=1, plus the rendezvous wait = last rank's process group ready minus the last rank
entering main()), the launcher's start-up before main() (loading its shared libraries), and separately the cost of
loading libtorch (a trivial program linked to libtorch versus one that is not). Medians over --repeats runs.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

BENCH_RE = re.compile(r"BENCH rank=(\d+) t_main=(\d+) t_ready=(\d+) t_done=(\d+) sum=([0-9.]+)")
TIMING_RE = re.compile(r"timing: launcher_start_realtime_ns=(\d+) store_ready_ms=(\S+) all_ranks_execed_ms=(\S+)")


def run(cmd, n, timeout):
    t0 = time.time_ns()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=dict(os.environ, LAKERUN_LAUNCH_TIMING="1"))
    wall = (time.time_ns() - t0) / 1e9
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    ranks = [tuple(int(x) for x in m.groups()[:4]) for m in BENCH_RE.finditer(proc.stdout)]
    if len(ranks) != n:
        sys.exit(f"expected {n} BENCH lines from {' '.join(cmd)}, got {len(ranks)}:\n{proc.stdout}\n{proc.stderr}")
    expected = n * (n + 1) / 2
    for m in BENCH_RE.finditer(proc.stdout):
        if float(m.group(5)) != expected:
            sys.exit(f"wrong all-reduce result {m.group(5)} (expected {expected:g})")
    result = {
        "to_all_reduced_s": (max(r[3] for r in ranks) - t0) / 1e9,
        "wall_s": wall,
        "rendezvous_ms": (max(r[2] for r in ranks) - max(r[1] for r in ranks)) / 1e6,
        "first_rank_main_s": (min(r[1] for r in ranks) - t0) / 1e9,
    }
    timing = TIMING_RE.search(proc.stderr)
    if timing:
        result["pre_main_ms"] = (int(timing.group(1)) - t0) / 1e6
        result["store_ready_ms"] = float(timing.group(2))
        result["all_execed_ms"] = float(timing.group(3))
    return result


def median(runs, key):
    return statistics.median(r[key] for r in runs)


def time_program(path, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([path], check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launcher", required=True, help="lakerun binary (or launch_test_launcher)")
    parser.add_argument("--launcher-args", default="launch", help="arguments before -n (default: launch)")
    parser.add_argument("--rank", required=True, help="bench_launch_rank")
    parser.add_argument("--trivial-torch", required=True)
    parser.add_argument("--trivial-plain", required=True)
    parser.add_argument("--ns", default="2,4,8")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    ns = [int(n) for n in args.ns.split(",")]
    prefix = [args.launcher] + (args.launcher_args.split() if args.launcher_args else [])

    print(f"# launch benchmark: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, "
          f"{args.repeats} runs each, medians", flush=True)
    print(f"# launcher: {' '.join(prefix)}; C++ rank: {os.path.basename(args.rank)}", flush=True)
    rows = []
    for n in ns:
        lakerun_runs, torch_runs = [], []
        for _ in range(args.repeats):  # interleaved so both see the same machine load
            lakerun_runs.append(run(prefix + ["-n", str(n), "--", args.rank], n, 600))
            torch_runs.append(run([args.python, os.path.join(here, "torch_launch.py"), str(n),
                                   os.path.join(here, "rank.py")], n, 600))
        row = {
            "n": n,
            "lakerun_s": median(lakerun_runs, "to_all_reduced_s"),
            "torch_s": median(torch_runs, "to_all_reduced_s"),
            "all_execed_ms": median(lakerun_runs, "all_execed_ms"),
            "store_ready_ms": median(lakerun_runs, "store_ready_ms"),
            "rendezvous_ms": median(lakerun_runs, "rendezvous_ms"),
            "pre_main_ms": median(lakerun_runs, "pre_main_ms"),
            "torch_rendezvous_ms": median(torch_runs, "rendezvous_ms"),
        }
        rows.append(row)
        print(f"N={n}: lakerun+C++ {row['lakerun_s']:.3f} s, elastic_launch+Python {row['torch_s']:.3f} s, "
              f"ratio {row['torch_s'] / row['lakerun_s']:.2f}x", flush=True)

    print()
    print("| N | lakerun + C++ ranks (s) | elastic_launch + Python ranks (s) | speed-up | launcher main->all exec'd (ms)"
          " | rendezvous wait (ms) | launcher share (ms) | launcher start before main (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        share = r["all_execed_ms"] + r["rendezvous_ms"]
        print(f"| {r['n']} | {r['lakerun_s']:.3f} | {r['torch_s']:.3f} | {r['torch_s'] / r['lakerun_s']:.2f}x | "
              f"{r['all_execed_ms']:.1f} | {r['rendezvous_ms']:.1f} | {share:.1f} | {r['pre_main_ms']:.0f} |")
    plain = time_program(args.trivial_plain, 10)
    torch_load = time_program(args.trivial_torch, 10)
    print()
    print(f"loading libtorch: trivial program linked to libtorch {torch_load * 1e3:.0f} ms, without "
          f"{plain * 1e3:.1f} ms (ratio {torch_load / plain:.0f}x); every C++ rank and the launcher pay it once")
    print("targets: speed-up >= 5x for every N; launcher share < 100 ms at N=8")
    for r in rows:
        share = r["all_execed_ms"] + r["rendezvous_ms"]
        print(f"  N={r['n']}: speed-up {r['torch_s'] / r['lakerun_s']:.2f}x "
              f"({'met' if r['torch_s'] / r['lakerun_s'] >= 5 else 'MISSED'}), launcher share {share:.1f} ms"
              + (f" ({'met' if share < 100 else 'MISSED'})" if r["n"] == 8 else ""))


if __name__ == "__main__":
    main()
