"""Which start-up settings shorten a libtorch-linked C++ rank's start (run by rank_variants.sh; builds nothing).

Every variant runs the same job, `LAUNCHER -n N -- env [SETTING] RANK`, interleaved with the baseline
`LAUNCHER -n N -- env RANK` so both see the same machine load, and reports medians of: the time to every rank being
past its first all-reduce, and the CPU time (user + sys) of the launcher and all its ranks together. Ratios are
variant / baseline (below 1 = faster). Variants:
  env settings:  LD_BIND_NOW=1 (eager symbol binding), OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1 (at N=1 the
                 launcher gives 2 on 2 cores), MALLOC_ARENA_MAX=1
  link variant:  the rank linked with -Wl,-z,now
"""
import argparse
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_bench import run  # noqa: E402


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, n):
    c0 = cpu_s()
    result = run(cmd, n, 600)
    result["cpu_s"] = cpu_s() - c0
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--launcher-args", default="launch")
    parser.add_argument("--rank", required=True)
    parser.add_argument("--rank-now", help="the rank linked with -Wl,-z,now")
    parser.add_argument("--ns", default="1,4")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    prefix = [args.launcher] + (args.launcher_args.split() if args.launcher_args else [])
    variants = [("LD_BIND_NOW=1", ["LD_BIND_NOW=1"], args.rank),
                ("OPENBLAS_NUM_THREADS=1", ["OPENBLAS_NUM_THREADS=1"], args.rank),
                ("OMP_NUM_THREADS=1", ["OMP_NUM_THREADS=1"], args.rank),
                ("MALLOC_ARENA_MAX=1", ["MALLOC_ARENA_MAX=1"], args.rank)]
    if args.rank_now:
        variants.append(("-Wl,-z,now", [], args.rank_now))
    print(f"# rank start-up variants: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, "
          f"{args.repeats} runs each, medians; ratio = variant / baseline", flush=True)
    print("| N | variant | to all-reduced (s) | baseline (s) | ratio | CPU (s) | baseline CPU (s) | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    for n in [int(x) for x in args.ns.split(",")]:
        for name, env, rank in variants:
            base, var = [], []
            for _ in range(args.repeats):
                base.append(timed(prefix + ["-n", str(n), "--", "/usr/bin/env", args.rank], n))
                var.append(timed(prefix + ["-n", str(n), "--", "/usr/bin/env"] + env + [rank], n))
            b_t = statistics.median(r["to_all_reduced_s"] for r in base)
            v_t = statistics.median(r["to_all_reduced_s"] for r in var)
            b_c = statistics.median(r["cpu_s"] for r in base)
            v_c = statistics.median(r["cpu_s"] for r in var)
            print(f"| {n} | {name} | {v_t:.3f} | {b_t:.3f} | {v_t / b_t:.2f} | {v_c:.2f} | {b_c:.2f} | "
                  f"{v_c / b_c:.2f} |", flush=True)


if __name__ == "__main__":
    main()
