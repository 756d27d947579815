"""The Python rank of the launch benchmark: env:// Gloo init, one all_reduce, then the same BENCH line as
bench_rank.cc (CLOCK_REALTIME nanoseconds: entering the script, process group ready, all-reduce done)."""
import os
import time

t_main = time.time_ns()

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

dist.init_process_group("gloo")
t_ready = time.time_ns()
rank = dist.get_rank()
tensor = torch.full((1,), float(rank + 1))
dist.all_reduce(tensor)
t_done = time.time_ns()
line = f"BENCH rank={rank} t_main={t_main} t_ready={t_ready} t_done={t_done} sum={tensor.item():g}\n"
os.write(1, line.encode())  # one write: ranks share the launcher's stdout
dist.destroy_process_group()
