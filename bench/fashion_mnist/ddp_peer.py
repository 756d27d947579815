#!/usr/bin/python3
"""The Python PyTorch peer of examples/fashion_mnist: the same model, data, sample order and flags, trained with
torch.nn.parallel.DistributedDataParallel over Gloo (one intra-op thread per rank), or a plain loop on one process.

  /usr/bin/python3 ddp_peer.py --max-steps 20                      # one process, plain loop
  /usr/bin/python3 ddp_peer.py --nproc 2 --launcher elastic ...    # 2 ranks via torch.distributed's elastic_launch
  /usr/bin/python3 ddp_peer.py --nproc 2 --launcher spawn ...      # 2 ranks started directly with torchrun's env

As in the C++ program: the whole dataset is held in memory as normalized float32 tensors; each rank visits
DistributedSampler(seed=--sampler-seed) order with set_epoch(epoch - 1), batches built with index_select; the test set
is evaluated in rank slices whose sums are all-reduced. Prints the same progress lines and a final `RESULT {json}`.
(Debian 12's torchrun script crashes under Python 3.11, hence the built-in launchers.)
"""
import argparse
import gzip
import json
import math
import os
import resource
import socket
import subprocess
import sys
import time
import uuid

T_ENTRY = time.time()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--momentum", type=float, default=0.5)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sampler-seed", type=int, default=0)
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--mean", type=float, default=0.1307)
    p.add_argument("--std", type=float, default=0.3081)
    p.add_argument("--scale-lr", choices=["none", "linear", "sqrt"], default="none")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--no-dropout", action="store_true")
    p.add_argument("--channels-last", action="store_true",
                   help="conv1's output and everything after it in channels-last memory, as the C++ example does")
    p.add_argument("--log-interval", type=int, default=10)
    p.add_argument("--eval-every", type=int, default=0)
    p.add_argument("--target-accuracy", type=float, default=0.0)
    p.add_argument("--warmup-steps", type=int, default=20)
    p.add_argument("--train-limit", type=int, default=0)
    p.add_argument("--test-limit", type=int, default=0)
    p.add_argument("--metrics-file", default="")
    p.add_argument("--init-weights", default="", help="load initial parameters (a torch.save dict name -> tensor)")
    p.add_argument("--nproc", type=int, default=0, help="start this many ranks (0: run as this process)")
    p.add_argument("--launcher", choices=["elastic", "spawn"], default="elastic")
    p.add_argument("--timeout", type=float, default=600, help="seconds before the launcher gives up on its ranks")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="cuda: the model and the whole dataset on the rank's GPU (cuda:LOCAL_RANK)")
    args = p.parse_args(argv)
    for name in ("epochs", "batch_size"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.lr <= 0:
        p.error("--lr must be positive")
    return args


# --------------------------------------------------------------------------------------------------------- launchers
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_argv(argv):
    """argv without --nproc/--launcher/--timeout, for the ranks."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--nproc", "--launcher", "--timeout"):
            skip = True
            continue
        if a.split("=", 1)[0] in ("--nproc", "--launcher", "--timeout"):
            continue
        out.append(a)
    return out


def launch_spawn(n, argv, timeout):
    port = free_port()
    procs = []
    for rank in range(n):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n),
                   GROUP_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        env.setdefault("OMP_NUM_THREADS", "1")
        # Rank 0 hosts the store here, and PyTorch 2.4+ builds without libuv (Debian's 2.6) host one only when told
        # not to use libuv; older versions ignore the variable.
        env.setdefault("USE_LIBUV", "0")
        procs.append(subprocess.Popen([sys.executable, "-u", os.path.abspath(__file__)] + argv, env=env))
    deadline = time.time() + timeout
    codes = [None] * n
    try:
        while None in codes:
            for i, p in enumerate(procs):
                if codes[i] is None:
                    codes[i] = p.poll()
                    if codes[i] not in (None, 0):
                        raise RuntimeError(f"rank {i} exited with {codes[i]}")
            if time.time() > deadline:
                raise TimeoutError(f"ranks still running after {timeout} s")
            time.sleep(0.02)
    except BaseException as e:
        print(f"ddp_peer: {e}; stopping the other ranks", file=sys.stderr)
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return 1
    return 0


def launch_elastic(n, argv, timeout):
    # torchrun --standalone --nproc_per_node=n, through its Python API (no Std.from_str, so no Python 3.11 crash).
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    config = LaunchConfig(min_nodes=1, max_nodes=1, nproc_per_node=n, run_id=str(uuid.uuid4()),
                          rdzv_backend="c10d", rdzv_endpoint="127.0.0.1:0", max_restarts=0,
                          monitor_interval=float(os.environ.get("PEER_MONITOR_INTERVAL", "5")))
    elastic_launch(config, sys.executable)("-u", os.path.abspath(__file__), *argv)
    return 0


# ------------------------------------------------------------------------------------------------------------ worker
def read_idx(path, magic, ndims):
    if not os.path.isfile(path) and os.path.isfile(path[:-3]):
        path = path[:-3]
    if not os.path.isfile(path):
        raise SystemExit(f"ddp_peer: cannot open IDX file {path}: no such file "
                         "(`apt-get install dataset-fashion-mnist` or scripts/setup.sh)")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    got = int.from_bytes(raw[0:4], "big")
    if got != magic:
        raise SystemExit(f"ddp_peer: {path}: bad IDX magic 0x{got:x}, expected 0x{magic:x}")
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndims)]
    if len(raw) != 4 + 4 * ndims + math.prod(dims):
        raise SystemExit(f"ddp_peer: {path}: {len(raw)} bytes, the header declares {dims}")
    return raw[4 + 4 * ndims:], dims


def load_split(torch, np, args, prefix):
    images, (n, rows, cols) = read_idx(os.path.join(args.data_dir, f"{prefix}-images-idx3-ubyte.gz"), 0x803, 3)
    labels, _ = read_idx(os.path.join(args.data_dir, f"{prefix}-labels-idx1-ubyte.gz"), 0x801, 1)
    x = torch.from_numpy(np.frombuffer(images, dtype=np.uint8).copy()).view(n, 1, rows, cols)
    x = x.to(torch.float32).div_(255.0).sub_(args.mean).div_(args.std)  # the C++ program's exact op sequence
    y = torch.from_numpy(np.frombuffer(labels, dtype=np.uint8).copy()).to(torch.int64)
    return x, y


def make_net(torch, dropout, channels_last=False):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)

        def forward(self, x):
            drop = self.training and dropout
            x = self.conv1(x)
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
            x = F.relu(F.max_pool2d(x, 2))
            x = self.conv2(x)
            if drop:
                x = self.conv2_drop(x)
            x = F.relu(F.max_pool2d(x, 2))
            x = x.reshape(-1, 320)
            x = F.relu(self.fc1(x))
            if drop:
                x = F.dropout(x, training=True)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    return Net()


def worker(args):
    threads = args.threads or int(os.environ.get("OMP_NUM_THREADS", "1") or 1)
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.utils.data import DistributedSampler

    torch.set_num_threads(threads)
    t0 = float(os.environ.get("BENCH_T0", T_ENTRY))
    distributed = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
    else:
        rank, world = 0, 1
    leader = rank == 0

    device = torch.device("cpu")
    if args.device == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    train_x, train_y = (t.to(device) for t in load_split(torch, np, args, "train"))
    test_x, test_y = (t.to(device) for t in load_split(torch, np, args, "t10k"))
    train_size = min(args.train_limit, len(train_x)) if args.train_limit > 0 else len(train_x)
    test_size = min(args.test_limit, len(test_x)) if args.test_limit > 0 else len(test_x)
    test_x, test_y = test_x[:test_size], test_y[:test_size]
    if leader:
        print(f"ddp_peer: {world} rank(s) ({'DDP, gloo' if distributed else 'plain loop'}), {threads} thread(s) per "
              f"rank, batch {args.batch_size} per rank, on {device}", flush=True)

    torch.manual_seed(args.seed)
    model = make_net(torch, not args.no_dropout, args.channels_last).to(device)
    if args.init_weights:
        # The file comes from lakerun's own run (torch::pickle_save, whose dict carries type tags that PyTorch 2.6's
        # weights_only default refuses); PyTorch 1.13 takes the flag too.
        model.load_state_dict(torch.load(args.init_weights, weights_only=False))
    net = torch.nn.parallel.DistributedDataParallel(model) if distributed else model
    lr = args.lr * {"none": 1, "linear": world, "sqrt": math.sqrt(world)}[args.scale_lr]
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=args.momentum)
    sampler = DistributedSampler(range(train_size), num_replicas=world, rank=rank, shuffle=True,
                                 seed=args.sampler_seed)
    steps_per_epoch = (sampler.num_samples + args.batch_size - 1) // args.batch_size

    metrics = None
    if args.metrics_file and ("{rank}" in args.metrics_file or leader):
        metrics = open(args.metrics_file.replace("{rank}", str(rank)), "w")

    def evaluate():
        per_rank = (test_size + world - 1) // world
        begin = min(test_size, per_rank * rank)
        end = min(test_size, begin + per_rank)
        loss_sum, correct = 0.0, 0
        model.eval()
        with torch.no_grad():
            for i in range(begin, end, 1000):
                out = model(test_x[i:min(end, i + 1000)])
                target = test_y[i:min(end, i + 1000)]
                loss_sum += F.nll_loss(out, target, reduction="sum").item()
                correct += int(out.argmax(1).eq(target).sum().item())
        model.train()
        sums = torch.tensor([loss_sum, float(correct)], dtype=torch.float64)
        if distributed:
            dist.all_reduce(sums)
        return sums[0].item() / max(test_size, 1), int(round(sums[1].item()))

    state = {"stop": False, "time_to_target": None, "last_eval_step": -1, "test": (0.0, 0)}
    global_step = 0

    def eval_and_check(epoch):
        state["test"] = evaluate()
        state["last_eval_step"] = global_step
        t = time.time() - t0
        acc = state["test"][1] / test_size
        if metrics:
            metrics.write(json.dumps({"type": "eval", "epoch": epoch, "step": global_step,
                                      "test_loss": state["test"][0], "test_accuracy": acc, "t": t}) + "\n")
        if args.target_accuracy > 0 and acc >= args.target_accuracy:
            if state["time_to_target"] is None:
                state["time_to_target"] = t
            state["stop"] = True

    def print_test():
        loss, correct = state["test"]
        print(f"\nTest set: Average loss: {loss:.4f}, Accuracy: {correct}/{test_size} "
              f"({100.0 * correct / test_size:.0f}%)\n", flush=True)

    model.train()
    steady_s = steady_cpu = 0.0
    steady_steps = steady_samples = 0
    train_s = 0.0
    first_step_done = None
    epochs_completed = 0
    for epoch in range(1, args.epochs + 1):
        if state["stop"]:
            break
        sampler.set_epoch(epoch - 1)
        order = torch.tensor(list(iter(sampler)), dtype=torch.int64, device=device)
        finished = True
        for batch_idx in range(steps_per_epoch):
            if args.max_steps > 0 and global_step >= args.max_steps:
                finished, state["stop"] = False, True
                break
            first = batch_idx * args.batch_size
            n = min(args.batch_size, sampler.num_samples - first)
            ts, cs = time.perf_counter(), time.process_time()
            index = order[first:first + n]
            x = train_x.index_select(0, index)
            y = train_y.index_select(0, index)
            optimizer.zero_grad()
            loss = F.nll_loss(net(x), y)
            loss.backward()
            optimizer.step()
            loss_value = loss.item()
            step_s = time.perf_counter() - ts
            train_s += step_s
            if batch_idx >= args.warmup_steps:
                steady_s += step_s
                steady_cpu += time.process_time() - cs
                steady_steps += 1
                steady_samples += n * world
            global_step += 1
            if first_step_done is None:
                first_step_done = time.time() - t0
            if not math.isfinite(loss_value):
                raise SystemExit(f"ddp_peer: rank {rank}: the loss became {loss_value} at step {global_step}")
            if metrics:
                metrics.write(json.dumps({"type": "step", "epoch": epoch, "step": global_step, "loss": loss_value,
                                          "step_ms": step_s * 1e3}) + "\n")
            if leader and batch_idx % args.log_interval == 0:
                print(f"Train Epoch: {epoch} [{first * world}/{train_size} "
                      f"({100.0 * batch_idx / steps_per_epoch:.0f}%)]\tLoss: {loss_value:.6f}", flush=True)
            if args.eval_every > 0 and global_step % args.eval_every == 0:
                eval_and_check(epoch)
                if leader:
                    print(f"Step {global_step}: test accuracy {state['test'][1] / test_size:.4f}", flush=True)
                if state["stop"]:
                    finished = False
                    break
        if not finished:
            break
        epochs_completed = epoch
        if state["last_eval_step"] != global_step:
            eval_and_check(epoch)
        if leader:
            print_test()
    if state["last_eval_step"] != global_step or state["last_eval_step"] < 0:
        eval_and_check(epochs_completed)
        if leader:
            print_test()
    if metrics:
        checksum = sum(p.detach().double().abs().sum().item() for p in model.parameters())
        metrics.write(json.dumps({"type": "final", "step": global_step, "param_checksum": checksum}) + "\n")
        metrics.close()

    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    rss = [None] * world
    if distributed:
        dist.all_gather_object(rss, rss_mb)
    else:
        rss = [rss_mb]
    if leader:
        loss, correct = state["test"]
        result = {
            "impl": "pytorch", "device": str(device), "world_size": world, "threads": threads, "lr": lr, "batch_size": args.batch_size,
            "steps": global_step, "epochs_completed": epochs_completed, "test_loss": loss,
            "test_accuracy": correct / test_size,
            "steady_samples_per_s": steady_samples / steady_s if steady_s > 0 else 0.0,
            "steady_step_ms": 1e3 * steady_s / steady_steps if steady_steps else 0.0,
            "cpu_ms_per_step": 1e3 * steady_cpu / steady_steps if steady_steps else 0.0,
            "train_s": train_s, "first_step_done_s": first_step_done, "time_to_target_s": state["time_to_target"],
            "total_s": time.time() - t0, "peak_rss_mb": [round(r, 1) for r in rss],
        }
        print("RESULT " + json.dumps(result), flush=True)
    if distributed:
        dist.destroy_process_group()


def main(argv):
    args = parse_args(argv)
    if args.nproc > 0 and "RANK" not in os.environ:
        rest = worker_argv(argv)
        if args.launcher == "spawn":
            return launch_spawn(args.nproc, rest, args.timeout)
        return launch_elastic(args.nproc, rest, args.timeout)
    worker(args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
