#!/usr/bin/env bash
# Our service against better-auth 1.7.25 (bench/reference/) on Bun 1.4.4 and on Node, in one run,
# taking turns: get-session, sign-in and sign-up, with both cookie caches off and with both on.
# `bash bench/compare.sh`. See bench/README.md ("Against better-auth").
#
# Every server is up for the whole run (an idle one costs nothing); each round runs every row against
# every side once, the order of the sides reversed every other round, so a drift of the shared machine
# favours no side. The ratio ours / theirs within the run is the figure that counts: absolute req/s on
# these machines move 20-30 % within a day. Each run records the 1-minute load average.
#
# Knobs (environment): CMP_RUNTIMES ("bun node"), CMP_ROWS ("get-session sign-in sign-up"),
# CMP_CACHES ("off on"), CMP_OURS_SERVER (granian-wsgi; see lib.sh for the others), BENCH_ROUNDS (3),
# BENCH_DURATION (s per run, 5), BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_WORKERS (2: our
# workers, and the reference's processes), BENCH_DATABASE_URL (ours:
# postgres://postgres@127.0.0.1:5432/authservice_compare), REF_DATABASE_URL (theirs:
# .../better_auth_compare), REF_POOL (PostgreSQL connections per reference process, 4: the
# database is shared and allows 100), NODE (node), PYTHON.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"

PYTHON=${PYTHON:-python}
NODE=${NODE:-node}
RUNTIMES=${CMP_RUNTIMES:-bun node}
ROWS=${CMP_ROWS:-get-session sign-in sign-up}
CACHES=${CMP_CACHES:-off on}
OURS_SERVER=${CMP_OURS_SERVER:-granian-wsgi}
ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-5}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
THREADS=${BENCH_THREADS:-2}
WORKERS=${BENCH_WORKERS:-2}
OURS_DB_URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/authservice_compare}
REF_DB_URL=${REF_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/better_auth_compare}
PASSWORD=bench-password-123
SECRET=bench-secret-not-for-production-0123456789abcdef0123456789
REF=$HERE/reference
BUN=$REF/node_modules/.bin/bun

WORK=$(mktemp -d /tmp/authservice-compare.XXXXXX)
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
mkdir -p "$WORK/ours" "$WORK/ref"

log() { printf '[compare %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
trap stop_servers EXIT
trap 'exit 130' INT TERM

command -v wrk >/dev/null || die "wrk is missing: bash bench/run.sh installs it (apt-get install wrk)"
# better-auth, pg and Bun from the npm registry alone, at the versions package-lock.json pins.
if [ ! -x "$BUN" ] || [ ! -d "$REF/node_modules/better-auth" ]; then
    log "npm ci in bench/reference"
    (cd "$REF" && timeout 600 npm ci --no-audit --no-fund >"$WORK/npm.log" 2>&1) || die "npm ci failed (see $WORK/npm.log)"
fi
[[ " $RUNTIMES " != *" node "* ]] || command -v "$NODE" >/dev/null || die "node is missing"

ref_env() {
    local port=$1 cache=$2
    echo REF_DATABASE_URL="$REF_DB_URL" REF_SECRET="$SECRET" REF_BASE_URL="http://127.0.0.1:$port" \
        REF_PORT="$port" REF_WORKERS="$WORKERS" REF_POOL="${REF_POOL:-4}" REF_PASSWORD="$PASSWORD" REF_COOKIE_CACHE="$cache" NODE_ENV=production
}
cache_flag() { [ "$1" = on ] && echo true || echo false; }

log "ours: fresh database, migrate, seed"
timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$OURS_DB_URL" || die "could not create our database"
# shellcheck disable=SC2046
timeout 300 env $(ours_env 8000 "$OURS_DB_URL") "$PYTHON" manage.py migrate --noinput >"$WORK/migrate.log" 2>&1 \
    || die "migrate failed (see $WORK/migrate.log)"
# shellcheck disable=SC2046
timeout 300 env $(ours_env 8000 "$OURS_DB_URL") "$PYTHON" "$HERE/seed.py" --out "$WORK/ours" --password "$PASSWORD" >&2 \
    || die "seeding ours failed"
log "better-auth: fresh database, its migrations, seed"
timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$REF_DB_URL" || die "could not create the reference's database"
# shellcheck disable=SC2046
timeout 120 env $(ref_env 8000 false) "$BUN" "$REF/migrate.mjs" >"$WORK/ref-migrate.log" 2>&1 \
    || die "better-auth's migrations failed (see $WORK/ref-migrate.log)"
# shellcheck disable=SC2046
timeout 120 env $(ref_env 8000 false) "$BUN" "$REF/seed.mjs" "$WORK/ref" >&2 || die "seeding the reference failed"

# Side names: ours, bun, node; server names: <side>-<cache>.
SIDES="ours $RUNTIMES"
for cache in $CACHES; do
    for side in $SIDES; do
        name=$side-$cache
        port=$(free_port)
        log "starting $name on 127.0.0.1:$port"
        case $side in
            # shellcheck disable=SC2046,SC2086
            ours) start_server "$name" "$port" $(ours_env "$port" "$OURS_DB_URL" $(ours_server_env "$OURS_SERVER") \
                      AUTH_SESSION_COOKIE_CACHE="$(cache_flag "$cache")") -- $(ours_command "$OURS_SERVER" "$port") ;;
            # shellcheck disable=SC2046
            bun) start_server "$name" "$port" $(ref_env "$port" "$(cache_flag "$cache")") -- "$BUN" "$REF/server.mjs" ;;
            # shellcheck disable=SC2046
            node) start_server "$name" "$port" $(ref_env "$port" "$(cache_flag "$cache")") -- "$NODE" "$REF/server.mjs" ;;
        esac
        files=$WORK/ref; [ "$side" = ours ] && files=$WORK/ours
        timeout 120 "$PYTHON" "$HERE/check.py" "http://127.0.0.1:$port" "$files/cookies.txt" "$files/emails.txt" \
            "$PASSWORD" "$name-$(date +%s%N)" || die "$name does not answer as expected"
        if [ "$cache" = on ]; then
            timeout 120 "$PYTHON" "$HERE/prime_cookies.py" "http://127.0.0.1:$port" "$files/cookies.txt" \
                "$WORK/primed-$name.txt" || die "$name sets no cookie cache"
        fi
    done
