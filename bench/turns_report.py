"""Summarise the runs of compare.sh and servers.sh, which take turns between servers.

``turns_report.py RESULTS_TSV [--baseline SIDE] [--versus SIDE ...]``

RESULTS_TSV lines: row, side, round, 1-minute load average, then the fields of ``report.py parse``
(requests rps p50 p99 failed socket_errors server_cpu_ms pg_cpu_ms wrk_cores other_cores).
For each row and side it prints the median req/s over the rounds (and the range), the median p50 and
the worst p99, the CPU per request, every failed answer, the load averages seen before the runs and the
median CPU that everything else used during them (cpu.py's "other", steal included). With --baseline,
each --versus side gets the ratio baseline / that side of the median req/s (ours / theirs), and the
same ratio round by round: the rounds ran back to back, so a drift of the machine affects both.
"""

import argparse
import statistics
from collections import defaultdict


def load(path):
    runs = defaultdict(list)  # (row, side) -> [dict per round]
    order_rows, order_sides = [], []
    for line in open(path):
        if not line.strip():
            continue
        row, side, rnd, loadavg, requests, rps, p50, p99, failed, errors, server, pg, wrk_cores, other = (
            line.rstrip("\n").split("\t"))
        if row not in order_rows:
            order_rows.append(row)
        if side not in order_sides:
            order_sides.append(side)
        runs[(row, side)].append({
            "round": int(rnd), "load": float(loadavg), "rps": float(rps), "p50": float(p50), "p99": float(p99),
            "bad": int(failed) + int(errors), "server": float(server), "pg": float(pg),
            "other": float(other),
        })
    return runs, order_rows, order_sides


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("--baseline")
    parser.add_argument("--versus", action="append", default=[])
    args = parser.parse_args()
    runs, rows, sides = load(args.results)
    print("| row | server | req/s (median, range) | p50 ms | p99 ms (worst) | server CPU ms/req "
          "| PostgreSQL CPU ms/req | failed answers | load avg (1 min) | other load (cores) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---:|")
    for row in rows:
        for side in sides:
            found = runs.get((row, side))
            if not found:
                continue
            rps = [r["rps"] for r in found]
            loads = [r["load"] for r in found]
            print(f"| {row} | {side} | {statistics.median(rps):,.0f} ({min(rps):,.0f}-{max(rps):,.0f}) "
                  f"| {statistics.median(r['p50'] for r in found):.1f} | {max(r['p99'] for r in found):.1f} "
                  f"| {statistics.median(r['server'] for r in found):.2f} "
                  f"| {statistics.median(r['pg'] for r in found):.2f} | {sum(r['bad'] for r in found)} "
                  f"| {min(loads):.2f}-{max(loads):.2f} | {statistics.median(r['other'] for r in found):.2f} |")
    if not args.baseline:
        return
    print()
    print(f"| row | {args.baseline} / ... | ratio of the medians | ratio round by round |")
    print("|---|---|---:|---|")
    for row in rows:
        ours = runs.get((row, args.baseline))
        for side in args.versus:
            theirs = runs.get((row, side))
            if not ours or not theirs:
                continue
            theirs_rps = statistics.median(r["rps"] for r in theirs)
            if not theirs_rps:
                continue
            ratio = statistics.median(r["rps"] for r in ours) / theirs_rps
            by_round = {r["round"]: r["rps"] for r in theirs}
            rounds = ", ".join(f"{r['rps'] / by_round[r['round']]:.2f}" for r in ours if by_round.get(r["round"]))
            print(f"| {row} | {side} | **{ratio:.2f}** | {rounds} |")


if __name__ == "__main__":
    main()
