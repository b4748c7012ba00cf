"""A software WebAuthn authenticator for the passkey tests: an EC P-256 key, attestation "none",
assertions signed the way a real authenticator signs them (WebAuthn §6.1, §6.3.3, §6.5.4).

CBOR comes from ``cbor2`` (a dependency of py_webauthn), keys and signatures from ``cryptography``.
What a test may bend, to play an attacker or a cloned device: the origin and RP ID it claims, the
challenge it signs, the signature counter and the backup flags.
"""

import base64
import hashlib
import json
import os
import struct

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

UP, UV, BE, BS, AT = 0x01, 0x04, 0x08, 0x10, 0x40
RP_ID = "127.0.0.1"  # the base URL's hostname (tests/conftest.py ORIGIN)
ORIGIN = "http://127.0.0.1:8000"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SoftAuthenticator:
    def __init__(self, rp_id, origin, backup_eligible=False):
        self.rp_id = rp_id
        self.origin = origin
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(32)
        self.counter = 0
        self.backup_eligible = backup_eligible
        self.user_handle = None

    @property
    def id(self):
        return b64url(self.credential_id)

    def _flags(self, extra=0, backup_eligible=None):
        eligible = self.backup_eligible if backup_eligible is None else backup_eligible
        return UP | UV | extra | ((BE | BS) if eligible else 0)

    def _cose_key(self):
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})

    def _client_data(self, kind, challenge, origin):
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin or self.origin,
                           "crossOrigin": False}).encode()

    def create(self, options, *, origin=None, rp_id=None):
        """The registration response (PublicKeyCredential.toJSON()) to ``options``."""
        self.user_handle = options["user"]["id"]
        rp_hash = hashlib.sha256((rp_id or self.rp_id).encode()).digest()
        attested = bytes(16) + struct.pack(">H", len(self.credential_id)) + self.credential_id + self._cose_key()
        auth_data = rp_hash + bytes([self._flags(AT)]) + struct.pack(">I", self.counter) + attested
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", options["challenge"], origin)
        return {"id": self.id, "rawId": self.id, "type": "public-key", "authenticatorAttachment": "platform",
                "clientExtensionResults": {},
                "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation),
                             "transports": ["internal"]}}

    def get(self, options, *, origin=None, rp_id=None, counter=None, backup_eligible=None):
        """The assertion (PublicKeyCredential.toJSON()) for ``options``; the counter advances by one
        unless ``counter`` sets it."""
        self.counter = self.counter + 1 if counter is None else counter
        rp_hash = hashlib.sha256((rp_id or self.rp_id).encode()).digest()
        auth_data = rp_hash + bytes([self._flags(backup_eligible=backup_eligible)]) + struct.pack(">I", self.counter)
        client_data = self._client_data("webauthn.get", options["challenge"], origin)
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"id": self.id, "rawId": self.id, "type": "public-key", "authenticatorAttachment": "platform",
                "clientExtensionResults": {},
                "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                             "signature": b64url(signature), "userHandle": self.user_handle}}


def register(client, authenticator, **body):
    """Run a registration ceremony for ``client``'s user; the verify-registration response."""
    options = client.api_get("/passkey/generate-register-options")
    assert options.status_code == 200, options.content
    return client.api_post("/passkey/verify-registration",
                           {"response": authenticator.create(options.json()), **body})


def sign_in(client, authenticator, **kwargs):
    """Run a sign-in ceremony in ``client``; ``kwargs`` bend the assertion (see SoftAuthenticator.get)."""
    options = client.api_get("/passkey/generate-authenticate-options")
    assert options.status_code == 200, options.content
    return client.api_post("/passkey/verify-authentication",
                           {"response": authenticator.get(options.json(), **kwargs)})