done

db_of() { case $1 in ours-*) echo "${OURS_DB_URL##*/}" ;; *) echo "${REF_DB_URL##*/}" ;; esac; }
files_of() { case $1 in ours-*) echo "$WORK/ours" ;; *) echo "$WORK/ref" ;; esac; }

# One run of ROW on server NAME: the cache-on get-session gets freshly primed cookies (the caches expire).
measure() {
    local row=$1 name=$2 seconds=$3 out=$4 cookies script files
    files=$(files_of "$name")
    cookies=$files/cookies.txt
    if [[ $name == *-on && $row == get-session ]]; then
        timeout 120 "$PYTHON" "$HERE/prime_cookies.py" "http://127.0.0.1:${SERVER_PORT[$name]}" "$cookies" \
            "$WORK/primed-$name.txt" || die "$name sets no cookie cache"
        cookies=$WORK/primed-$name.txt
    fi
    script=${row//-/_}.lua
    run_wrk "$name" "$(db_of "$name")" "$script" "$seconds" "$out" BENCH_COOKIES="$cookies" \
        BENCH_EMAILS="$files/emails.txt" BENCH_PASSWORD="$PASSWORD"
}

log "warm-up: get-session, 2 s on each server"
for name in "${!SERVER_PID[@]}"; do
    measure get-session "$name" 2 "$WORK/warmup-$name.txt"
done

order=($SIDES)
for round in $(seq 1 "$ROUNDS"); do
    # Rows in the order given (get-session first), each with caches off then on.
    for row in $ROWS; do
        for cache in $CACHES; do
            for side in "${order[@]}"; do
                name=$side-$cache
                out="$WORK/wrk-$row-$name-$round.txt"
                load=$(load_average)
                log "round $round: $row, caches $cache, $side (load average $load)"
                measure "$row" "$name" "$DURATION" "$out"
                printf '%s\t%s\t%s\t%s\t%s\n' "$row, caches $cache" "$side" "$round" "$load" \
                    "$("$PYTHON" "$HERE/report.py" parse "$out" "$out.cpu.json")" >>"$RESULTS"
                # The server still hashes the passwords of the requests it accepted before wrk stopped:
                # let it finish, or the next run pays for them.
                timeout 90 "$PYTHON" "$HERE/cpu.py" drain --server-pid "${SERVER_PID[$name]}" --max-wait 60 >/dev/null
            done
        done
    done
    reversed=(); for ((i = ${#order[@]} - 1; i >= 0; i--)); do reversed+=("${order[i]}"); done; order=("${reversed[@]}")
done
stop_servers

versus=()
for runtime in $RUNTIMES; do versus+=(--versus "$runtime"); done
echo
echo "## Against better-auth 1.7.25, taking turns"
echo
echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), PostgreSQL $(psql --version 2>/dev/null | awk '{print $3}')," \
     "wrk -t$THREADS -c$CONNECTIONS, $ROUNDS x ${DURATION}s per row and side. ours: $OURS_SERVER, $WORKERS workers;" \
     "bun: Bun $("$BUN" --version), $WORKERS processes; node: Node $("$NODE" --version 2>/dev/null), $WORKERS processes."
echo
"$PYTHON" "$HERE/turns_report.py" "$RESULTS" --baseline ours "${versus[@]}"
echo
log "raw wrk output and server logs in $WORK"
