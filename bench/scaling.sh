#!/usr/bin/env bash
# The scaling table (issue 18 §4): one fresh PostgreSQL database per size, migrated, then bench/scaling.py
# (seeds each to N rows per table, measures every row on every size taking turns, then the cleanup row).
# Not a test; about 15 minutes for the default sizes.
#   bash bench/scaling.sh                        sizes 1000 100000 1000000
#   bash bench/scaling.sh --sizes "1000 10000"   (BENCH_SCALE_DATABASE_URL, BENCH_SCALE_ROUNDS=400,
#                                                 BENCH_SCALE_BLOCKS=8, BENCH_SCALE_KEEP=1 to change)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/.."
SIZES="1000 100000 1000000"
if [ "${1:-}" = "--sizes" ]; then SIZES=${2:?--sizes needs a list, e.g. \"1000 100000\"}; fi
PYTHON=${PYTHON:-python}
BASE=${BENCH_SCALE_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/authservice_bench_scale}
export DJANGO_SETTINGS_MODULE=project.settings SECRET_KEY=${SECRET_KEY:-bench-scale-secret-key-not-for-production}
# The rate limiter's row calls it directly; the request rows run without it, as in run.sh.
export DEBUG=false AUTH_RATE_LIMIT=false AUTH_BASE_URL=http://127.0.0.1
unset REDIS_URL
OUT=$(mktemp /tmp/authservice-scale.XXXXXX.json)
DATABASES=""
for size in ${SIZES//,/ }; do
    url="${BASE}_$size"
    DATABASES="${DATABASES:+$DATABASES,}$url"
    timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$url"
    DATABASE_URL=$url timeout 300 "$PYTHON" manage.py migrate -v0 2>/dev/null
done
echo "[scale $(date +%H:%M:%S)] sizes ${SIZES}; $(uptime)" >&2
export DATABASE_URL=${DATABASES%%,*}
timeout 3000 "$PYTHON" "$HERE/scaling.py" --sizes "${SIZES// /,}" --databases "$DATABASES" \
    --rounds "${BENCH_SCALE_ROUNDS:-400}" --blocks "${BENCH_SCALE_BLOCKS:-8}" --out "$OUT"
echo "[scale $(date +%H:%M:%S)] done; $(uptime); raw figures in $OUT" >&2
# 10^6 rows per table take about 3 GB: dropped unless BENCH_SCALE_KEEP=1 (to look at plans by hand).
if [ "${BENCH_SCALE_KEEP:-0}" != 1 ]; then
    for url in ${DATABASES//,/ }; do
        "$PYTHON" -c 'import sys, psycopg
from urllib.parse import urlsplit
url = urlsplit(sys.argv[1])
with psycopg.connect(url._replace(path="/postgres").geturl(), autocommit=True) as conn:
    conn.execute("DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)" % url.path.lstrip("/"))' "$url"
    done
fi
