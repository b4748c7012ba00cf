#!/usr/bin/env bash
# Load-test get-session, the example project's /me/ (the middleware path), sign-in, sign-up and the SAML ACS
# under granian (BENCH_SERVER=gunicorn: gunicorn) on PostgreSQL, without and with Redis.
# One command: `bash bench/run.sh`. See bench/README.md for what it does and what the figures mean.
#
# Knobs (environment): BENCH_DURATION (s per run, 15), BENCH_CONNECTIONS (32), BENCH_THREADS (2),
# BENCH_WORKERS (server workers, 2), BENCH_SERVER (granian, or gunicorn), BENCH_GRANIAN_THREADS (2),
# BENCH_GUNICORN_ARGS (extra gunicorn flags), BENCH_WSGI
# (the WSGI application, project.wsgi:application), BENCH_DATABASE_URL,
# BENCH_REDIS_URL, BENCH_MODES ("plain redis"), BENCH_ENDPOINTS ("get-session me sign-in sign-up saml-acs"),
# BENCH_HASH_SECONDS (8; 0 skips the hash ceiling), BENCH_IDLE_WAIT (s to wait for a quiet machine before each run, 60),
# BENCH_SAML_POOL (signed SAMLResponses made before the ACS run, 2500; 1200 at most for -c1), PYTHON.
# An endpoint name ending in -c1 runs with one connection: latency without queueing.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"

