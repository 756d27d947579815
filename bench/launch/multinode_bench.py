"""Multi-node launch benchmark driver: multinode.sh calls it once it has made the emulated hosts (network namespaces
on one bridge, each with a host name of its own); it builds nothing and makes no namespace.

In one run, with --repeats runs of each contender, alternating which goes first:
  1. start: the wall time from starting both nodes' launchers to every rank being past its first all-reduce, on
     --nodes nodes x --nproc-per-node ranks:
       lakerun:  `lakerun launch --nnodes N --node-rank K --nproc-per-node P --rdzv-endpoint HOST1:PORT --rdzv-id ID
                 --rdzv-secret-file F --start-method exec|fork -- bench_launch_rank_dist` on every host (C++
                 ranks on lakerun::dist; exec, the default, execs each rank, fork loads libtorch once per node)
       torchrun: `python3 -m torch.distributed.run --nnodes N --nproc_per_node P --rdzv_backend c10d
                 --rdzv_endpoint HOST1:PORT --rdzv_id ID --monitor_interval 0.05 rank.py` on every host (Python
                 ranks: init_process_group("gloo") and one all-reduce; PyTorch 1.13 spells its flags with
                 underscores only; plus TORCHRUN_STD_FIX, below)
     from the ranks' BENCH lines (CLOCK_REALTIME, shared by the namespaces); prints each median, the spread (min-max
     of the runs) and the ratios torchrun / lakerun.
  2. steps: the per-step time of bench_launch_steps (a linear layer's forward and weight gradient, the mean
     all-reduce of the 2 MiB gradient, an SGD step), timed inside the ranks, on --nodes x --step-nproc-per-node:
       agents:  the same `lakerun launch` on every host (node agents heartbeating and polling the authenticated
                store for failures all along)
       by hand: every rank started on its host, by a shell there, with torchrun's variables (RANK, WORLD_SIZE,
                LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT, and OMP_NUM_THREADS as the
                launcher sets it): rank 0 hosts an open store, nothing heartbeats or supervises
     A run's figure is the median over its ranks of each rank's median step; prints the median over runs, the
     spread (min-max of the runs' figures) and the ratio agents / by hand.

Each node's launcher (by hand: its shell) starts through netns_on_host.sh in a session of its own, so every host's
processes are one session under each contender. Each run is bounded by --timeout, past which everything left on the
hosts is killed and the benchmark fails with the logs; a run starts only once the hosts are empty. Logs are under
--work.
"""
import argparse
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time

from launch_bench import first_all_reduce

STEPS_RE = re.compile(r"STEPS rank=(\d+) world=(\d+) steps=(\d+) median_us=([0-9.]+) min_us=\d+ max_us=\d+ "
                      r"checksum=(\S+)")

# torchrun of Debian's python3-torch (1.13) fails on Python 3.11 before starting a worker: `--redirects` and `--tee`
# default to "0", which Std.from_str turns into None (3.11 no longer iterates a flag's zero member), and to_map
# raises AttributeError. A mapping that names no local rank of ours means the same (nothing redirected or teed).
TORCHRUN_STD_FIX = ["--redirects", "9:3", "--tee", "9:3"]


