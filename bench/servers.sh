#!/usr/bin/env bash
# Which server should run the example project in production? Measured, not guessed: every candidate
# serves the same database at once, and each round runs get-session and GET /api/auth/ok (no database,
# the serving layer's ceiling) against each of them in turn, the order reversed every other round.
# `bash bench/servers.sh`. See bench/README.md ("Choosing the server").
#
# SERVERS_ENDPOINTS may also name saml-acs: SP-initiated SAML sign-ins (bench/saml_acs.lua). Each round
# first signs SERVERS_SAML_PER_RUN responses per server through the first server (all of them share its
# AUTH_BASE_URL, which the responses' Destination names, and the database holding the AuthnRequests),
# then every server gets its own share: no response is posted twice.
#
# Knobs (environment): SERVERS_LIST ("granian-wsgi-1t granian-wsgi-4t granian-asgi gunicorn-sync gunicorn-gthread
# uvicorn": lib.sh has their command lines),
# SERVERS_ENDPOINTS ("get-session ok"), SERVERS_SAML_PER_RUN (200 x BENCH_DURATION), BENCH_ROUNDS (3),
# BENCH_DURATION (s per run, 5),
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
SAML_PER_RUN=${SERVERS_SAML_PER_RUN:-$((200 * DURATION))}
saml_wanted() { [[ " $ENDPOINTS " == *" saml-acs "* ]]; }

log() { printf '[servers %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"
trap stop_servers EXIT
trap 'exit 130' INT TERM
command -v wrk >/dev/null || die "wrk is missing: bash bench/run.sh installs it (apt-get install wrk)"

saml_seed=() shared_base=()
if saml_wanted; then
    command -v xmlsec1 >/dev/null && command -v openssl >/dev/null \
        || die "xmlsec1 and openssl are missing: bash bench/run.sh installs them"
    mkdir -p "$WORK/saml"
    timeout 60 openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj /CN=idp.bench.test \
        -keyout "$WORK/saml/idp.key" -out "$WORK/saml/idp.crt" >"$WORK/saml/openssl.log" 2>&1 \
        || die "openssl could not make the IdP key"
    saml_seed=(--saml-cert "$WORK/saml/idp.crt")
    first_port=$(free_port)
    shared_base=(AUTH_BASE_URL="http://127.0.0.1:$first_port")
fi

# sign_saml COUNT OUT CHECK_OUT: COUNT fresh SP-initiated responses, through the first server.
sign_saml() {
    timeout 900 "$PYTHON" "$HERE/saml_pool.py" "http://127.0.0.1:$first_port" --emails "$WORK/emails.txt" \
        --key "$WORK/saml/idp.key" --cert "$WORK/saml/idp.crt" --count "$1" --out "$2" --check-out "$3" \
        || die "could not make the SAML responses"
}

log "fresh database $DB_NAME, migrate, seed"
timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$DATABASE_URL_BENCH" || die "could not create the database"
# shellcheck disable=SC2046
timeout 300 env $(ours_env 8000 "$DATABASE_URL_BENCH") "$PYTHON" manage.py migrate --noinput >"$WORK/migrate.log" 2>&1 \
    || die "migrate failed (see $WORK/migrate.log)"
# shellcheck disable=SC2046
timeout 300 env $(ours_env 8000 "$DATABASE_URL_BENCH") "$PYTHON" "$HERE/seed.py" --out "$WORK" --password "$PASSWORD" \
    "${saml_seed[@]}" >&2 || die "seeding failed"

for server in $LIST; do
    port=$(free_port)
    saml_wanted && [ -z "${SERVER_PID[*]}" ] && port=$first_port
    log "starting $server ($WORKERS workers) on 127.0.0.1:$port"
    # shellcheck disable=SC2046,SC2086
    start_server "$server" "$port" $(ours_env "$port" "$DATABASE_URL_BENCH" $(ours_server_env "$server") "${shared_base[@]}") \
        -- $(ours_command "$server" "$port")
    timeout 60 "$PYTHON" "$HERE/check.py" get-session "http://127.0.0.1:$port" "$WORK/cookies.txt" "$WORK/emails.txt" \
        || die "$server does not answer get-session as expected"
done
if saml_wanted; then
    # Every server must really sign the user in, not merely answer: one checked response each.
    count=$(wc -w <<<"$LIST")
    sign_saml "$count" "$WORK/saml-check-pool.txt" "$WORK/saml-check-0.txt"
    i=0
    while IFS= read -r line; do
        server=$(cut -d' ' -f$((i + 1)) <<<"$LIST")
        printf '%s\n' "$line" >"$WORK/saml-check-$server.txt"
        timeout 60 "$PYTHON" "$HERE/check.py" saml "http://127.0.0.1:${SERVER_PORT[$server]}" "$WORK/saml-check-$server.txt" \
            || die "$server does not sign in through the SAML ACS"
        i=$((i + 1))
    done <"$WORK/saml-check-pool.txt"
fi
for server in $LIST; do
    run_wrk "$server" "$DB_NAME" get_session.lua 2 "$WORK/warmup-$server.txt" BENCH_COOKIES="$WORK/cookies.txt"
done

order=($LIST)
for round in $(seq 1 "$ROUNDS"); do
    for endpoint in $ENDPOINTS; do
        if [ "$endpoint" = saml-acs ]; then
            # Signed right before the runs (AuthnRequests expire after 5 minutes), split by server.
            log "round $round: signing $SAML_PER_RUN SAML responses per server"
            sign_saml $((SAML_PER_RUN * ${#order[@]})) "$WORK/saml-round.txt" "$WORK/saml-round-check.txt"
            i=0
            for server in "${order[@]}"; do
                sed -n "$((i * SAML_PER_RUN + 1)),$(((i + 1) * SAML_PER_RUN))p" "$WORK/saml-round.txt" >"$WORK/saml-$server.txt"
                i=$((i + 1))
            done
        fi
        for server in "${order[@]}"; do
            script=${endpoint//-/_}.lua
            out="$WORK/wrk-$endpoint-$server-$round.txt"
            load=$(load_average)
            log "round $round: $endpoint on $server (load average $load)"
            run_wrk "$server" "$DB_NAME" "$script" "$DURATION" "$out" BENCH_COOKIES="$WORK/cookies.txt" \
                BENCH_SAML_POOL="$WORK/saml-$server.txt"
            if grep -q "SAML pool used up" "$out"; then
                log "round $round: $server used up its SAML responses before ${DURATION}s: raise SERVERS_SAML_PER_RUN"
            fi
            printf '%s\t%s\t%s\t%s\t%s\n' "$endpoint" "$server" "$round" "$load" \
                "$("$PYTHON" "$HERE/report.py" parse "$out" "$out.cpu.json")" >>"$RESULTS"
        done
    done
    # Reverse the order for the next round, so that a drift of the machine favours no server.
    reversed=(); for ((i = ${#order[@]} - 1; i >= 0; i--)); do reversed+=("${order[i]}"); done; order=("${reversed[@]}")
done
stop_servers

echo
echo "## Servers: $ENDPOINTS, taking turns"
echo
echo "$(nproc) CPUs, $WORKERS processes per server, PostgreSQL, wrk -t$THREADS -c$CONNECTIONS, $ROUNDS x ${DURATION}s per row" \
     "and server, AUTH_RATE_LIMIT=false. $(granian --version 2>/dev/null || true)"
echo
"$PYTHON" "$HERE/turns_report.py" "$RESULTS"
echo
log "raw wrk output and server logs in $WORK"
