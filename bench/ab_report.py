"""The table of an A/B run (ab.sh): medians of each build's rounds and the ratio new / base.

``ab_report.py RESULTS_TSV NEW_ENDPOINT:BASE_ENDPOINT ...``

RESULTS_TSV lines: side (base or new), endpoint, round, and the path of that run's wrk output (cpu.py's
JSON beside it, ``.cpu.json``). Prints one table row per figure and pair, then every round's figures,
and exits 1 if any run had a failed response or a socket error (its figures would not mean anything).
"""

import json
import statistics
import sys

from report import parse

FIGURES = (
    ("req/s", lambda run: run["rps"], "{:.0f}"),
    ("worker CPU ms/req", lambda run: run["server_ms"], "{:.3f}"),
    ("worker + PostgreSQL CPU ms/req", lambda run: run["server_ms"] + run["postgres_ms"], "{:.3f}"),
    ("p99 ms", lambda run: run["p99"], "{:.1f}"),
)


def load(out):
    """One run's figures; CPU per request recomputed here with more digits than report.py prints."""
    with open(out) as handle, open(out + ".cpu.json") as cpu_file:
        text, cpu = handle.read(), json.load(cpu_file)
    requests, rps, _p50, p99, failed, errors, *_ = parse(text, cpu)
    per_request = lambda cores: 1000 * cores * cpu["wall_s"] / int(requests)  # noqa: E731
    return {
        "rps": float(rps), "p99": float(p99), "failed": int(failed) + int(errors),
        "server_ms": per_request(cpu["server_cores"]), "postgres_ms": per_request(cpu["postgres_cores"]),
        "other": cpu["other_cores"] + cpu["steal_cores"],
    }


def main():
    runs = {}
    with open(sys.argv[1]) as handle:
        for line in handle:
            side, endpoint, _round, out = line.rstrip("\n").split("\t")
            runs.setdefault((side, endpoint), []).append(load(out))
    print("| new | base | figure (median of rounds) | base | new | new / base |")
    print("|---|---|---|---:|---:|---:|")
    for pair in sys.argv[2:]:
        new_endpoint, base_endpoint = pair.split(":", 1)
        new, base = runs[("new", new_endpoint)], runs[("base", base_endpoint)]
        for name, figure, fmt in FIGURES:
            b = statistics.median(figure(run) for run in base)
            n = statistics.median(figure(run) for run in new)
            print(f"| {new_endpoint} | {base_endpoint} | {name} | {fmt.format(b)} | {fmt.format(n)} | {n / b:.3f} |")
    print()
    print("Every round (req/s / worker CPU ms/req / other load in cores):")
    bad = False
    for (side, endpoint), found in sorted(runs.items()):
        cells = ", ".join(f"{run['rps']:.0f} / {run['server_ms']:.3f} / {run['other']:.2f}" for run in found)
        print(f"- {side} {endpoint}: {cells}")
        if any(run["failed"] for run in found):
            print(f"  INVALID: {side} {endpoint} had failed responses or socket errors")
            bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
