#!/usr/bin/python3
"""Prints compare.sh's table and ratios from its JSON-lines results (one record per run)."""
import argparse
import json


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--target", type=float, default=0.85)
    args = p.parse_args()
    runs = {}
    with open(args.results) as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                runs[rec["name"]] = rec

    print()
    header = ("run", "impl", "ranks", "lr", "steps", "samples/s", "step ms", "CPU ms/step", "1st step s", "wall s",
              "RSS MB/rank", "max RSS any proc", "test acc", f"t to {args.target} s", "load", "CPU PSI %")
    rows = []
    for name, r in runs.items():
        rows.append((name, r["impl"], str(r["world_size"]), fmt(r["lr"], "g"), str(r["steps"]),
                     fmt(r["steady_samples_per_s"], ".0f"), fmt(r["steady_step_ms"], ".2f"),
                     fmt(r["cpu_ms_per_step"], ".2f"), fmt(r["first_step_done_s"], ".2f"), fmt(r["wall_s"], ".1f"),
                     "/".join(fmt(x, ".0f") for x in r["peak_rss_mb"]), fmt(r["tree_max_rss_mb"], ".0f"),
                     fmt(r["test_accuracy"], ".4f"), fmt(r.get("time_to_target_s"), ".1f"),
                     f"{r['load_start']:.1f}->{r['load_end']:.1f}", fmt(r["cpu_psi_avg10"], ".0f")))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    print()

    def sps(name):
        return runs[name]["steady_samples_per_s"] if name in runs else None

    def ratio(label, a, b, target=None, higher_better=True):
        if a is None or b is None or b == 0:
            return
        value = a / b
        verdict = ""
        if target is not None:
            verdict = "  (target {}{:.2f}: {})".format(">= " if higher_better else "<= ", target,
                                                       "met" if (value >= target) == higher_better or value == target
                                                       else "NOT met")
        print(f"{label:<64} {value:6.3f}{verdict}")

    if sps("cpp_1") and sps("cpp_2"):
        ratio("scaling efficiency, lakerun, 1 -> 2 ranks (2-rank / (2 x 1-rank))", sps("cpp_2"), 2 * sps("cpp_1"), 0.90)
    if sps("py_1") and sps("py_2"):
        ratio("scaling efficiency, Python DDP, 1 -> 2 ranks", sps("py_2"), 2 * sps("py_1"))
    ratio("samples/s, lakerun / Python DDP, 2 ranks", sps("cpp_2"), sps("py_2"), 1.25)
    ratio("samples/s, lakerun / Python, 1 process", sps("cpp_1"), sps("py_1"))
    if sps("py_2_cl"):
        ratio("samples/s, lakerun / Python DDP with channels-last too, 2 ranks (like for like)", sps("cpp_2"),
              sps("py_2_cl"))
    if sps("py_1_cl"):
        ratio("samples/s, lakerun / Python with channels-last too, 1 process", sps("cpp_1"), sps("py_1_cl"))
    if sps("py_1_cl") and sps("py_2_cl"):
        ratio("scaling efficiency, Python DDP with channels-last, 1 -> 2 ranks", sps("py_2_cl"), 2 * sps("py_1_cl"))
    if sps("cpp_2_gloo"):
        ratio("samples/s, lakerun gradients through Gloo / Python DDP with channels-last, 2 ranks", sps("cpp_2_gloo"),
              sps("py_2_cl"))
        ratio("samples/s, lakerun shared memory / lakerun Gloo, 2 ranks", sps("cpp_2"), sps("cpp_2_gloo"))
        if sps("cpp_1"):
            ratio("scaling efficiency, lakerun through Gloo, 1 -> 2 ranks", sps("cpp_2_gloo"), 2 * sps("cpp_1"))
    if "cpp_2" in runs and "py_2" in runs:
        ratio("peak RSS per rank, lakerun / Python DDP, 2 ranks (max over ranks)",
              max(runs["cpp_2"]["peak_rss_mb"]), max(runs["py_2"]["peak_rss_mb"]), 1.0, higher_better=False)
        ratio("max RSS of any process of the command (incl. launcher/agent), lakerun / Python",
              runs["cpp_2"]["tree_max_rss_mb"], runs["py_2"]["tree_max_rss_mb"])
        ratio("wall time of the whole command, lakerun / Python DDP, 2 ranks", runs["cpp_2"]["wall_s"],
              runs["py_2"]["wall_s"])
    if "cpp_2_tta" in runs and "py_2_tta" in runs:
        c, q = runs["cpp_2_tta"], runs["py_2_tta"]
        print(f"time to test accuracy {args.target} (2 ranks, lr {c['lr']:g}): lakerun {fmt(c.get('time_to_target_s'))} s"
              f" at step {c['steps']}, Python DDP {fmt(q.get('time_to_target_s'))} s at step {q['steps']}")
        if c.get("time_to_target_s") and q.get("time_to_target_s"):
            ratio(f"time to {args.target}, lakerun / Python DDP", c["time_to_target_s"], q["time_to_target_s"],
                  1.0, higher_better=False)
    for impl in ("cpp", "py"):
        ref, opt = f"{impl}_1_refblas", f"{impl}_1_openblas"
        if ref in runs and opt in runs:
            ratio(f"OpenBLAS / reference BLAS samples/s, {'lakerun' if impl == 'cpp' else 'Python'}, 1 process",
                  sps(opt), sps(ref))


if __name__ == "__main__":
    main()
