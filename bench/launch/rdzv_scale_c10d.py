#!/usr/bin/env python3
"""c10d's TCPStore (Debian's python3-torch) with the clients of rdzv_scale.cc: the peer of lakerun's store.

    rdzv_scale_c10d.py [--nodes 128] [--ranks-per-node 8] [--server-cmd "bench_rdzv_scale --serve-open"]

The store (TCPStore with is_master=True) runs in a child process, so its memory is its own; each of the
nodes x ranks-per-node client threads opens its own TCPStore client and does what rdzv_scale.cc's clients do: set its
key, add 1 to "arrived" (the last one sets "world"), wait for "world", read three keys. TCPStore releases the GIL in
its calls, so the threads wait on the store, not on each other. With --server-cmd, the same clients talk to another
server that prints its port and serves until its stdin closes (lakerun's open store: the servers compared with the
clients held equal). Prints one "RESULT ..." line (rdzv_scale.sh).
"""
import argparse
import os
import subprocess
import sys
import threading
import time
from datetime import timedelta

TIMEOUT = timedelta(seconds=120)

SERVER = r"""
import sys, time
from datetime import timedelta
import torch.distributed as dist
store = dist.TCPStore("127.0.0.1", 0, None, True, timedelta(seconds=120), wait_for_workers=False)
print(store.port, flush=True)
sys.stdin.read()  # until the parent closes our stdin
"""


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def rendezvous(dist, port, rank, nodes, per_node, failures):
    world = nodes * per_node
    try:
        store = dist.TCPStore("127.0.0.1", port, None, False, TIMEOUT)
        store.set(f"rank/{rank}", f"node {rank // per_node} local {rank % per_node}")
        if store.add("arrived", 1) == world:
            store.set("world", "complete")
        store.wait(["world"])
        store.get(f"rank/{rank // per_node * per_node}")
        store.get(f"rank/{(rank + 1) % world}")
        store.get(f"rank/{(rank + per_node) % world}")
    except Exception as e:  # noqa: BLE001 - counted and reported
        failures.append(f"rank {rank}: {e}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=128)
    parser.add_argument("--ranks-per-node", type=int, default=8)
    parser.add_argument("--server-cmd", help="a server to use instead of c10d's TCPStore master")
    args = parser.parse_args()
    import torch
    import torch.distributed as dist

    command = args.server_cmd.split() if args.server_cmd else [sys.executable, "-c", SERVER]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        rss_before = status_kb(server.pid, "VmRSS")
        world = args.nodes * args.ranks_per_node
        go = threading.Event()
        failures = []

        def client(rank):
            go.wait()
            rendezvous(dist, port, rank, args.nodes, args.ranks_per_node, failures)

        threads = [threading.Thread(target=client, args=(r,)) for r in range(world)]
        for t in threads:
            t.start()
        start = time.monotonic()
        go.set()
        for t in threads:
            t.join()
        world_ms = (time.monotonic() - start) * 1000
        peak = status_kb(server.pid, "VmHWM")
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    for f in failures[:5]:
        print(f, file=sys.stderr)
    impl = "c10d_clients_lakerun_server" if args.server_cmd else "c10d"
    print(f"RESULT impl={impl} torch={torch.__version__} clients={world} nodes={args.nodes} "
          f"ranks_per_node={args.ranks_per_node} failed={len(failures)} world_ms={world_ms:.1f} "
          f"store_rss_before_kb={rss_before} store_peak_kb={peak} store_growth_kb={peak - rss_before}", flush=True)


if __name__ == "__main__":
    main()