class Hosts:
    """The emulated hosts: starts commands on them, waits for them (bounded), and empties them. Of each process it
    waited for, `usage` holds (its own CPU seconds, its threads' and not its children's; its wall seconds), by log."""

    def __init__(self, names, net, on_host, work, timeout):
        self.names, self.net, self.on_host, self.work, self.timeout = names, net, on_host, work, timeout
        self.env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "GLOO_SOCKET_IFNAME": "eth0"}
        self.live = []
        self.usage = {}

    def address(self, host):
        return f"{self.net}.{host + 1}"

    def start(self, host, cmd, log, **env):
        with open(os.path.join(self.work, log), "wb") as out:
            proc = subprocess.Popen([self.on_host, self.names[host]] + cmd, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=dict(self.env, **env), start_new_session=True)
        proc.log, proc.started = log, time.monotonic()
        self.live.append(proc)
        return proc

    def exit_status(self, proc, deadline):
        """Waits until proc has exited (None past the deadline), notes its usage from its zombie's /proc/PID/stat
        (utime and stime: every thread of it, none of its children), then reaps it."""
        while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)
        wall = time.monotonic() - proc.started
        with open(f"/proc/{proc.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        self.usage[proc.log] = ((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), wall)
        return proc.wait()

    def wait(self, what):
        """Waits for every started process (until --timeout after the first wait began); returns their logs' text."""
        deadline = time.monotonic() + self.timeout
        procs, self.live = self.live, []
        failed = []
        try:
            for proc in procs:
                rc = self.exit_status(proc, deadline)
                if rc is None:
                    failed.append(f"{proc.log}: still running after {self.timeout:g} s")
                elif rc != 0:
                    failed.append(f"{proc.log}: exit status {rc}")
        finally:
            self.live = procs
            self.kill()
        logs = {p.log: open(os.path.join(self.work, p.log), errors="replace").read() for p in procs}
        if failed:
            sys.exit(f"{what} failed: {'; '.join(failed)}\n" +
                     "".join(f"--- {log}\n{text}" for log, text in logs.items()))
        return "".join(logs.values())

    def pids(self):
        return [int(p) for name in self.names
                for p in subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True,
                                        timeout=30).stdout.split()]

    def kill(self):
        """Kills what this driver started and is still running, then anything else on the hosts."""
        for proc in self.live:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.wait()
        self.live = []
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def ensure_empty(self):
        """Before a run: the previous run's processes have all ended (waits up to 10 s, then kills them)."""
        deadline = time.monotonic() + 10
        while self.pids():
            if time.monotonic() > deadline:
                print(f"# warning: processes {self.pids()} were still on the hosts 10 s after a run; killed",
                      flush=True)
                self.kill()
                break
            time.sleep(0.05)


