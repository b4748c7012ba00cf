"""Signing keys and ID tokens for the stub providers."""

import base64
import json
import time

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa


def _b64(number, size=None):
    raw = number.to_bytes(size or (number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class RsaKey:
    def __init__(self, kid):
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwk(self):
        numbers = self.private.public_key().public_numbers()
        return {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256",
                "n": _b64(numbers.n), "e": _b64(numbers.e)}

    def sign(self, claims, headers=None, alg="RS256"):
        return jwt.encode(claims, self.private, algorithm=alg, headers={"kid": self.kid, **(headers or {})})


class EcKey(RsaKey):
    def __init__(self, kid):
        self.kid = kid
        self.private = ec.generate_private_key(ec.SECP256R1())

    def jwk(self):
        numbers = self.private.public_key().public_numbers()
        return {"kty": "EC", "kid": self.kid, "crv": "P-256", "use": "sig",
                "x": _b64(numbers.x, 32), "y": _b64(numbers.y, 32)}

    def sign(self, claims, headers=None, alg="ES256"):
        return super().sign(claims, headers, alg)


def claims(issuer, audience, sub="stub-user-1", nonce=None, lifetime=600, **extra):
    now = int(time.time())
    found = {"iss": issuer, "aud": audience, "sub": sub, "iat": now, "exp": now + lifetime}
    if nonce is not None:
        found["nonce"] = nonce
    found.update(extra)
    return found


def unsigned(claims_):
    """An ``alg: none`` token (what an attacker sends hoping for a lax verifier)."""
    def part(data):
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims_)}."
