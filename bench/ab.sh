#!/usr/bin/env bash
# A/B: the same endpoints against this checkout ("new") and a base commit ("base"), taking turns.
# `bash bench/ab.sh [BASE_COMMIT]` (73f15ac, the commit before issue 13). See bench/README.md.
#
# Absolute req/s on a shared VM moves 20-30 % within a day, so the two builds are compared within one
# run: both servers stay up side by side (an idle one costs nothing) and each round runs every
# endpoint of either build once, the order reversed every other round so a drift favours neither.
# The CPU time of the server per request (cpu.py) is the figure that other load barely moves.
#
# Knobs (environment): AB_PAIRS ("get-session:get-session me:get-session": new endpoint:base endpoint;
# the base has no /me/, so the middleware path is compared with the base's get-session), AB_ROUNDS (5),
# AB_BASE_DIR (the base's worktree, made with `git worktree add --detach` if missing),
# BENCH_DATABASE_URL (a database name prefix: _base and _new are appended), BENCH_DURATION (s per run, 8),
# BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_WORKERS (2), BENCH_IDLE_WAIT (10), PYTHON.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"

BASE_COMMIT=${1:-73f15ac}
PYTHON=${PYTHON:-python}
PAIRS=${AB_PAIRS:-get-session:get-session me:get-session}
ROUNDS=${AB_ROUNDS:-5}
BASE_DIR=${AB_BASE_DIR:-/tmp/authservice-bench-base-$BASE_COMMIT}
DATABASE_PREFIX=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/authservice_bench_ab}
DURATION=${BENCH_DURATION:-8}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
THREADS=${BENCH_THREADS:-2}
WORKERS=${BENCH_WORKERS:-2}
IDLE_WAIT=${BENCH_IDLE_WAIT:-10}
PASSWORD=bench-password-123
SECRET=bench-secret-not-for-production-0123456789abcdef0123456789

WORK=$(mktemp -d /tmp/authservice-ab.XXXXXX)
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
declare -A SERVER_PID PORT DIR

log() { printf '[ab %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

cleanup() {
    local pid
    for pid in "${SERVER_PID[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${SERVER_PID[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v wrk >/dev/null || die "wrk is missing: bash bench/run.sh installs it (apt-get install wrk)"

# The base's own tree: its code, its migrations, its seed script.
if [ ! -e "$BASE_DIR/manage.py" ]; then
    log "git worktree add --detach $BASE_DIR $BASE_COMMIT"
    git worktree add --detach "$BASE_DIR" "$BASE_COMMIT" >&2
fi
[ "$(git -C "$BASE_DIR" rev-parse HEAD)" = "$(git rev-parse "$BASE_COMMIT^{commit}")" ] \
    || die "$BASE_DIR is not at $BASE_COMMIT"
DIR[base]=$BASE_DIR
DIR[new]=$ROOT

free_port() {
    "$PYTHON" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
}

service_env() {
    local side=$1
    echo DJANGO_SETTINGS_MODULE=project.settings DATABASE_URL="${DATABASE_PREFIX}_$side" SECRET_KEY="$SECRET" \
        DEBUG=false AUTH_RATE_LIMIT=false AUTH_BASE_URL="http://127.0.0.1:${PORT[$side]}" REDIS_URL=
}

# Fresh database, migrated and seeded by the side's own code (200 users, 1,000 sessions), then gunicorn
# run from the side's directory (`python -m` puts it first on sys.path, before any installed copy).
prepare() {
    local side=$1
    PORT[$side]=$(free_port)
    mkdir -p "$WORK/$side"
    log "[$side] $(git -C "${DIR[$side]}" log --oneline -1 | cut -c1-70): fresh database, migrate, seed"
    timeout 60 "$PYTHON" "$HERE/fresh_db.py" "${DATABASE_PREFIX}_$side" || die "could not create the database"
    # shellcheck disable=SC2046
    (cd "${DIR[$side]}" && timeout 300 env $(service_env "$side") "$PYTHON" manage.py migrate --noinput) \
        >"$WORK/$side/migrate.log" 2>&1 || die "migrate failed (see $WORK/$side/migrate.log)"
    # shellcheck disable=SC2046
    (cd "${DIR[$side]}" && timeout 300 env $(service_env "$side") "$PYTHON" bench/seed.py --out "$WORK/$side" \
        --password "$PASSWORD") >&2 || die "seeding failed"
    # shellcheck disable=SC2046
    (cd "${DIR[$side]}" && exec env $(service_env "$side") "$PYTHON" -m gunicorn project.wsgi:application \
        --workers "$WORKERS" --bind "127.0.0.1:${PORT[$side]}" --timeout 120 --graceful-timeout 5 \
        --error-logfile "$WORK/$side/gunicorn.log") &
    SERVER_PID[$side]=$!
    for _ in $(seq 1 150); do
        kill -0 "${SERVER_PID[$side]}" 2>/dev/null || die "gunicorn exited (see $WORK/$side/gunicorn.log)"
        [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:${PORT[$side]}/api/auth/ok")" = 200 ] && return
        sleep 0.2
    done
    die "[$side] gunicorn did not answer /api/auth/ok within 30 s"
}

run_wrk() {
    local side=$1 endpoint=$2 seconds=$3 out=$4 script
    case $endpoint in
        get-session) script=get_session.lua ;;
        me) script=me.lua ;;
        *) die "ab.sh runs get-session and me only, not $endpoint" ;;
    esac
    BENCH_COOKIES="$WORK/$side/cookies.txt" \
        "$PYTHON" "$HERE/cpu.py" run --server-pid "${SERVER_PID[$side]}" \
        --db "$(basename "${DATABASE_PREFIX}_$side")" --out "$out.cpu.json" -- \
        timeout $((seconds + 60)) wrk -t "$THREADS" -c "$CONNECTIONS" -d "${seconds}s" --timeout 30s --latency \
        -s "$HERE/$script" "http://127.0.0.1:${PORT[$side]}" >"$out" 2>&1 || die "wrk failed: $(cat "$out")"
}

