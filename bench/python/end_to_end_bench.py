#!/usr/bin/python3
"""End to end: examples/python/fashion_mnist_distributed.py (lakerun.Loader + lakerun.distributed) against the same
script with IDX tensors, DistributedSampler + DataLoader under elastic_launch (fashion_mnist_torch.py), 2 ranks,
same epochs, lr and batch size, in one run.

  PYTHONPATH=build/python python3 bench/python/end_to_end_bench.py [--build build] [--epochs 2] [--rounds 1]

Each script runs as a command; its wall time is measured from the command's start to its exit, and its printed
test accuracy is read back. The Delta tables are imported once beforehand with `lakerun table import fashion-mnist`
(as the IDX files are installed beforehand), outside the timing. elastic_launch's monitor polls every 0.1 s (its
API's default, 30 s, would add up to 30 s to the peer's exit; torchrun's is 5 s). Also prints how many lines differ
between the two scripts: code lines (the module docstrings aside), counted as a migration changes them (a replaced
block counts its longer side), and all lines. Targets: >= 2x faster, <= 10 lines changed.
"""
import argparse
import ast
import difflib
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAKERUN_SCRIPT = ROOT / "examples" / "python" / "fashion_mnist_distributed.py"
TORCH_SCRIPT = ROOT / "bench" / "python" / "fashion_mnist_torch.py"
IDX_DIR = "/usr/share/datasets/fashion-mnist"


def code_lines(path: pathlib.Path) -> list:
    """The file's lines without its module docstring."""
    text = path.read_text()
    lines = text.splitlines()
    docstring = ast.parse(text).body[0]
    if isinstance(docstring, ast.Expr) and isinstance(docstring.value, ast.Constant):
        del lines[docstring.lineno - 1:docstring.end_lineno]
    return lines


def changed_lines(a: list, b: list) -> int:
    """Lines a migration from a to b changes: inserted, deleted, and the longer side of each replaced block."""
    changed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            changed += max(i2 - i1, j2 - j1)
    return changed


def run(command: list, env: dict, timeout: float):
    """(wall seconds from the command's start, test accuracy) of one run; RuntimeError with its output on failure."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    wall = time.perf_counter() - start
    match = re.search(r"^Test accuracy: ([0-9.]+)", done.stdout, re.M)
    if done.returncode != 0 or not match:
        raise RuntimeError(f"{' '.join(command)} failed (exit code {done.returncode}):\n{done.stdout[-3000:]}")
    return wall, float(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", type=pathlib.Path)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    build = args.build.resolve()
    common = ["--epochs", str(args.epochs), "--lr", "0.1", "--batch-size", "100", "--processes", "2"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(build / "python"),
                                                                     os.environ.get("PYTHONPATH")])))
    torch_env = dict(env, OMP_NUM_THREADS="1")  # what torchrun sets for several ranks per machine
    lakerun_code, torch_code = code_lines(LAKERUN_SCRIPT), code_lines(TORCH_SCRIPT)
    all_changed = changed_lines(LAKERUN_SCRIPT.read_text().splitlines(), TORCH_SCRIPT.read_text().splitlines())
    with tempfile.TemporaryDirectory(prefix="lakerun-e2e-") as tables:
        subprocess.run([str(build / "bin" / "lakerun"), "table", "import", "fashion-mnist", tables], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        results = {"lakerun": [], "torch": []}
        for _ in range(args.rounds):
            results["lakerun"].append(run([sys.executable, str(LAKERUN_SCRIPT), "--table", tables] + common, env,
                                          args.timeout))
            results["torch"].append(run([sys.executable, str(TORCH_SCRIPT), "--table", IDX_DIR] + common,
                                        torch_env, args.timeout))
    print(f"2 ranks, {args.epochs} epochs, lr 0.1, batch 100 per rank; {args.rounds} round(s), alternating; "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, script in (("lakerun", LAKERUN_SCRIPT), ("torch", TORCH_SCRIPT)):
        walls = [w for w, _ in results[name]]
        print(f"  {script.relative_to(ROOT)}: wall {statistics.median(walls):.1f} s "
              f"({', '.join(f'{w:.1f}' for w in walls)}), test accuracy "
              f"{', '.join(f'{a:.4f}' for _, a in results[name])}")
    speedup = statistics.median(t for t, _ in results["torch"]) / statistics.median(t for t, _ in results["lakerun"])
    print(f"  lakerun {speedup:.2f}x faster from the command's start (target >= 2x)")
    print(f"  lines changed between the scripts: {changed_lines(lakerun_code, torch_code)} of code (target <= 10), "
          f"{all_changed} with the module docstrings")


if __name__ == "__main__":
    sys.exit(main())
