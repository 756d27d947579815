"""PyTorch's own launcher as the peer: torchrun's engine (elastic_launch + LaunchConfig, static rendezvous on
loopback, monitor_interval 0.05 s) starting N copies of a Python script. Debian's `torchrun` script is broken on
Python 3.11, so the API is called directly, as torchrun itself does.

usage: torch_launch.py NPROC SCRIPT [ARGS...]
"""
import socket
import sys
import uuid

from torch.distributed.launcher.api import LaunchConfig, elastic_launch


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    nproc, script, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    config = LaunchConfig(
        min_nodes=1,
        max_nodes=1,
        nproc_per_node=nproc,
        run_id=uuid.uuid4().hex,
        rdzv_backend="static",
        rdzv_endpoint=f"127.0.0.1:{free_port()}",
        rdzv_configs={"rank": 0},
        max_restarts=0,
        monitor_interval=0.05,
    )
    elastic_launch(config, entrypoint=sys.executable)("-u", script, *args)


if __name__ == "__main__":
    main()