PYTHON=${PYTHON:-python}
DURATION=${BENCH_DURATION:-15}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
THREADS=${BENCH_THREADS:-2}
WORKERS=${BENCH_WORKERS:-2}
SERVER=${BENCH_SERVER:-granian}
GRANIAN_THREADS=${BENCH_GRANIAN_THREADS:-2}
DATABASE_URL_BENCH=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/authservice_bench}
REDIS_URL_BENCH=${BENCH_REDIS_URL:-redis://127.0.0.1:6379/14}
MODES=${BENCH_MODES:-plain redis}
ENDPOINTS=${BENCH_ENDPOINTS:-get-session me sign-in sign-up saml-acs saml-acs-c1}
SAML_POOL=${BENCH_SAML_POOL:-2500}
HASH_SECONDS=${BENCH_HASH_SECONDS:-8}
IDLE_WAIT=${BENCH_IDLE_WAIT:-60}
DB_NAME=${DATABASE_URL_BENCH##*/}
PASSWORD=bench-password-123
SECRET=bench-secret-not-for-production-0123456789abcdef0123456789

WORK=$(mktemp -d /tmp/authservice-bench.XXXXXX)
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
SERVER_PID=""
REDIS_STARTED=""

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

cleanup() {
    stop_server
    if [ -n "$REDIS_STARTED" ]; then
        timeout 10 redis-cli -p "$REDIS_STARTED" shutdown nosave >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

# --- what the benchmark needs ------------------------------------------------------------------
ensure_wrk() {
    command -v wrk >/dev/null && return
    log "installing wrk"
    if ! timeout 300 $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y wrk >"$WORK/apt.log" 2>&1; then
        timeout 300 $SUDO apt-get update >>"$WORK/apt.log" 2>&1 || true
        timeout 300 $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y wrk >>"$WORK/apt.log" 2>&1 \
            || die "could not install wrk (see $WORK/apt.log)"
    fi
}

ensure_python_packages() {
    "$PYTHON" -c "import django, environ, rest_framework, argon2, gunicorn, granian, psycopg, redis" 2>/dev/null && return
    log "installing requirements.txt"
    timeout 600 "$PYTHON" -m pip install -q -r requirements.txt || die "pip install -r requirements.txt failed"
}

# The SAML ACS run signs its responses with xmlsec1, as the tests do, with a key made by openssl.
ensure_saml_tools() {
    command -v xmlsec1 >/dev/null && command -v openssl >/dev/null && return
    log "installing xmlsec1 and openssl"
    timeout 300 $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y xmlsec1 openssl >>"$WORK/apt.log" 2>&1 \
        || die "could not install xmlsec1 (see $WORK/apt.log)"
}

# The IdP's key and certificate: made for this run, in its temporary directory, never committed.
make_saml_keys() {
    mkdir -p "$WORK/saml"
    timeout 60 openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj /CN=idp.bench.test \
        -keyout "$WORK/saml/idp.key" -out "$WORK/saml/idp.crt" >"$WORK/saml/openssl.log" 2>&1 \
        || die "openssl could not make the IdP key (see $WORK/saml/openssl.log)"
}

saml_wanted() { case " $ENDPOINTS " in *" saml-acs"*) return 0 ;; *) return 1 ;; esac; }

redis_ping() {
    timeout 10 "$PYTHON" -c "import redis, sys; redis.Redis.from_url(sys.argv[1], socket_timeout=3).ping()" \
        "$REDIS_URL_BENCH" 2>/dev/null
}

# Redis: reachable, or started here (and shut down at the end), or that mode is skipped.
ensure_redis() {
    redis_ping && return 0
    local port
    port=$("$PYTHON" -c "import sys; from urllib.parse import urlsplit; print(urlsplit(sys.argv[1]).port or 6379)" "$REDIS_URL_BENCH")
    if ! command -v redis-server >/dev/null; then
        log "installing redis-server"
        timeout 300 $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server >>"$WORK/apt.log" 2>&1 || true
    fi
    if command -v redis-server >/dev/null; then
        log "starting redis-server on port $port"
        redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes >/dev/null \
            && REDIS_STARTED=$port
        for _ in $(seq 1 25); do redis_ping && return 0; sleep 0.2; done
    fi
    return 1
}

free_port() {
    "$PYTHON" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
}

# --- one configuration -------------------------------------------------------------------------
# Environment of everything that touches the service: the server, migrate and the seed script.
service_env() {
    local port=$1 redis=$2
    echo DJANGO_SETTINGS_MODULE=project.settings DATABASE_URL="$DATABASE_URL_BENCH" SECRET_KEY="$SECRET" \
        DEBUG=false AUTH_RATE_LIMIT=false AUTH_BASE_URL="http://127.0.0.1:$port" REDIS_URL="$redis"
}

start_server() {
    local port=$1 redis=$2 mode=$3
    if [ "$SERVER" = gunicorn ]; then
        # shellcheck disable=SC2046,SC2086
        env $(service_env "$port" "$redis") "$PYTHON" -m gunicorn "${BENCH_WSGI:-project.wsgi:application}" \
            --workers "$WORKERS" --bind "127.0.0.1:$port" --timeout 120 --graceful-timeout 5 \
            --error-logfile "$WORK/gunicorn-$mode.log" ${BENCH_GUNICORN_ARGS:-} &
    else
        # The production command of the README (chosen by bench/servers.sh): granian, WSGI, a few
        # Python threads per worker (each keeps one database connection).
        # shellcheck disable=SC2046,SC2086
        env $(service_env "$port" "$redis") "$PYTHON" -m granian --interface wsgi --host 127.0.0.1 --port "$port" \
            --workers "$WORKERS" --blocking-threads "$GRANIAN_THREADS" --no-ws --log-level warning \
            "${BENCH_WSGI:-project.wsgi:application}" >"$WORK/granian-$mode.log" 2>&1 &
    fi
    SERVER_PID=$!
    for _ in $(seq 1 150); do
        kill -0 "$SERVER_PID" 2>/dev/null || die "$SERVER exited (see $WORK/$SERVER-$mode.log)"
        if [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/api/auth/ok")" = 200 ]; then
            return
        fi
        sleep 0.2
    done
    die "$SERVER did not answer /api/auth/ok within 30 s"
}

run_wrk() {
    local port=$1 endpoint=$2 seconds=$3 out=$4
    local script url="http://127.0.0.1:$port" threads=$THREADS connections=$CONNECTIONS
    case $endpoint in *-c1) endpoint=${endpoint%-c1} threads=1 connections=1 ;; esac
    case $endpoint in
        get-session) script=get_session.lua ;;
        me) script=me.lua ;;
        sign-in) script=sign_in.lua ;;
        sign-up) script=sign_up.lua ;;
        saml-acs) script=saml_acs.lua ;;
        *) die "unknown endpoint $endpoint" ;;
    esac
    BENCH_COOKIES="$WORK/cookies.txt" BENCH_EMAILS="$WORK/emails.txt" BENCH_PASSWORD="$PASSWORD" \
        BENCH_RUN_ID="$(date +%s%N)" BENCH_SAML_POOL="$WORK/saml-pool.txt" BENCH_THREADS="$threads" \
        "$PYTHON" "$HERE/cpu.py" run --server-pid "$SERVER_PID" --db "$DB_NAME" --out "$out.cpu.json" -- \
        timeout $((seconds + 60)) wrk -t "$threads" -c "$connections" -d "${seconds}s" --timeout 30s --latency \
        -s "$HERE/$script" "$url" >"$out" 2>&1 || die "wrk failed: $(cat "$out")"
}

