"""Peer for bench/data: PyTorch's DataLoader over the same data held in memory.

Usage: torch_dataloader_peer.py IMAGES.u8 LABELS.i64 ROWS
Prints "ready" once the data is loaded, then runs one epoch for every "epoch" line on stdin and prints
"epoch samples_per_s=<rate>" (bench/data/epoch_peer.h), so the benchmark alternates its epochs with the loader's
and both see the same machine load. Exits at the end of stdin.
"""
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset


def epoch_rate(loader):
    start = time.perf_counter()
    seen = 0
    for x, y in loader:
        seen += x.shape[0]
    return seen / (time.perf_counter() - start)


def main():
    images_path, labels_path, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    torch.set_num_threads(1)
    images = torch.from_numpy(np.fromfile(images_path, dtype=np.uint8).reshape(rows, 784))
    labels = torch.from_numpy(np.fromfile(labels_path, dtype=np.int64))
    loader = DataLoader(TensorDataset(images, labels), batch_size=100, shuffle=True)
    print("ready", flush=True)
    for request in sys.stdin:
        if request.strip() == "epoch":
            print(f"epoch samples_per_s={epoch_rate(loader):.0f}", flush=True)


if __name__ == "__main__":
    main()
