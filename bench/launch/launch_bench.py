"""Launch benchmark driver (run.sh calls it; it builds nothing).

For each N it measures, in the same run, the wall time from starting the launcher to every rank being past its first
all-reduce:
  lakerun exec:  `lakerun launch -n N -- bench_launch_rank` (C++ ranks on lakerun::dist: the launcher's store,
                 ProcessGroupGloo); every rank is exec'd and loads libtorch itself
  lakerun fork:  the same with `--start-method fork`: the program is exec'd once and the ranks are forked from it
                 at lakerun::dist::Init(), so libtorch is loaded once
  pytorch:       torch_launch.py N rank.py (PyTorch's elastic_launch, the engine of torchrun; Python ranks)
and prints the ratios. It also splits the lakerun time, from LAKERUN_LAUNCH_TIMING=1 and the INIT lines of the rank
(lakerun::dist's InitTimeline):
  launcher share = launcher main() to every rank exec'd (fork: the one template exec'd)
                 + forking (fork: last rank past the fork point minus the template reaching it; exec: 0)
                 + store rendezvous wait (last rank seeing every peer in the store minus the last rank arriving)
  process group  = Gloo connecting every pair of ranks (last rank's group ready minus last rank's peers seen):
                   c10d's own cost, the same under any launcher, reported beside the launcher's share
plus the launcher's start-up before main() (loading its shared libraries) and, separately, the cost of loading
libtorch (a trivial program linked to libtorch versus one that is not). Medians over --repeats runs.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

BENCH_RE = re.compile(r"BENCH rank=(\d+) t_main=(\d+) t_ready=(\d+) t_done=(\d+) sum=([0-9.]+)")
INIT_RE = re.compile(r"INIT rank=(\d+) forked=(\d+) peers=(\d+) group=(\d+)")
TIMING_RE = re.compile(r"timing: launcher_start_realtime_ns=(\d+) store_ready_ms=(\S+) all_ranks_execed_ms=(\S+)")


def first_all_reduce(stdout, n, t0, what):
    """Checks the BENCH lines of n ranks in stdout (one per rank, each all-reduce summing 1..n; exits naming `what`
    otherwise) and returns them as (rank, t_main, t_ready, t_done) with the times measured from t0 (CLOCK_REALTIME
    ns): to the last rank past its all-reduce, to the first rank's main(), and the rendezvous (the last rank ready
    minus the last rank entering main)."""
    ranks = {int(m.group(1)): m for m in BENCH_RE.finditer(stdout)}
    if sorted(ranks) != list(range(n)):
        sys.exit(f"expected the BENCH lines of ranks 0..{n - 1} from {what}, got ranks {sorted(ranks)}:\n{stdout}")
    expected = n * (n + 1) / 2
    for rank, m in ranks.items():
        if float(m.group(5)) != expected:
            sys.exit(f"{what}: rank {rank}'s all-reduce gave {m.group(5)} (expected {expected:g})")
    lines = [tuple(int(x) for x in m.groups()[:4]) for m in ranks.values()]
    return lines, {
        "to_all_reduced_s": (max(r[3] for r in lines) - t0) / 1e9,
        "rendezvous_ms": (max(r[2] for r in lines) - max(r[1] for r in lines)) / 1e6,
        "first_rank_main_s": (min(r[1] for r in lines) - t0) / 1e9,
    }


def run(cmd, n, timeout):
    t0 = time.time_ns()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=dict(os.environ, LAKERUN_LAUNCH_TIMING="1"))
    wall = (time.time_ns() - t0) / 1e9
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    ranks, result = first_all_reduce(proc.stdout, n, t0, ' '.join(cmd))
    result["wall_s"] = wall
    inits = [tuple(int(x) for x in m.groups()) for m in INIT_RE.finditer(proc.stdout)]
    if len(inits) == n:
        last_main = max(r[1] for r in ranks)
        last_forked = max(i[1] for i in inits)
        last_peers = max(i[2] for i in inits)
        result["fork_ms"] = max(0, last_forked - last_main) / 1e6
        result["store_wait_ms"] = (last_peers - max(last_forked, last_main)) / 1e6
        result["group_ms"] = (max(i[3] for i in inits) - last_peers) / 1e6
    else:  # a rank without InitTimeline: the whole wait counts as the launcher's
        result["fork_ms"] = 0.0
        result["store_wait_ms"] = result["rendezvous_ms"]
        result["group_ms"] = float("nan")
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
        runs = {"exec": [], "fork": [], "torch": []}
        for _ in range(args.repeats):  # interleaved so all three see the same machine load
            runs["exec"].append(run(prefix + ["-n", str(n), "--", args.rank], n, 600))
            runs["fork"].append(run(prefix + ["-n", str(n), "--start-method", "fork", "--", args.rank], n, 600))
            runs["torch"].append(run([args.python, os.path.join(here, "torch_launch.py"), str(n),
                                      os.path.join(here, "rank.py")], n, 600))
        torch_s = median(runs["torch"], "to_all_reduced_s")
        for method in ("exec", "fork"):
            row = {
                "n": n,
                "method": method,
                "lakerun_s": median(runs[method], "to_all_reduced_s"),
                "torch_s": torch_s,
                "all_execed_ms": median(runs[method], "all_execed_ms"),
                "store_ready_ms": median(runs[method], "store_ready_ms"),
                "fork_ms": median(runs[method], "fork_ms"),
                "store_wait_ms": median(runs[method], "store_wait_ms"),
                "group_ms": median(runs[method], "group_ms"),
                "pre_main_ms": median(runs[method], "pre_main_ms"),
            }
            rows.append(row)
            print(f"N={n}: lakerun {method} + C++ {row['lakerun_s']:.3f} s, elastic_launch + Python {torch_s:.3f} s, "
                  f"ratio {torch_s / row['lakerun_s']:.2f}x", flush=True)

    print()
    print("| N | start | lakerun + C++ ranks (s) | elastic_launch + Python ranks (s) | speed-up |"
          " main->all exec'd (ms) | forking (ms) | store rendezvous wait (ms) | launcher share (ms) |"
          " Gloo group connect (ms) | launcher start before main (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        share = r["all_execed_ms"] + r["fork_ms"] + r["store_wait_ms"]
        print(f"| {r['n']} | {r['method']} | {r['lakerun_s']:.3f} | {r['torch_s']:.3f} | "
              f"{r['torch_s'] / r['lakerun_s']:.2f}x | {r['all_execed_ms']:.1f} | {r['fork_ms']:.1f} | "
              f"{r['store_wait_ms']:.1f} | {share:.1f} | {r['group_ms']:.1f} | {r['pre_main_ms']:.0f} |")
    print("(fork: \"all exec'd\" is the one template)")
    plain = time_program(args.trivial_plain, 10)
    torch_load = time_program(args.trivial_torch, 10)
    print()
    print(f"loading libtorch: trivial program linked to libtorch {torch_load * 1e3:.0f} ms, without "
          f"{plain * 1e3:.1f} ms (ratio {torch_load / plain:.0f}x); each exec'd C++ rank pays it, a fork start's "
          "template once; the launcher does not load libtorch")
    print("targets: speed-up >= 5x for every N; launcher share < 100 ms at N=8")
    for r in rows:
        share = r["all_execed_ms"] + r["fork_ms"] + r["store_wait_ms"]
        print(f"  N={r['n']} {r['method']}: speed-up {r['torch_s'] / r['lakerun_s']:.2f}x "
              f"({'met' if r['torch_s'] / r['lakerun_s'] >= 5 else 'MISSED'}), launcher share {share:.1f} ms"
              + (f" ({'met' if share < 100 else 'MISSED'})" if r["n"] == 8 else ""))


if __name__ == "__main__":
    main()
