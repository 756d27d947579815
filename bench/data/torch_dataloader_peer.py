"""Peer for bench/data: PyTorch's DataLoader over the same data held in memory.

Usage: torch_dataloader_peer.py IMAGES.u8 LABELS.i64 ROWS EPOCHS
Prints one line: "torch_dataloader samples_per_s=<best epoch rate>".
"""
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    images_path, labels_path, rows, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(1)
    images = torch.from_numpy(np.fromfile(images_path, dtype=np.uint8).reshape(rows, 784))
    labels = torch.from_numpy(np.fromfile(labels_path, dtype=np.int64))
    loader = DataLoader(TensorDataset(images, labels), batch_size=100, shuffle=True)
    best = 0.0
    for _ in range(epochs):
        start = time.perf_counter()
        seen = 0
        for x, y in loader:
            seen += x.shape[0]
        best = max(best, seen / (time.perf_counter() - start))
    print(f"torch_dataloader samples_per_s={best:.0f}")


if __name__ == "__main__":
    main()
