#!/bin/sh
# Installs Debian's SimpleSAMLphp and the PHP CLI extensions it needs under `php -S`, for
# tests/sso/saml/test_simplesamlphp.py. Idempotent; run as root (or through sudo) on Debian/Ubuntu.
# php-xml provides DOMDocument (SimpleSAMLphp fails with "Class DOMDocument not found" without it).
set -eu
if command -v php >/dev/null 2>&1 && [ -f /usr/share/simplesamlphp/www/saml2/idp/SSOService.php ] \
   && php -m | grep -qx dom && php -m | grep -qx mbstring; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends simplesamlphp php-cli php-xml php-mbstring php-curl openssl xmlsec1