# side:endpoint for every run of a round, each once.
RUNS=()
for pair in $PAIRS; do
    for run in "base:${pair#*:}" "new:${pair%%:*}"; do
        [[ " ${RUNS[*]} " == *" $run "* ]] || RUNS+=("$run")
    done
done

prepare base
prepare new
for run in "${RUNS[@]}"; do
    side=${run%%:*} endpoint=${run#*:}
    timeout 60 "$PYTHON" "$HERE/check.py" "$endpoint" "http://127.0.0.1:${PORT[$side]}" \
        "$WORK/$side/cookies.txt" "$WORK/$side/emails.txt" || die "[$side] $endpoint does not answer as expected"
    run_wrk "$side" "$endpoint" 3 "$WORK/warmup-$side-$endpoint.txt"
done

for round in $(seq 1 "$ROUNDS"); do
    order=("${RUNS[@]}")
    if [ $((round % 2)) = 0 ]; then
        order=()
        for ((i = ${#RUNS[@]} - 1; i >= 0; i--)); do order+=("${RUNS[$i]}"); done
    fi
    for run in "${order[@]}"; do
        side=${run%%:*} endpoint=${run#*:}
        timeout $((IDLE_WAIT + 30)) "$PYTHON" "$HERE/cpu.py" idle --max-wait "$IDLE_WAIT" >/dev/null
        log "round $round/$ROUNDS: $side $endpoint, wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s"
        out="$WORK/wrk-$round-$side-$endpoint.txt"
        run_wrk "$side" "$endpoint" "$DURATION" "$out"
        printf '%s\t%s\t%s\t%s\n' "$side" "$endpoint" "$round" "$out" >>"$RESULTS"
    done
done

echo
echo "## A/B: $(git log --oneline -1 | cut -c1-60) against $BASE_COMMIT"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, gunicorn $WORKERS sync workers, PostgreSQL," \
     "wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, $ROUNDS rounds taking turns, AUTH_RATE_LIMIT=false."
echo
"$PYTHON" "$HERE/ab_report.py" "$RESULTS" $PAIRS
echo
log "raw wrk output and server logs in $WORK"
