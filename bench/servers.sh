#!/usr/bin/env bash
# Which server should run the example project in production? Measured, not guessed: every candidate
# serves the same database at once, and each round runs get-session and GET /api/auth/ok (no database,
# the serving layer's ceiling) against each of them in turn, the order reversed every other round.
# `bash bench/servers.sh`. See bench/README.md ("Choosing the server").
#
# Knobs (environment): SERVERS_LIST ("granian-wsgi-1t granian-wsgi-4t granian-asgi gunicorn-sync gunicorn-gthread
# uvicorn": lib.sh has their command lines),
# SERVERS_ENDPOINTS ("get-session ok"), BENCH_ROUNDS (3), BENCH_DURATION (s per run, 5),
# BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_WORKERS (2 processes per server),
# BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/authservice_servers), PYTHON.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"

PYTHON=${PYTHON:-python}
LIST=${SERVERS_LIST:-granian-wsgi-1t granian-wsgi-4t granian-asgi gunicorn-sync gunicorn-gthread uvicorn}
ENDPOINTS=${SERVERS_ENDPOINTS:-get-session ok}
ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-5}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
THREADS=${BENCH_THREADS:-2}
WORKERS=${BENCH_WORKERS:-2}
DATABASE_URL_BENCH=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/authservice_servers}
DB_NAME=${DATABASE_URL_BENCH##*/}
PASSWORD=bench-password-123
SECRET=bench-secret-not-for-production-0123456789abcdef0123456789

WORK=$(mktemp -d /tmp/authservice-servers.XXXXXX)
RESULTS="$WORK/results.tsv"
: >"$RESULTS"

log() { printf '[servers %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
trap stop_servers EXIT
trap 'exit 130' INT TERM
command -v wrk >/dev/null || die "wrk is missing: bash bench/run.sh installs it (apt-get install wrk)"

log "fresh database $DB_NAME, migrate, seed"
timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$DATABASE_URL_BENCH" || die "could not create the database"
# shellcheck disable=SC2046
timeout 300 env $(ours_env 8000 "$DATABASE_URL_BENCH") "$PYTHON" manage.py migrate --noinput >"$WORK/migrate.log" 2>&1 \
    || die "migrate failed (see $WORK/migrate.log)"
# shellcheck disable=SC2046
timeout 300 env $(ours_env 8000 "$DATABASE_URL_BENCH") "$PYTHON" "$HERE/seed.py" --out "$WORK" --password "$PASSWORD" >&2 \
    || die "seeding failed"

for server in $LIST; do
    port=$(free_port)
    log "starting $server ($WORKERS workers) on 127.0.0.1:$port"
    # shellcheck disable=SC2046,SC2086
    start_server "$server" "$port" $(ours_env "$port" "$DATABASE_URL_BENCH" $(ours_server_env "$server")) -- $(ours_command "$server" "$port")
    timeout 60 "$PYTHON" "$HERE/check.py" get-session "http://127.0.0.1:$port" "$WORK/cookies.txt" "$WORK/emails.txt" \
        || die "$server does not answer get-session as expected"
done
for server in $LIST; do
    run_wrk "$server" "$DB_NAME" get_session.lua 2 "$WORK/warmup-$server.txt" BENCH_COOKIES="$WORK/cookies.txt"
done

order=($LIST)
for round in $(seq 1 "$ROUNDS"); do
    for endpoint in $ENDPOINTS; do
        for server in "${order[@]}"; do
            script=${endpoint//-/_}.lua
            out="$WORK/wrk-$endpoint-$server-$round.txt"
            load=$(load_average)
            log "round $round: $endpoint on $server (load average $load)"
            run_wrk "$server" "$DB_NAME" "$script" "$DURATION" "$out" BENCH_COOKIES="$WORK/cookies.txt"
            printf '%s\t%s\t%s\t%s\t%s\n' "$endpoint" "$server" "$round" "$load" \
                "$("$PYTHON" "$HERE/report.py" parse "$out" "$out.cpu.json")" >>"$RESULTS"
        done
    done
    # Reverse the order for the next round, so that a drift of the machine favours no server.
    reversed=(); for ((i = ${#order[@]} - 1; i >= 0; i--)); do reversed+=("${order[i]}"); done; order=("${reversed[@]}")
done
stop_servers

echo
echo "## Servers: get-session and /ok, taking turns"
echo
echo "$(nproc) CPUs, $WORKERS processes per server, PostgreSQL, wrk -t$THREADS -c$CONNECTIONS, $ROUNDS x ${DURATION}s per row" \
     "and server, AUTH_RATE_LIMIT=false. $(granian --version 2>/dev/null || true)"
echo
"$PYTHON" "$HERE/turns_report.py" "$RESULTS"
echo
log "raw wrk output and server logs in $WORK"