class Bench:
    def __init__(self, args, hosts):
        self.args, self.hosts = args, hosts
        self.here = os.path.dirname(os.path.abspath(__file__))
        self.port = 29500
        self.agent_usage = []  # (CPU s, wall s) of each agent of the step runs
        self.secret = os.path.join(args.work, "secret")
        fd = os.open(self.secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(32).hex().encode())
        os.close(fd)

    def next_port(self):
        self.port += 1
        return self.port

    def lakerun(self, nproc, program, what, flags=()):
        """One job of `lakerun launch` agents, one per host; returns (t0 in CLOCK_REALTIME ns, the agents' output)."""
        port = self.next_port()
        self.hosts.ensure_empty()
        t0 = time.time_ns()
        for node in range(self.args.nodes):
            self.hosts.start(node, [self.args.lakerun, "launch", "--nnodes", str(self.args.nodes), "--node-rank",
                                    str(node), "--nproc-per-node", str(nproc), "--rdzv-endpoint",
                                    f"{self.hosts.address(0)}:{port}", "--rdzv-id", f"mnbench{port}",
                                    "--rdzv-secret-file", self.secret, "--join-timeout", str(self.args.timeout)]
                             + list(flags) + ["--"] + program, f"{what}.{port}.node{node}.log")
        return t0, self.hosts.wait(f"{what} (port {port})")

    def torchrun(self, nproc, script):
        port = self.next_port()
        self.hosts.ensure_empty()
        t0 = time.time_ns()
        for node in range(self.args.nodes):
            self.hosts.start(node, [self.args.python, "-m", "torch.distributed.run", "--nnodes", str(self.args.nodes),
                                    "--nproc_per_node", str(nproc), "--rdzv_backend", "c10d", "--rdzv_endpoint",
                                    f"{self.hosts.address(0)}:{port}", "--rdzv_id", f"mnbench{port}",
                                    "--monitor_interval", "0.05"] + TORCHRUN_STD_FIX + [script],
                             f"torchrun.{port}.node{node}.log")
        return t0, self.hosts.wait(f"torchrun (port {port})")

    def by_hand(self, nproc, program):
        """The ranks of one job started on their hosts with torchrun's variables, no agent: on each host one shell
        starts that host's ranks and waits for them, so that each host's processes are one session, as under an
        agent (with the scheduler's autogroups, a session per rank would get the ranks a larger share of a machine
        shared with other work than an agent's ranks get)."""
        port = self.next_port()
        self.hosts.ensure_empty()
        command = " ".join(shlex.quote(arg) for arg in program)
        for node in range(self.args.nodes):
            starts = "".join(f'RANK={node * nproc + local} LOCAL_RANK={local} {command} & pids="$pids $!"; '
                             for local in range(nproc))
            self.hosts.start(node, ["sh", "-c", f'rc=0; {starts}for p in $pids; do wait $p || rc=$?; done; exit $rc'],
                             f"hand.{port}.node{node}.log", WORLD_SIZE=str(self.world(nproc)),
                             LOCAL_WORLD_SIZE=str(nproc), GROUP_RANK=str(node), GROUP_WORLD_SIZE=str(self.args.nodes),
                             MASTER_ADDR=self.hosts.address(0), MASTER_PORT=str(port),
                             OMP_NUM_THREADS=str(max(1, os.cpu_count() // nproc)))
        return self.hosts.wait(f"ranks by hand (port {port})")

    def start_lakerun(self, method):
        t0, out = self.lakerun(self.args.nproc_per_node, [self.args.rank], method, ["--start-method", method])
        return first_all_reduce(out, self.world(self.args.nproc_per_node), t0,
                                f"lakerun launch --start-method {method}")[1]["to_all_reduced_s"]

    def start_torchrun(self):
        t0, out = self.torchrun(self.args.nproc_per_node, os.path.join(self.here, "rank.py"))
        return first_all_reduce(out, self.world(self.args.nproc_per_node), t0, "torchrun")[1]["to_all_reduced_s"]

    def steps_program(self):
        return [self.args.steps_rank, "--steps", str(self.args.steps), "--warmup", str(self.args.warmup)]

    def steps_agents(self):
        _, out = self.lakerun(self.args.step_nproc_per_node, self.steps_program(), "agents")
        self.agent_usage += [usage for log, usage in self.hosts.usage.items() if log.startswith(f"agents.{self.port}.")]
        return self.step_ms(out, "the steps under lakerun launch")

    def steps_by_hand(self):
        return self.step_ms(self.by_hand(self.args.step_nproc_per_node, self.steps_program()), "the steps by hand")

    def world(self, nproc):
        return self.args.nodes * nproc

    def step_ms(self, out, what):
        """A run's figure: the median over the ranks of each rank's median step (ms); every rank's world, step
        count and parameters are checked."""
        world = self.world(self.args.step_nproc_per_node)
        ranks = {int(m.group(1)): m for m in STEPS_RE.finditer(out)}
        if sorted(ranks) != list(range(world)):
            sys.exit(f"{what}: expected the STEPS lines of ranks 0..{world - 1}, got ranks {sorted(ranks)}:\n{out}")
        for rank, m in ranks.items():
            if int(m.group(2)) != world or int(m.group(3)) != self.args.steps:
                sys.exit(f"{what}: rank {rank} reports world {m.group(2)}, {m.group(3)} steps:\n{out}")
        if len({m.group(5) for m in ranks.values()}) != 1:
            sys.exit(f"{what}: the ranks' parameters differ after the all-reduces:\n{out}")
        return statistics.median(float(m.group(4)) for m in ranks.values()) / 1e3


def spread(values, unit, fmt):
    return f"runs {min(values):{fmt}}-{max(values):{fmt}} {unit}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lakerun", required=True)
    parser.add_argument("--rank", required=True, help="bench_launch_rank_dist")
    parser.add_argument("--steps-rank", required=True, help="bench_launch_steps")
    parser.add_argument("--python", required=True, help="a python3 with torch (Debian's /usr/bin/python3)")
    parser.add_argument("--on-host", required=True, help="netns_on_host.sh")
    parser.add_argument("--hosts", required=True, help="the hosts' namespaces, comma-separated")
    parser.add_argument("--net", required=True, help="their network's three octets: host i is NET.i")
    parser.add_argument("--work", required=True, help="a directory for logs and the secret")
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--nproc-per-node", type=int, default=4, help="ranks per node for the start (default 4)")
    parser.add_argument("--step-nproc-per-node", type=int, default=4, help="ranks per node for the steps (default 4)")
    parser.add_argument("--steps", type=int, default=200, help="timed steps per run (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps before them (default 10)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=180, help="bound on each run, seconds (default 180)")
    args = parser.parse_args()
    names = args.hosts.split(",")
    if len(names) < args.nodes:
        sys.exit(f"--nodes {args.nodes} needs as many hosts; got {names}")
    hosts = Hosts(names, args.net, args.on_host, args.work, args.timeout)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("multinode_bench: terminated"))
    bench = Bench(args, hosts)
    start_shape = f"{args.nodes} nodes x {args.nproc_per_node} ranks"
    steps_shape = f"{args.nodes} nodes x {args.step_nproc_per_node} ranks, {args.steps} steps"
    print(f"# multi-node launch benchmark: {args.nodes} emulated hosts ({args.net}.1-{args.nodes}, network "
          f"namespaces on one bridge), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"{args.repeats} runs of each, alternating which goes first", flush=True)
    measures = {"exec": lambda: bench.start_lakerun("exec"), "fork": lambda: bench.start_lakerun("fork"),
                "torchrun": bench.start_torchrun, "agents": bench.steps_agents, "hand": bench.steps_by_hand}
    runs = {name: [] for name in measures}
    try:
        for i in range(args.repeats):
            starts, steps = ["exec", "fork", "torchrun"], ["agents", "hand"]
            for name in (starts + steps if i % 2 == 0 else starts[::-1] + steps[::-1]):
                runs[name].append(measures[name]())
            print(f"run {i + 1}/{args.repeats}: start lakerun exec {runs['exec'][-1]:.3f} s, fork "
                  f"{runs['fork'][-1]:.3f} s, torchrun {runs['torchrun'][-1]:.3f} s; step agents "
                  f"{runs['agents'][-1]:.2f} ms, by hand {runs['hand'][-1]:.2f} ms; load average "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
    finally:
        hosts.kill()
    med = {name: statistics.median(values) for name, values in runs.items()}
    print(f"start, {start_shape}: torchrun c10d + Python ranks {med['torchrun']:.3f} s "
          f"({spread(runs['torchrun'], 's', '.3f')})")
    for method in ("exec", "fork"):
        print(f"start, {start_shape}: lakerun launch --start-method {method} + C++ ranks {med[method]:.3f} s "
              f"({spread(runs[method], 's', '.3f')}); ratio torchrun/lakerun {med['torchrun'] / med[method]:.2f}x")
    print(f"steps, {steps_shape}: lakerun launch agents {med['agents']:.2f} ms/step "
          f"({spread(runs['agents'], 'ms', '.2f')}), by hand {med['hand']:.2f} ms/step "
          f"({spread(runs['hand'], 'ms', '.2f')}); ratio agents/by hand {med['agents'] / med['hand']:.3f}")
    cpu = [c * 1e3 for c, _ in bench.agent_usage]
    share = [100 * c / w for c, w in bench.agent_usage]
    print(f"agents' own CPU in the step runs (every thread of lakerun launch: start, supervision, heartbeats, store "
          f"polls): median {statistics.median(cpu):.0f} ms per agent over a median "
          f"{statistics.median(w for _, w in bench.agent_usage):.1f} s job, {statistics.median(share):.2f}% of one "
          f"core (at most {max(share):.2f}%)")
    print(f"# load average at the end {os.getloadavg()[0]:.1f}; a run's step figure is the median over its ranks of "
          "each rank's median step; medians over runs", flush=True)


if __name__ == "__main__":
    main()
