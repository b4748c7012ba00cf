#!/usr/bin/env bash
# Installs what the tests need outside pip, only what is missing; safe to run again and again.
#   - tests/js/node_modules (npm ci), again whenever package-lock.json changed
#   - tests/js/passkey/node_modules likewise (the passkey client test's own better-auth 1.7.6)
#   - Debian's chromium (the browser test; Playwright's own browser download cannot work here)
#   - xmlsec1 (SAML signatures)
#   - a Redis server answering on 127.0.0.1:6379 (the multi-process tests' Redis variant)
#   - Debian's SimpleSAMLphp with the PHP extensions it needs under `php -S` (SAML interop)
set -euo pipefail
cd "$(dirname "$0")/.."

apt_updated=0
apt_install() {
    if [ "$apt_updated" = 0 ]; then
        echo "install_peers: apt-get update"
        apt-get update -qq
        apt_updated=1
    fi
    echo "install_peers: apt-get install -y $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

stamp=tests/js/node_modules/.package-lock.sha256
lock_hash=$(sha256sum tests/js/package-lock.json | cut -d' ' -f1)
if [ ! -d tests/js/node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
    echo "install_peers: npm ci --prefix tests/js"
    npm ci --prefix tests/js --no-audit --no-fund
    echo "$lock_hash" > "$stamp"
else
    echo "install_peers: tests/js/node_modules is current"
fi

# The passkey browser test's own pinned packages (@better-auth/passkey 1.7.6 needs better-auth 1.7.6).
stamp=tests/js/passkey/node_modules/.package-lock.sha256
lock_hash=$(sha256sum tests/js/passkey/package-lock.json | cut -d' ' -f1)
if [ ! -d tests/js/passkey/node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
    echo "install_peers: npm ci --prefix tests/js/passkey"
    npm ci --prefix tests/js/passkey --no-audit --no-fund
    echo "$lock_hash" > "$stamp"
else
    echo "install_peers: tests/js/passkey/node_modules is current"
fi

if [ -x /usr/bin/chromium ]; then echo "install_peers: chromium is installed"; else apt_install chromium; fi
if command -v xmlsec1 >/dev/null; then echo "install_peers: xmlsec1 is installed"; else apt_install xmlsec1; fi
if command -v php >/dev/null && [ -f /usr/share/simplesamlphp/www/saml2/idp/SSOService.php ] \
   && php -m | grep -qx dom && php -m | grep -qx mbstring; then
    echo "install_peers: simplesamlphp is installed"
else
    # php-xml gives DOMDocument, without which SimpleSAMLphp fails at its first request.
    apt_install --no-install-recommends simplesamlphp php-cli php-xml php-mbstring php-curl
fi
if command -v redis-server >/dev/null; then echo "install_peers: redis-server is installed"; else apt_install redis-server; fi

if [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ]; then
    echo "install_peers: Redis answers on 127.0.0.1:6379"
else
    echo "install_peers: starting redis-server on 127.0.0.1:6379"
    redis-server --bind 127.0.0.1 --port 6379 --daemonize yes --save "" --appendonly no
    for _ in $(seq 1 50); do
        [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = "PONG" ] && break
        sleep 0.1
    done
fi
