#!/usr/bin/python3
"""lakerun.Loader from Python against PyTorch's DataLoader and against the C++ loader, first epochs, one run.

  PYTHONPATH=build/python python3 bench/python/loader_bench.py [--build build] [--table DIR] [--rounds 11]

The Fashion-MNIST train table (60,000 rows: a 784-byte binary image and a label; made with `lakerun table import
fashion-mnist --codec snappy --row-group-rows 10000`, bench/data's codec and row groups, in a temporary directory
unless --table names one). In every round, for 1 and 2 decoding threads, each contender in a process of its own:
  - PyTorch's DataLoader over the same rows held in memory (TensorDataset, batch 100, shuffle, one intra-op thread,
    no worker processes): one epoch (bench/data/torch_dataloader_peer.py, the C++ loader bench's peer);
  - lakerun.Loader (batch 100, shuffle, images as raw bytes viewed as [100, 784]), a new loader's first epoch, in
    this process, twice: over a lakerun.Table opened once (the C++ loader bench's cold epoch: a new loader over an
    open table, decoding into memory an earlier loader faulted in), and over the table's path (the loader opens
    the table, and its epoch decodes into fresh memory, as a process's very first epoch does);
  - the C++ loader at the same settings, the same two ways (cpp_loader_peer.cc open-once / reopen).
Prints the medians of the rates and of the per-round ratios: lakerun / DataLoader (target >= 5x, on the open table
as the C++ figure of 6x is) and the Python package's overhead over C++, C++ rate / Python rate - 1 (target <= 10%).
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import torch

import lakerun

ROOT = pathlib.Path(__file__).resolve().parents[2]
BATCH = 100
SEED = 7


def import_table(build: pathlib.Path, directory: str) -> str:
    """The train split as a Delta table, snappy, row groups of 10,000 rows (bench/data's codec and row groups)."""
    subprocess.run([str(build / "bin" / "lakerun"), "table", "import", "fashion-mnist", directory, "--split", "train",
                    "--codec", "snappy", "--row-group-rows", "10000"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    return os.path.join(directory, "train")


def images_and_labels(table: str):
    """Every row of the table in table order: uint8 [N, 784] and int64 [N] (the DataLoader's data)."""
    images, labels = [], []
    for batch in lakerun.Loader(table, raw_bytes=["image"], batch_size=10_000, shuffle=False):
        images.append(batch["image"].view(-1, 784).clone())
        labels.append(batch["label"].clone())
    return torch.cat(images), torch.cat(labels)


def lakerun_first_epoch(table, threads: int) -> float:
    """A new loader's first epoch over `table` (a path or a lakerun.Table), in samples per second."""
    loader = lakerun.Loader(table, raw_bytes=["image"], batch_size=BATCH, seed=SEED, num_threads=threads)
    start = time.perf_counter()
    seen = 0
    for batch in loader:
        images = batch["image"].view(len(batch["label"]), -1)  # [100, 784], as the DataLoader's (and no more)
        seen += images.shape[0]
    return seen / (time.perf_counter() - start)


class EpochPeer:
    """A peer process: "ready", then one epoch per "epoch" line (bench/data/epoch_peer.h's protocol)."""

    def __init__(self, argv: list) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{argv[0]} did not start (exit code {self.process.wait(timeout=30)})")

    def epoch(self) -> float:
        self.process.stdin.write("epoch\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline().strip()
        if not line.startswith("epoch samples_per_s="):
            raise RuntimeError(f"peer: unexpected reply {line!r}")
        return float(line.split("=", 1)[1])

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


# The two ways a new loader meets the table: (label, the C++ peer's mode).
WAYS = (("over an open Table", "open-once"), ("from the path", "reopen"))


def measure(table: str, rows: int, rounds: int, build: pathlib.Path, torch_peer: EpochPeer) -> None:
    """The alternating rounds at 1 and 2 decoding threads; prints their medians."""
    print(f"table: {table}, {rows} rows; batch {BATCH}, shuffled; medians of {rounds} alternating rounds (ratios: "
          f"medians of per-round ratios); load average {os.getloadavg()[0]:.1f}")
    peer_binary = build / "bench" / "python" / "bench_python_cpp_loader_peer"
    opened = lakerun.Table(table)
    for threads in (1, 2):
        cpp_peers = {mode: EpochPeer([str(peer_binary), table, str(BATCH), str(threads), str(SEED), mode])
                     for _, mode in WAYS}
        torch_rates = []
        rates = {mode: {"python": [], "cpp": [], "vs_torch": [], "overhead": []} for _, mode in WAYS}
        try:
            for round_index in range(rounds):
                torch_rates.append(torch_peer.epoch())
                for _, mode in WAYS:
                    r = rates[mode]
                    python_epoch = lambda: lakerun_first_epoch(opened if mode == "open-once" else table, threads)
                    # Python and C++ take turns going first: the one that follows finds the table's compressed pages
                    # (the page cache, shared between the processes) in the CPU's caches.
                    if round_index % 2 == 0:
                        r["python"].append(python_epoch())
                        r["cpp"].append(cpp_peers[mode].epoch())
                    else:
                        r["cpp"].append(cpp_peers[mode].epoch())
                        r["python"].append(python_epoch())
                    r["vs_torch"].append(r["python"][-1] / torch_rates[-1])
                    r["overhead"].append(r["cpp"][-1] / r["python"][-1] - 1)
        finally:
            for peer in cpp_peers.values():
                peer.close()
        print(f"{threads} decoding thread(s): DataLoader {statistics.median(torch_rates):.0f} samples/s")
        for label, mode in WAYS:
            r = rates[mode]
            target = " (target >= 5x)" if mode == "open-once" else ""
            print(f"  {label}: lakerun.Loader first epoch {statistics.median(r['python']):.0f} samples/s, C++ loader "
                  f"{statistics.median(r['cpp']):.0f} samples/s")
            print(f"    lakerun.Loader / DataLoader: {statistics.median(r['vs_torch']):.2f}x{target}; Python overhead "
                  f"over C++: {100 * statistics.median(r['overhead']):+.1f}% (target <= 10%; rounds "
                  f"{', '.join(f'{100 * o:+.0f}%' for o in r['overhead'])})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", type=pathlib.Path)
    parser.add_argument("--table", help="the Fashion-MNIST train table (default: imported into a temporary dir)")
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lakerun-python-bench-") as tmp:
        table = args.table or import_table(args.build, tmp)
        images, labels = images_and_labels(table)
        rows = len(labels)
        images.numpy().tofile(os.path.join(tmp, "images.u8"))
        labels.numpy().tofile(os.path.join(tmp, "labels.i64"))
        del images, labels  # the DataLoader's copy lives in its own process
        torch_peer = EpochPeer([sys.executable, str(ROOT / "bench" / "data" / "torch_dataloader_peer.py"),
                                os.path.join(tmp, "images.u8"), os.path.join(tmp, "labels.i64"), str(rows)])
        try:
            measure(table, rows, args.rounds, args.build, torch_peer)
        finally:
            torch_peer.close()


if __name__ == "__main__":
    sys.exit(main())
