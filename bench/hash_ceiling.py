"""The password-hash ceiling: how many hashes per second this machine does with the project's hasher.

Django's ``make_password`` with ``PASSWORD_HASHERS[0]`` (argon2), in N processes at once for a fixed
time. Sign-in verifies one hash per request and sign-up makes one, so this is the most either endpoint
can ever serve here; the rest of the request should cost little next to it.

Prints one line: ``<processes> <hashes> <seconds> <hashes_per_second> <cpu_ms_per_hash>`` (CPU time of
the process, all its threads: argon2 runs its lanes in parallel threads).
"""

import argparse
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")


def _worker(seconds, start_at, results):
    import django

    django.setup()
    from django.contrib.auth.hashers import make_password

    make_password("warm-up-password")
    while time.time() < start_at:
        time.sleep(0.005)
    count, end, cpu0 = 0, start_at + seconds, time.process_time()
    while time.time() < end:
        make_password("bench-password-123")
        count += 1
    results.put((count, time.time() - start_at, time.process_time() - cpu0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    results = mp.Queue()
    start_at = time.time() + 3.0  # every process imports Django and warms up first
    procs = [mp.Process(target=_worker, args=(args.seconds, start_at, results)) for _ in range(args.processes)]
    for proc in procs:
        proc.start()
    done = [results.get(timeout=args.seconds + 60) for _ in procs]
    for proc in procs:
        proc.join()
    hashes = sum(count for count, _, _ in done)
    elapsed = max(spent for _, spent, _ in done)
    cpu_ms = 1000 * sum(cpu for _, _, cpu in done) / hashes
    print(f"{args.processes} {hashes} {elapsed:.2f} {hashes / elapsed:.2f} {cpu_ms:.1f}")


if __name__ == "__main__":
    main()
