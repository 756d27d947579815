"""A torchrun-style DDP program, unchanged: env:// rendezvous, Gloo, a tiny DDP model, one all_reduce.

Run it under `lakerun launch -n 2 -- /usr/bin/python3 ddp_check.py`; each rank prints one "ddp ok" line.
"""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    dist.init_process_group("gloo")  # reads MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from the environment
    rank, world = dist.get_rank(), dist.get_world_size()
    assert rank == int(os.environ["RANK"]) and world == int(os.environ["WORLD_SIZE"])
    torch.manual_seed(0)
    model = DDP(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.full((8, 4), float(rank + 1))  # different data per rank
    loss = model(x).pow(2).mean()
    loss.backward()  # DDP averages the gradients across ranks
    optimizer.step()
    weights = model.module.weight.detach().clone()
    gathered = [torch.zeros_like(weights) for _ in range(world)]
    dist.all_gather(gathered, weights)
    equal = all(torch.equal(gathered[0], w) for w in gathered)
    total = torch.tensor([float(rank + 1)])
    dist.all_reduce(total)
    print(f"ddp ok rank={rank} world={world} allreduce_sum={total.item():g} weights_equal={equal}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
