"""Read wrk's output (and cpu.py's) and print the Markdown table.

``report.py parse WRK_OUTPUT CPU_JSON``
    -> one tab-separated line: requests rps p50_ms p99_ms non2xx socket_errors
       server_cpu_ms_per_request postgres_cpu_ms_per_request wrk_cores other_cores
``report.py table RESULTS_TSV CEILING_HASHES_PER_S CPU_MS_PER_HASH``
    -> the Markdown table of every run (RESULTS_TSV lines: mode, endpoint, then the fields of ``parse``).
"""

import json
import re
import sys

UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}


def _ms(text):
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text).groups()
    return float(number) * UNITS_MS[unit]


def parse(text, cpu):
    percentile = dict(re.findall(r"^\s+(50|99)(?:\.000)?%\s+(\S+)\s*$", text, re.M))
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    total = re.search(r"^\s+(\d+) requests in", text, re.M)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    # What a script's done() counts as failed although the status was 2xx/3xx (saml_acs.lua).
    failed = re.search(r"^Failed responses:\s+(\d+)", text, re.M)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if not (rps and total and "50" in percentile and "99" in percentile):
        raise SystemExit("could not parse wrk output:\n" + text)
    requests = int(total.group(1))
    per_request = lambda cores: 1000 * cores * cpu["wall_s"] / requests if requests else 0.0  # noqa: E731
    return [
        str(requests),
        rps.group(1),
        f"{_ms(percentile['50']):.1f}",
        f"{_ms(percentile['99']):.1f}",
        str((int(non2xx.group(1)) if non2xx else 0) + (int(failed.group(1)) if failed else 0)),
        str(sum(int(n) for n in errors.groups())) if errors else "0",
        f"{per_request(cpu['server_cores']):.2f}",
        f"{per_request(cpu['postgres_cores']):.2f}",
        f"{cpu['client_cores']:.2f}",
        f"{cpu['other_cores'] + cpu['steal_cores']:.2f}",
    ]


def table(rows, ceiling, hash_ms):
    lines = [
        "| REDIS_URL | endpoint | req/s | p50 ms | p99 ms | requests | non-2xx / socket errors "
        "| worker CPU ms/req | PostgreSQL CPU ms/req | wrk cores | other load (cores) | % of hash ceiling "
        "| CPU besides the hash |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for mode, endpoint, requests, rps, p50, p99, non2xx, errors, server, pg, client, other in rows:
        share = overhead = "-"
        if endpoint in ("sign-in", "sign-up") and float(requests):
            share = f"{100 * float(rps) / ceiling:.0f} %" if ceiling else "-"
            if hash_ms:
                besides = float(server) + float(pg) - hash_ms
                overhead = f"{besides:.1f} ms = {100 * besides / hash_ms:.0f} %"
        lines.append(
            f"| {mode} | {endpoint} | {float(rps):.0f} | {p50} | {p99} | {requests} | {non2xx} / {errors} "
            f"| {server} | {pg} | {client} | {other} | {share} | {overhead} |"
        )
    return "\n".join(lines)


def main():
    if sys.argv[1] == "parse":
        with open(sys.argv[2]) as handle, open(sys.argv[3]) as cpu:
            print("\t".join(parse(handle.read(), json.load(cpu))))
    elif sys.argv[1] == "table":
        with open(sys.argv[2]) as handle:
            rows = [line.rstrip("\n").split("\t") for line in handle if line.strip()]
        print(table(rows, float(sys.argv[3]), float(sys.argv[4])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
