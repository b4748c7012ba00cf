#!/usr/bin/env bash
# The "sign-in + TOTP" row: a fresh PostgreSQL database, migrate, then bench/two_factor.py twice
# (the project's argon2, then MD5 to see the added cost without the hash's noise). Not a test.
#   bash bench/two_factor.sh            (BENCH_2FA_ROUNDS=60, BENCH_2FA_DATABASE_URL to change)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/.."
PYTHON=${PYTHON:-python}
export DATABASE_URL=${BENCH_2FA_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/authservice_bench_2fa}
export DJANGO_SETTINGS_MODULE=project.settings SECRET_KEY=${SECRET_KEY:-bench-two-factor-secret-key-not-for-production}
export DEBUG=false AUTH_RATE_LIMIT=false AUTH_TWO_FACTOR=true AUTH_BASE_URL=http://127.0.0.1
timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$DATABASE_URL"
timeout 300 "$PYTHON" manage.py migrate -v0
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 900 "$PYTHON" "$HERE/two_factor.py" --rounds "${BENCH_2FA_ROUNDS:-60}"
timeout 60 "$PYTHON" "$HERE/fresh_db.py" "$DATABASE_URL"
timeout 300 "$PYTHON" manage.py migrate -v0
timeout 300 "$PYTHON" "$HERE/two_factor.py" --rounds "${BENCH_2FA_ROUNDS:-60}" --fast-hash
