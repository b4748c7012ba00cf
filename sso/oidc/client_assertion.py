"""``private_key_jwt`` client authentication for the token request (RFC 7523 §2.2, OIDC Core §9).

The private key is never stored on the provider row. It comes, in this order, from
``AUTHSERVICE_SSO["resolve_private_key"]`` (a dotted path of ``resolve_private_key(provider=)``
returning ``(key_id, pem, algorithm)``, any of them ``None``) or from the provider's entry in
``AUTHSERVICE_SSO["default_sso"]`` (``oidc_config.privateKey``). The key ID and algorithm fall back
to the provider's ``privateKeyId`` and ``privateKeyAlgorithm``, then to no ``kid`` and ``RS256``.

The assertion is a JWT with ``iss`` = ``sub`` = the client ID, ``aud`` = the token endpoint, a fresh
``jti`` and a 60-second lifetime.
"""

import logging
import time

import jwt

from authservice.tokens import random_string
from sso import app_settings

logger = logging.getLogger("sso")

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# Asymmetric only: an HMAC "private key" would be the client secret under another name.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
LIFETIME = 60


class KeyUnavailable(Exception):
    """No usable private key: ``error`` is the callback's error_description."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def _default_sso_key(provider):
    for item in app_settings.default_sso:
        if (item.get("provider_id") or item.get("providerId")) != provider.provider_id:
            continue
        config = item.get("oidc_config") or item.get("oidcConfig") or {}
        if config.get("privateKey"):
            return config.get("privateKeyId"), config["privateKey"], config.get("privateKeyAlgorithm")
    return None


def resolve(provider, config):
    """``(key_id, pem, algorithm)`` for ``provider``; raises KeyUnavailable."""
    resolver = app_settings.callable_setting(app_settings.resolve_private_key)
    try:
        found = resolver(provider=provider) if resolver else None
    except Exception:  # noqa: BLE001 - the project's hook: logged, and the sign-in fails cleanly
        logger.exception("resolve_private_key failed for SSO provider %s", provider.provider_id)
        raise KeyUnavailable("no_private_key_available") from None
    found = found or _default_sso_key(provider)
    if not found or not found[1]:
        raise KeyUnavailable("no_private_key_available")
    key_id, pem, algorithm = found
    algorithm = algorithm or config.get("privateKeyAlgorithm") or "RS256"
    if algorithm not in ALGORITHMS:
        raise KeyUnavailable("unsupported_private_key_algorithm")
    return key_id or config.get("privateKeyId"), pem, algorithm


def form_fields(provider, config, client_id, token_endpoint):
    """The two form fields that authenticate the client in the token request."""
    key_id, pem, algorithm = resolve(provider, config)
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": token_endpoint, "jti": random_string(32),
              "iat": now, "exp": now + LIFETIME}
    try:
        assertion = jwt.encode(claims, pem, algorithm=algorithm, headers={"kid": key_id} if key_id else None)
    except (ValueError, TypeError, jwt.PyJWTError):
        raise KeyUnavailable("invalid_private_key") from None
    return {"client_assertion_type": CLIENT_ASSERTION_TYPE, "client_assertion": assertion}