# Made right before the ACS run: the AuthnRequests it answers expire after 5 minutes. One response
# goes to check.py, which must see a real sign-in before wrk's figures can mean anything.
make_saml_pool() {
    local port=$1 count=$2
    log "signing $count SAML responses (one AuthnRequest each, through /sign-in/sso)"
    timeout 600 "$PYTHON" "$HERE/saml_pool.py" "http://127.0.0.1:$port" --emails "$WORK/emails.txt" \
        --key "$WORK/saml/idp.key" --cert "$WORK/saml/idp.crt" --count "$count" \
        --out "$WORK/saml-pool.txt" --check-out "$WORK/saml-check.txt" || die "could not make the SAML responses"
    timeout 60 "$PYTHON" "$HERE/check.py" saml "http://127.0.0.1:$port" "$WORK/saml-check.txt" \
        || die "the SAML ACS does not sign in"
}

# A second job on the machine skews everything: wait (bounded) for it to calm down, and say so.
wait_quiet() {
    local load
    load=$(timeout $((IDLE_WAIT + 30)) "$PYTHON" "$HERE/cpu.py" idle --max-wait "$IDLE_WAIT")
    if awk -v l="$load" 'BEGIN { exit !(l >= 0.25) }'; then
        log "machine busy ($load cores used by other processes) after ${IDLE_WAIT}s: figures will be low"
    fi
}

run_mode() {
    local mode=$1 redis=""
    if [ "$mode" = redis ]; then
        if ! ensure_redis; then
            log "Redis unreachable at $REDIS_URL_BENCH: skipping the Redis runs"
            return
        fi
        redis=$REDIS_URL_BENCH
        timeout 10 "$PYTHON" -c "import redis, sys; redis.Redis.from_url(sys.argv[1]).flushdb()" "$redis"
    fi
    local label=${redis:-unset}
    local port
    port=$(free_port)
    log "[$mode] fresh database, migrate, seed"
    timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$DATABASE_URL_BENCH" || die "could not create the database"
    # shellcheck disable=SC2046
    timeout 300 env $(service_env "$port" "$redis") "$PYTHON" manage.py migrate --noinput >"$WORK/migrate.log" 2>&1 \
        || die "migrate failed (see $WORK/migrate.log)"
    local saml_seed=()
    saml_wanted && saml_seed=(--saml-cert "$WORK/saml/idp.crt")
    # shellcheck disable=SC2046
    timeout 300 env $(service_env "$port" "$redis") "$PYTHON" "$HERE/seed.py" --out "$WORK" --password "$PASSWORD" \
        "${saml_seed[@]}" >&2 || die "seeding failed"
    log "[$mode] $SERVER, $WORKERS workers, on 127.0.0.1:$port"
    start_server "$port" "$redis" "$mode"
    timeout 120 "$PYTHON" "$HERE/check.py" "http://127.0.0.1:$port" "$WORK/cookies.txt" "$WORK/emails.txt" \
        "$PASSWORD" "$mode-$(date +%s%N)" || die "the service does not answer as expected"
    if [[ " $ENDPOINTS " == *" me "* ]]; then
        timeout 60 "$PYTHON" "$HERE/check.py" me "http://127.0.0.1:$port" "$WORK/cookies.txt" "$WORK/emails.txt" \
            || die "/me/ does not answer the seeded user"
    fi
    # Warm-up: connections opened, code paths and the database's caches hot.
    run_wrk "$port" get-session 3 "$WORK/warmup.txt"
    for endpoint in $ENDPOINTS; do
        case $endpoint in
            saml-acs) make_saml_pool "$port" "$SAML_POOL" ;;
            saml-acs-c1) make_saml_pool "$port" $((SAML_POOL < 1200 ? SAML_POOL : 1200)) ;;
        esac
        wait_quiet
        log "[$mode] $endpoint: wrk$(case $endpoint in *-c1) echo " -t1 -c1" ;; *) echo " -t$THREADS -c$CONNECTIONS" ;; esac) -d${DURATION}s"
        local out="$WORK/wrk-$mode-$endpoint.txt"
        run_wrk "$port" "$endpoint" "$DURATION" "$out"
        printf '%s\t%s\t%s\n' "$label" "$endpoint" "$("$PYTHON" "$HERE/report.py" parse "$out" "$out.cpu.json")" \
            >>"$RESULTS"
        if grep -q "SAML pool used up" "$out"; then
            log "[$mode] $endpoint: the SAML pool ran out before ${DURATION}s: raise BENCH_SAML_POOL"
        fi
    done
    stop_server
}

