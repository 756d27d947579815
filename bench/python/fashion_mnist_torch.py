#!/usr/bin/python3
"""The peer of examples/python/fashion_mnist_distributed.py: the same script with PyTorch's own data path and launcher.

Fashion-MNIST's IDX files as in-memory tensors (fashion_mnist_idx.py, torchvision's FashionMNIST without
torchvision), DistributedSampler + DataLoader, and torch.distributed's elastic_launch (torchrun's engine) in place of
lakerun.Loader and lakerun.distributed. Everything else is the same line for line; end_to_end_bench.py counts the
lines that differ and times both.

    python3 bench/python/fashion_mnist_torch.py --table /usr/share/datasets/fashion-mnist
"""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

from torch.distributed.launcher.api import LaunchConfig, elastic_launch
from torch.utils.data import DataLoader, DistributedSampler
from fashion_mnist_idx import FashionMNIST

START = time.time()


# -- The model: PyTorch's MNIST example CNN ------------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


# -- The data, sharded over the ranks ------------------------------------------------------------------------------
def images(batch):
    """The batch's 784-byte images as normalized float32 [B, 1, 28, 28]."""
    return (batch["image"].view(-1, 1, 28, 28).float() / 255 - 0.1307) / 0.3081


def make_loaders(table, batch_size, seed):
    train_set, test_set = FashionMNIST(table, train=True), FashionMNIST(table, train=False)
    train = DataLoader(train_set, batch_size=batch_size, sampler=DistributedSampler(train_set, seed=seed))
    test = DataLoader(test_set, batch_size=1000, sampler=DistributedSampler(test_set, shuffle=False))
    return train, test


# -- Training and evaluation, on every rank -------------------------------------------------------------------------
def test(model, loader):
    model.eval()
    correct = torch.zeros(2)
    with torch.no_grad():
        for batch in loader:
            output = model(images(batch))
            correct += torch.tensor([(output.argmax(1) == batch["label"]).sum().item(), len(output)])
    dist.all_reduce(correct)
    return (correct[0] / correct[1]).item()


def train(table, epochs, lr, batch_size, seed):
    dist.init_process_group("gloo")  # torchrun's environment: no arguments needed
    torch.manual_seed(seed)
    model = DDP(Net())
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    train_loader, test_loader = make_loaders(table, batch_size, seed)
    for epoch in range(1, epochs + 1):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for step, batch in enumerate(train_loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(images(batch)), batch["label"])
            loss.backward()
            optimizer.step()
            if step % 100 == 0 and dist.get_rank() == 0:
                print(f"Train Epoch: {epoch} [{step}/{len(train_loader)}]\tLoss: {loss.item():.6f}")
        accuracy = test(model, test_loader)
        if dist.get_rank() == 0:
            print(f"Test Epoch: {epoch}\tAccuracy: {accuracy:.4f}\t({time.time() - START:.1f} s)")
    # Free the DDP model first: in torch 1.13 a Reducer that outlives the process group destroys it with the GIL held
    # and can deadlock with gloo's worker thread freeing a tensor.
    del model, optimizer
    dist.destroy_process_group()
    return accuracy


# -- Run it on 2 ranks ----------------------------------------------------------------------------------------------
if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", required=True, help="the data's directory")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=100, help="per rank")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    run_args = (args.table, args.epochs, args.lr, args.batch_size, args.seed)
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=args.processes, rdzv_backend="c10d",
                          rdzv_endpoint="127.0.0.1:0", run_id="fashion-mnist", max_restarts=0, monitor_interval=0.1)
    accuracies = elastic_launch(config, train)(*run_args)
    print(f"Test accuracy: {accuracies[0]:.4f} (every rank: {accuracies})")
    print(f"Wall time: {time.time() - START:.1f} s")
