# Regenerates sampler_golden.json with PyTorch's own DistributedSampler:
#   /usr/bin/python3 src/dist/testdata/gen_sampler_golden.py > src/dist/testdata/sampler_golden.json
import json
import torch
from torch.utils.data.distributed import DistributedSampler

cases = []
for n, world, seed, epoch, shuffle, drop_last in [
    (10, 3, 0, 0, True, False), (10, 3, 0, 1, True, False), (10, 3, 0, 0, True, True),
    (10, 3, 7, 2, False, False), (10, 3, 7, 2, False, True), (2, 4, 5, 0, True, False),
    (1000, 2, 0, 0, True, False), (1000, 2, 0, 5, True, False), (60000, 2, 0, 0, True, False),
    (101, 4, 42, 3, True, True), (7, 8, 1, 0, True, False), (0, 2, 0, 0, True, False),
]:
    out = []
    for r in range(world):
        s = DistributedSampler(list(range(n)), num_replicas=world, rank=r, shuffle=shuffle, seed=seed,
                               drop_last=drop_last)
        s.set_epoch(epoch)
        idx = list(iter(s))
        out.append(idx if n <= 1000 else idx[:50] + idx[-50:])
    cases.append(dict(n=n, world=world, seed=seed, epoch=epoch, shuffle=shuffle, drop_last=drop_last,
                      num_samples=len(list(iter(s))), ranks=out, truncated=n > 1000))
print(json.dumps({"torch_version": torch.__version__, "cases": cases}))
