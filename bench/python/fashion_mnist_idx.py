"""Fashion-MNIST from its IDX files as a map-style dataset of in-memory tensors, torchvision's FashionMNIST without
torchvision (Debian's python3-torch does not ship it): the peer script's data (fashion_mnist_torch.py).

Samples are {"image": uint8 [784], "label": int64}, as a row of the Delta table that `lakerun table import
fashion-mnist` writes, so both scripts normalize batches with the same function.
"""
import gzip
import os

import torch
from torch.utils.data import Dataset


def read_idx(path: str, magic: int, ndims: int) -> torch.Tensor:
    """The uint8 payload of a (gzipped) IDX file, shaped by its header; ValueError naming the file when wrong."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if int.from_bytes(raw[0:4], "big") != magic:
        raise ValueError(f"{path}: not an IDX file with magic {magic:#x}")
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndims)]
    data = torch.frombuffer(bytearray(raw[4 + 4 * ndims:]), dtype=torch.uint8)
    if data.numel() != torch.Size(dims).numel():
        raise ValueError(f"{path}: {data.numel()} bytes of data for dimensions {dims}")
    return data.view(dims)


class FashionMNIST(Dataset):
    """The train (60,000) or test (10,000) split under `root`."""

    def __init__(self, root: str, train: bool = True) -> None:
        prefix = "train" if train else "t10k"
        self.images = read_idx(os.path.join(root, f"{prefix}-images-idx3-ubyte.gz"), 0x803, 3).view(-1, 784)
        self.labels = read_idx(os.path.join(root, f"{prefix}-labels-idx1-ubyte.gz"), 0x801, 1).long()

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> dict:
        return {"image": self.images[i], "label": self.labels[i]}
