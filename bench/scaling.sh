#!/usr/bin/env bash
# The scaling table (issue 18 §4): for each size, a fresh PostgreSQL database, migrate, then
# bench/scaling.py (seed N rows per table, measure every row in-process). Not a test.
#   bash bench/scaling.sh                      sizes 1000 100000 1000000 (about 15 minutes)
#   bash bench/scaling.sh --sizes "1000 10000"  BENCH_SCALE_DATABASE_URL, BENCH_SCALE_ROUNDS (400) to change
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/.."
SIZES="1000 100000 1000000"
if [ "${1:-}" = "--sizes" ]; then SIZES=${2:?--sizes needs a list, e.g. \"1000 100000\"}; fi
PYTHON=${PYTHON:-python}
export DATABASE_URL=${BENCH_SCALE_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/authservice_bench_scale}
export DJANGO_SETTINGS_MODULE=project.settings SECRET_KEY=${SECRET_KEY:-bench-scale-secret-key-not-for-production}
# The rate limiter's own row calls it directly; off for the request rows, as in run.sh.
export DEBUG=false AUTH_RATE_LIMIT=false AUTH_BASE_URL=http://127.0.0.1
unset REDIS_URL
OUT=$(mktemp /tmp/authservice-scale.XXXXXX.jsonl)
for size in ${SIZES//,/ }; do
    echo "[scale $(date +%H:%M:%S)] N=$size: fresh database; $(uptime)" >&2
    timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$DATABASE_URL"
    timeout 300 "$PYTHON" manage.py migrate -v0 2>/dev/null
    timeout 1200 "$PYTHON" "$HERE/scaling.py" --size "$size" --rounds "${BENCH_SCALE_ROUNDS:-400}" --out "$OUT" >/dev/null
done
echo "[scale $(date +%H:%M:%S)] done; raw results in $OUT" >&2
"$PYTHON" "$HERE/scaling.py" --report "$OUT"
