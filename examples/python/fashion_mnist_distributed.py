#!/usr/bin/python3
"""Fashion-MNIST with PyTorch DDP on 2 local ranks, in the style of TorchDistributor's MNIST notebook.

The classic MNIST CNN, wrapped in torch.nn.parallel.DistributedDataParallel, fed by lakerun.Loader from the Delta
tables ``lakerun table import fashion-mnist DIR`` writes (DIR/train, DIR/test), and trained by
``lakerun.distributed(processes=2)``: the function ``train`` runs on every rank, and the call returns every rank's
return value (the test accuracy). Each cell of the notebook is a section below.

    lakerun table import fashion-mnist data/fashion-mnist
    PYTHONPATH=build/python python3 examples/python/fashion_mnist_distributed.py --table data/fashion-mnist

bench/python/fashion_mnist_torch.py is the same script with IDX tensors, DistributedSampler and DataLoader under
torch's elastic_launch (bench/python/end_to_end_bench.py compares the two).
"""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import lakerun

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
    train = lakerun.Loader(f"{table}/train", raw_bytes=["image"], batch_size=batch_size, seed=seed)
    test = lakerun.Loader(f"{table}/test", raw_bytes=["image"], batch_size=1000, shuffle=False)
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
        train_loader.set_epoch(epoch)
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
    accuracies = lakerun.distributed(processes=args.processes)(train)(*run_args)
    print(f"Test accuracy: {accuracies[0]:.4f} (every rank: {accuracies})")
    print(f"Wall time: {time.time() - START:.1f} s")
