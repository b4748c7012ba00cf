# Helpers shared by compare.sh and servers.sh (sourced, not run): start and stop the servers under
# test, each in its own process group so that stopping one stops its workers, and run wrk under cpu.py.
# The caller sets HERE, ROOT, WORK, PYTHON, THREADS, CONNECTIONS and defines log/die.

declare -A SERVER_PID SERVER_PORT

free_port() {
    "$PYTHON" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
}

# Our service's environment (the same as run.sh's service_env), plus extra VAR=value words.
ours_env() {
    local port=$1 db=$2; shift 2
    echo DJANGO_SETTINGS_MODULE=project.settings DATABASE_URL="$db" SECRET_KEY="$SECRET" \
        DEBUG=false AUTH_RATE_LIMIT=false AUTH_BASE_URL="http://127.0.0.1:$port" REDIS_URL= "$@"
}

# The command line of each server we can run the example project under, with WORKERS processes.
ours_command() {
    local server=$1 port=$2
    case $server in
        # granian-wsgi-<n>t: n Python threads per worker (granian-wsgi: BENCH_GRANIAN_THREADS, 2). Each
        # thread keeps its own database connection, and granian's default allows hundreds of threads:
        # under 32 connections PostgreSQL (max_connections 100, shared) would refuse clients.
        granian-wsgi|granian-wsgi-*t)
            local threads=${BENCH_GRANIAN_THREADS:-2}
            [ "$server" = granian-wsgi ] || { threads=${server#granian-wsgi-}; threads=${threads%t}; }
            echo "$PYTHON -m granian --interface wsgi --host 127.0.0.1 --port $port --workers $WORKERS \
            --blocking-threads $threads --no-ws --log-level warning project.wsgi:application" ;;
        # At most 8 requests at once per worker: under ASGI each one opens its own database connection.
        granian-asgi) echo "$PYTHON -m granian --interface asgi --host 127.0.0.1 --port $port --workers $WORKERS \
            --backpressure 8 --no-ws --log-level warning project.asgi:application" ;;
        gunicorn-sync) echo "$PYTHON -m gunicorn project.wsgi:application --workers $WORKERS --bind 127.0.0.1:$port \
            --timeout 120 --graceful-timeout 5" ;;
        gunicorn-gthread) echo "$PYTHON -m gunicorn project.wsgi:application --workers $WORKERS --bind 127.0.0.1:$port \
            --worker-class gthread --threads 4 --timeout 120 --graceful-timeout 5" ;;
        uvicorn) echo "$PYTHON -m uvicorn project.asgi:application --host 127.0.0.1 --port $port --workers $WORKERS \
            --no-access-log --log-level warning --lifespan off" ;;
        *) die "unknown server $server" ;;
    esac
}

# Extra environment of a server. Under ASGI, Django runs each synchronous view in a thread of its own
# request context, so persistent connections would pile up, one per thread, until PostgreSQL refuses
# more ("too many clients"): Django's documentation asks for CONN_MAX_AGE=0 there.
ours_server_env() {
    case $1 in granian-asgi|uvicorn) echo CONN_MAX_AGE=0 ;; esac
}

# start_server NAME PORT ENV_WORDS -- COMMAND...: runs it in a new session (setsid) and waits for /ok.
start_server() {
    local name=$1 port=$2; shift 2
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    setsid env "${envs[@]}" "$@" >"$WORK/server-$name.log" 2>&1 &
    SERVER_PID[$name]=$!
    SERVER_PORT[$name]=$port
    for _ in $(seq 1 150); do
        kill -0 "${SERVER_PID[$name]}" 2>/dev/null || die "$name exited (see $WORK/server-$name.log)"
        if [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/api/auth/ok")" = 200 ]; then
            return
        fi
        sleep 0.2
    done
    die "$name did not answer /api/auth/ok within 30 s (see $WORK/server-$name.log)"
}

stop_servers() {
    local name pid
    for name in "${!SERVER_PID[@]}"; do
        kill -TERM -- "-${SERVER_PID[$name]}" 2>/dev/null || true
    done
    for name in "${!SERVER_PID[@]}"; do
        pid=${SERVER_PID[$name]}
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL -- "-$pid" 2>/dev/null || true
        unset "SERVER_PID[$name]"
    done
}

# run_wrk NAME DB SCRIPT SECONDS OUT [ENV_WORDS...]: wrk against server NAME, under cpu.py (the
# server's process tree and the PostgreSQL backends of database DB).
run_wrk() {
    local name=$1 db=$2 script=$3 seconds=$4 out=$5; shift 5
    env "$@" BENCH_RUN_ID="$name-$(date +%s%N)" BENCH_THREADS="$THREADS" \
        "$PYTHON" "$HERE/cpu.py" run --server-pid "${SERVER_PID[$name]}" --db "$db" --out "$out.cpu.json" -- \
        timeout $((seconds + 60)) wrk -t "$THREADS" -c "$CONNECTIONS" -d "${seconds}s" --timeout 30s --latency \
        -s "$HERE/$script" "http://127.0.0.1:${SERVER_PORT[$name]}" >"$out" 2>&1 || die "wrk failed: $(cat "$out")"
}

# The 1-minute load average, as `uptime` prints it.
load_average() { cut -d' ' -f1 /proc/loadavg; }
