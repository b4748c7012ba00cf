"""Where the CPU went during a load run, so figures from a shared machine can be judged.

``cpu.py run --server-pid PID --db NAME --requests-from WRK_OUT --out JSON -- wrk ...``
    runs the command and writes, as JSON, the CPU (in cores, i.e. CPU-seconds per second) used by
    the gunicorn master and workers, by the PostgreSQL backends of database NAME, by the command
    itself (wrk), and by everything else on the machine ("other": a second job skews the figures).
``cpu.py drain --server-pid PID --max-wait S``
    waits (at most S seconds) until the server's process tree uses under 0.05 cores: done with the
    requests it accepted before wrk stopped. Prints the load it saw last.
``cpu.py idle --max-wait S``
    waits (at most S seconds) until the machine is quiet: under 0.25 busy cores for two seconds in a
    row. Prints the load it saw last.

Linux only (/proc).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def _machine():
    """(busy ticks, steal ticks) of all CPUs since boot."""
    with open("/proc/stat") as handle:
        fields = [int(n) for n in handle.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return user + nice + system + irq + softirq, steal


def _processes():
    """pid -> (ppid, ticks used by it and its reaped children, cmdline) for every process."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                stat = handle.read()
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        rest = stat.rsplit(")", 1)[1].split()
        # utime + stime + cutime + cstime: the CPU of exited children a process has waited for counts
        # too, or the xmlsec1 runs of a gunicorn worker (each lives a few ms) would be "other" load.
        found[int(name)] = (int(rest[1]), sum(int(n) for n in rest[11:15]), cmdline)
    return found


def _ours(processes, server_pid, db):
    """Ticks used by the server's process tree and by the database's backends."""
    tree, changed = {server_pid}, True
    while changed:
        changed = False
        for pid, (ppid, _, _) in processes.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                changed = True
    server = {pid: processes[pid][1] for pid in tree if pid in processes}
    postgres = {pid: ticks for pid, (_, ticks, cmd) in processes.items()
                if cmd.startswith("postgres: ") and f" {db} " in cmd}
    return server, postgres


def _delta(before, after):
    return sum(ticks - before.get(pid, 0) for pid, ticks in after.items())


def run(args):
    busy0, steal0 = _machine()
    server0, pg0 = _ours(_processes(), args.server_pid, args.db)
    child0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    code = subprocess.call(args.command)
    wall = time.monotonic() - started
    child1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy1, steal1 = _machine()
    server1, pg1 = _ours(_processes(), args.server_pid, args.db)
    cores = lambda ticks: ticks / TICK / wall  # noqa: E731
    server = cores(_delta(server0, server1))
    postgres = cores(_delta(pg0, pg1))
    client = ((child1.ru_utime + child1.ru_stime) - (child0.ru_utime + child0.ru_stime)) / wall
    busy = cores(busy1 - busy0)
    result = {
        "wall_s": round(wall, 2),
        "server_cores": round(server, 3),
        "postgres_cores": round(postgres, 3),
        "client_cores": round(client, 3),
        "other_cores": round(max(0.0, busy - server - postgres - client), 3),
        "steal_cores": round(cores(steal1 - steal0), 3),
    }
    with open(args.out, "w") as handle:
        json.dump(result, handle)
    return code


def idle(args):
    deadline = time.monotonic() + args.max_wait
    quiet = 0
    while True:
        busy0, _ = _machine()
        time.sleep(1)
        busy = (_machine()[0] - busy0) / TICK
        quiet = quiet + 1 if busy < 0.25 else 0
        if quiet >= 2 or time.monotonic() > deadline:
            print(f"{busy:.2f}")
            return 0


def drain(args):
    """Wait until the server's process tree is idle: wrk stops sending, but a server still works through
    the requests it had accepted (32 argon2 hashes are seconds of CPU), which the next run would pay."""
    deadline = time.monotonic() + args.max_wait
    while True:
        before = _ours(_processes(), args.server_pid, "-")[0]
        time.sleep(0.5)
        cores = _delta(before, _ours(_processes(), args.server_pid, "-")[0]) / TICK / 0.5
        if cores < 0.05 or time.monotonic() > deadline:
            print(f"{cores:.2f}")
            return 0


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="action", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--server-pid", type=int, required=True)
    run_parser.add_argument("--db", required=True)
    run_parser.add_argument("--out", required=True)
    run_parser.add_argument("command", nargs=argparse.REMAINDER)
    idle_parser = sub.add_parser("idle")
    idle_parser.add_argument("--max-wait", type=float, default=60)
    drain_parser = sub.add_parser("drain")
    drain_parser.add_argument("--server-pid", type=int, required=True)
    drain_parser.add_argument("--max-wait", type=float, default=60)
    args = parser.parse_args()
    if args.action == "run":
        if args.command and args.command[0] == "--":
            args.command = args.command[1:]
        return run(args)
    return drain(args) if args.action == "drain" else idle(args)


if __name__ == "__main__":
    sys.exit(main())
