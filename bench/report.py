"""Read wrk's output and print the Markdown table.

``report.py parse WRK_OUTPUT``  -> one tab-separated line: requests  rps  p50_ms  p99_ms  non2xx  socket_errors
``report.py table RESULTS_TSV CEILING_HASHES_PER_S`` -> the Markdown table of every run.

RESULTS_TSV lines: mode  endpoint  <the six fields of ``parse``>.
"""

import re
import sys

UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}


def _ms(text):
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text).groups()
    return float(number) * UNITS_MS[unit]


def parse(text):
    percentile = dict(re.findall(r"^\s+(50|99)(?:\.000)?%\s+(\S+)\s*$", text, re.M))
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    total = re.search(r"^\s+(\d+) requests in", text, re.M)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if not (rps and total and "50" in percentile and "99" in percentile):
        raise SystemExit("could not parse wrk output:\n" + text)
    return [
        total.group(1),
        rps.group(1),
        f"{_ms(percentile['50']):.1f}",
        f"{_ms(percentile['99']):.1f}",
        non2xx.group(1) if non2xx else "0",
        str(sum(int(n) for n in errors.groups())) if errors else "0",
    ]


def table(rows, ceiling):
    lines = [
        "| REDIS_URL | endpoint | requests | req/s | p50 ms | p99 ms | non-2xx | socket errors | % of hash ceiling |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mode, endpoint, requests, rps, p50, p99, non2xx, errors in rows:
        share = "-"
        if endpoint in ("sign-in", "sign-up") and ceiling > 0:
            share = f"{100 * float(rps) / ceiling:.0f} %"
        lines.append(f"| {mode} | {endpoint} | {requests} | {float(rps):.0f} | {p50} | {p99} | {non2xx} | "
                     f"{errors} | {share} |")
    return "\n".join(lines)


def main():
    if sys.argv[1] == "parse":
        with open(sys.argv[2]) as handle:
            print("\t".join(parse(handle.read())))
    elif sys.argv[1] == "table":
        with open(sys.argv[2]) as handle:
            rows = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
        print(table(rows, float(sys.argv[3])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