# --- main --------------------------------------------------------------------------------------
ensure_wrk
ensure_python_packages
command -v curl >/dev/null || die "curl is required"
if saml_wanted; then
    ensure_saml_tools
    make_saml_keys
fi

if [ "$HASH_SECONDS" != 0 ]; then
    log "password-hash ceiling: make_password in 1 and 2 processes, ${HASH_SECONDS}s each"
    wait_quiet
    HASH1=$(timeout $((HASH_SECONDS * 2 + 120)) "$PYTHON" "$HERE/hash_ceiling.py" --processes 1 --seconds "$HASH_SECONDS")
    wait_quiet
    HASH2=$(timeout $((HASH_SECONDS * 2 + 120)) "$PYTHON" "$HERE/hash_ceiling.py" --processes 2 --seconds "$HASH_SECONDS")
else
    HASH1="1 0 0 0 0" HASH2="2 0 0 0 0"
fi
CEILING=$(echo "$HASH2" | awk '{print $4}')
HASH_MS=$(echo "$HASH2" | awk '{print $5}')

for mode in $MODES; do
    run_mode "$mode"
done

HASHER=$("$PYTHON" -c "
import os, sys; sys.path.insert(0, '.'); os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'project.settings')
import django; django.setup()
from django.contrib.auth.hashers import get_hasher
h = get_hasher()
print(f'{h.algorithm} (time_cost={h.time_cost}, memory_cost={h.memory_cost} KiB, parallelism={h.parallelism})')
" 2>/dev/null || echo unknown)

echo
echo "## authservice benchmark"
echo
echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)," \
     "$(if [ "$SERVER" = gunicorn ]; then echo "gunicorn $WORKERS workers ${BENCH_GUNICORN_ARGS:-(sync)}"; else echo "granian WSGI $WORKERS workers x $GRANIAN_THREADS threads"; fi), PostgreSQL, wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, AUTH_RATE_LIMIT=false."
echo
"$PYTHON" "$HERE/report.py" table "$RESULTS" "$CEILING" "$HASH_MS"
echo
echo "Password-hash ceiling, $HASHER:"
echo "$HASH1" | awk '{printf "- 1 process:   %.1f hashes/s, %.0f CPU ms per hash\n", $4, $5}'
echo "$HASH2" | awk '{printf "- 2 processes: %.1f hashes/s, %.0f CPU ms per hash (the ceiling for sign-in and sign-up)\n", $4, $5}'
awk -F'\t' -v c="$CEILING" 'c > 0 && ($2 == "sign-in" || $2 == "sign-up") {
    printf "- %s (REDIS_URL %s): %.1f req/s = %.0f %% of the ceiling\n", $2, $1, $4, 100 * $4 / c }' "$RESULTS"
echo
log "raw wrk output and server logs in $WORK"
