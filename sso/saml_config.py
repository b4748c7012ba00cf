"""SAML provider configuration: the checks run at register and update, and certificate summaries.

Only the basics live here for now (metadata size, entry point, certificate source, PEM parsing); the
SAML protocol itself (AuthnRequest, ACS, algorithm policy, SP metadata) is the next issue and plugs
into :func:`validate` and the ``samlConfig`` JSON stored on :class:`sso.models.SsoProvider`.
"""

import base64
import binascii
import hashlib
import re

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import Encoding

from authservice import origins
from authservice.errors import APIError, validation_error
from sso import app_settings
from sso.errors import codes, metadata_too_large_message

_PEM_BLOCK = re.compile(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", re.DOTALL)
_KEY_TYPES = ((rsa.RSAPublicKey, "RSA"), (ec.EllipticCurvePublicKey, "EC"), (dsa.DSAPublicKey, "DSA"),
              (ed25519.Ed25519PublicKey, "ED25519"), (ed448.Ed448PublicKey, "ED448"))


# SP private keys (security.md I6): loading an RSA key validates it, which grows steeply with its size
# (8192 bits: seconds), and pysaml2/xmlsec sign and decrypt with it on anonymous requests.
MAX_RSA_KEY_BITS = 4096
EC_CURVES = ("secp256r1", "secp384r1", "secp521r1")


def private_key_refusal(key):
    """Why a parsed private key is not accepted as an SP key (None when it is): RSA of at most
    MAX_RSA_KEY_BITS bits, or EC on P-256, P-384 or P-521."""
    if isinstance(key, rsa.RSAPrivateKey):
        return None if key.key_size <= MAX_RSA_KEY_BITS else f"an RSA key of {key.key_size} bits (at most {MAX_RSA_KEY_BITS})"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return None if key.curve.name in EC_CURVES else f"an EC key on {key.curve.name} (P-256, P-384 or P-521)"
    return f"a {type(key).__name__} (RSA or EC keys only)"


# An encrypted PKCS#8 key names its own key-derivation cost (PBKDF2 iterations, scrypt N, r and p), and
# opening it pays that cost before any password check: a 400-byte key with 3 million iterations takes
# seconds, and 2**31 hours (I6). OpenSSL writes 2048 iterations and scrypt N=16384, r=8, p=1.
MAX_KDF_ITERATIONS = 100_000
MAX_SCRYPT_WORK = 16384 * 8 * 1  # N * r * p
# To the next END line whatever its label, so no block a lenient PEM reader might open goes unchecked.
_ENCRYPTED_BLOCK = re.compile(r"-----BEGIN ENCRYPTED PRIVATE KEY-----(.*?)(?:-----END|\Z)", re.DOTALL)
_SCRYPT_OID = bytes.fromhex("2b06010401da47040b")  # 1.3.6.1.4.1.11591.4.11


def _der_items(data):
    """The (tag, value) pairs of a DER sequence's content; ValueError unless it is exactly that."""
    items, position = [], 0
    while position < len(data):
        if position + 2 > len(data):
            raise ValueError("truncated")
        tag, length = data[position], data[position + 1]
        position += 2
        if length & 0x80:  # long form; 0x80 alone is BER's indefinite length, not DER
            count = length & 0x7F
            if not 0 < count <= 4 or position + count > len(data):
                raise ValueError("bad length")
            length = int.from_bytes(data[position:position + count], "big")
            position += count
        if position + length > len(data):
            raise ValueError("truncated")
        items.append((tag, data[position:position + length]))
        position += length
    return items


def _kdf_integers(algorithm, depth=0):
    """Every INTEGER (and whether scrypt is named) anywhere in an AlgorithmIdentifier's content.
    PBES2 nests four deep; deeper input is refused rather than walked (no recursion bomb, I6)."""
    if depth > 8:
        raise ValueError("nested too deep")
    integers, scrypt = [], False
    for tag, value in _der_items(algorithm):
        if tag == 0x02:
            integers.append(int.from_bytes(value, "big", signed=True))
        elif tag == 0x06 and value == _SCRYPT_OID:
            scrypt = True
        elif tag & 0x20:  # constructed: SEQUENCE, SET or a context tag
            inner, inner_scrypt = _kdf_integers(value, depth + 1)
            integers, scrypt = integers + inner, scrypt or inner_scrypt
    return integers, scrypt


def encrypted_key_refusal(pem):
    """Why opening ``pem`` (a private key's PEM text) would cost more than a request may (None when it
    would not): every encrypted PKCS#8 block's key derivation is bounded before any load, the same
    rule at register, update and first use. A block this cannot read is refused, never tried."""
    for body in _ENCRYPTED_BLOCK.findall(pem if isinstance(pem, str) else ""):
        try:
            der = base64.b64decode("".join(line for line in body.splitlines() if ":" not in line), validate=False)
            [(tag, info)] = _der_items(der)
            algorithm = _der_items(info)[0]
            if tag != 0x30 or algorithm[0] != 0x30:
                raise ValueError("not an EncryptedPrivateKeyInfo")
            integers, scrypt = _kdf_integers(algorithm[1])
        except (ValueError, IndexError, binascii.Error):
            return "an encrypted private key whose encryption parameters cannot be read"
        if any(value > MAX_KDF_ITERATIONS or value < 0 for value in integers):
            return f"an encrypted private key derived with more than {MAX_KDF_ITERATIONS} iterations"
        if scrypt and (len(integers) < 3 or integers[0] * integers[1] * integers[2] > MAX_SCRYPT_WORK):
            return "an encrypted private key whose scrypt parameters cost more than N=16384, r=8, p=1"
    return None


# What our signers produce: pysaml2 signs AuthnRequests (saml2.sigver.SIGNER_ALGS) and
# sso.saml.slo_outbound signs logout messages, both RSA PKCS#1 v1.5 only.
SIGNABLE_ALGORITHMS = frozenset("http://www.w3.org/2000/09/xmldsig#rsa-sha1 "
                                "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256 "
                                "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384 "
                                "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512".split())
_SIGNATURE_FAMILIES = (("ecdsa-", "EC"), ("rsa-", "RSA"), ("dsa-", "DSA"))


def _key_type(key):
    if isinstance(key, rsa.RSAPrivateKey):
        return "RSA"
    return "EC" if isinstance(key, ec.EllipticCurvePrivateKey) else type(key).__name__


def signing_key_refusal(key, algorithm):
    """Why the SP signing ``key`` cannot make ``algorithm`` (a signature algorithm URI) signatures with
    our signers (None when it can). Decided at register and update, and again before each signature,
    so a stored configuration that cannot sign is a clean 400, never a libxmlsec1 or pysaml2 error
    escaping as a 500.

    Two conditions: the key's type is the algorithm's (RSA for rsa-*, EC for ecdsa-*), and the
    algorithm is one our signers produce (:data:`SIGNABLE_ALGORITHMS`, RSA only). An EC key with an
    ecdsa-* algorithm passes the first and fails the second: pysaml2 signs HTTP-Redirect AuthnRequests
    with RSA only, so it is refused when registered rather than at its first sign-in.
    """
    name = algorithm.rpartition("#")[2] if isinstance(algorithm, str) else ""
    family = next((kind for prefix, kind in _SIGNATURE_FAMILIES if name.startswith(prefix)), None)
    kind = _key_type(key)
    if family != kind:
        return f"an {kind} key, which cannot sign with signatureAlgorithm {algorithm!r}"
    if algorithm not in SIGNABLE_ALGORITHMS:
        return (f"an {kind} key for signatureAlgorithm {algorithm!r}, which this service cannot sign with: "
                "SAML requests and logout messages are signed with RSA keys only (rsa-sha256, rsa-sha384, "
                "rsa-sha512)")
    return None


def check_metadata_size(config):
    """``SAML_METADATA_TOO_LARGE`` for IdP or SP metadata over ``saml.max_metadata_size`` bytes."""
    if not isinstance(config, dict):
        return
    limit = app_settings.saml.max_metadata_size
    for which, key in (("IdP", "idpMetadata"), ("SP", "spMetadata")):
        metadata = (config.get(key) or {}).get("metadata") if isinstance(config.get(key), dict) else None
        if isinstance(metadata, str) and len(metadata.encode()) > limit:
            raise APIError(400, codes.SAML_METADATA_TOO_LARGE, metadata_too_large_message(which, limit))


def certificates_of(config):
    """The configured signing certificates as a list of strings: ``idpMetadata.cert ?? cert``."""
    idp = config.get("idpMetadata") if isinstance(config.get("idpMetadata"), dict) else {}
    source = idp.get("cert") if idp.get("cert") is not None else config.get("cert")
    if source is None or source == "":
        return []
    return list(source) if isinstance(source, list) else [source]


def _pem_blocks(value):
    """One or more PEM certificates; a bare base64 body (common in IdP consoles) is wrapped."""
    if not isinstance(value, str):
        return []
    blocks = _PEM_BLOCK.findall(value)
    if blocks:
        return blocks
    body = re.sub(r"\s+", "", value)
    return [f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----"] if body else []


def load_certificate(value):
    """A parsed :class:`x509.Certificate` or ``None``."""
    blocks = _pem_blocks(value)
    if not blocks:
        return None
    try:
        return x509.load_pem_x509_certificate(blocks[0].encode())
    except ValueError:
        return None


def _openssl_time(value):
    return value.strftime("%b ") + f"{value.day:>2}" + value.strftime(" %H:%M:%S %Y GMT")


def certificate_summary(value):
    """``{fingerprintSha256, notBefore, notAfter, publicKeyAlgorithm}`` or ``{error}`` (sso.md §2)."""
    cert = load_certificate(value)
    if cert is None:
        return {"error": "Failed to parse certificate"}
    der = cert.public_bytes(Encoding.DER)
    digest = hashlib.sha256(der).hexdigest().upper()
    key = cert.public_key()
    algorithm = next((name for kind, name in _KEY_TYPES if isinstance(key, kind)), "UNKNOWN")
    return {
        "fingerprintSha256": ":".join(digest[i:i + 2] for i in range(0, len(digest), 2)),
        "notBefore": _openssl_time(cert.not_valid_before_utc),
        "notAfter": _openssl_time(cert.not_valid_after_utc),
        "publicKeyAlgorithm": algorithm,
    }


IDP_METADATA_REQUIRED = "[body.samlConfig.idpMetadata] Invalid input: expected record, received undefined"
# Lists of endpoints a browser may be sent to (sso.md §2 idpMetadata).
IDP_SERVICE_LISTS = ("singleSignOnService", "singleLogoutService")
# The URL-valued keys of an endpoint, the same for the JSON services here and the metadata XML's
# attributes (sso.saml.metadata.URL_ATTRIBUTES is this tuple): one list, one rule for both paths.
# ResponseLocation is where our LogoutResponse sends the browser (slo_config.Service.target).
ENDPOINT_URL_KEYS = ("Location", "ResponseLocation")


def _url_refused(field):
    return APIError(400, codes.SAML_URL_INVALID, f"samlConfig.{field} must be an http or https URL")


def check_locations(config):
    """I4: every location of a samlConfig is http(s) and parses, as the browser will be given it.

    ``entryPoint`` and the IdP's SSO/SLO services are where a browser is sent; ``callbackUrl`` and
    ``idpInitiatedCallbackUrl`` are where it lands (an absolute http(s) URL or a path on our origin);
    ``idpMetadata.url`` is fetched by the server. Locations inside metadata XML are checked by
    :mod:`sso.saml.validation`.
    """
    if not origins.is_http_url(config.get("entryPoint")):
        raise _url_refused("entryPoint")
    idp = config.get("idpMetadata") if isinstance(config.get("idpMetadata"), dict) else {}
    for key in IDP_SERVICE_LISTS:
        services = idp.get(key)
        if services is None:
            continue
        if not isinstance(services, list):
            raise _url_refused(f"idpMetadata.{key}")
        for service in services:
            locations = [service.get(name) for name in ENDPOINT_URL_KEYS] if isinstance(service, dict) else [service]
            if any(location is not None and not origins.is_http_url(location) for location in locations):
                raise _url_refused(f"idpMetadata.{key}")
    if idp.get("url") is not None and not origins.is_http_url(idp["url"]):
        raise APIError(400, codes.SAML_METADATA_URL_INVALID)
    for key in ("callbackUrl", "idpInitiatedCallbackUrl"):
        value = config.get(key)
        if value is not None and not (origins.is_http_url(value)
                                      or (isinstance(value, str) and origins.is_safe_relative(value))):
            raise APIError(400, codes.SAML_URL_INVALID,
                           f"samlConfig.{key} must be an http or https URL or a path on this origin")


def validate(config):
    """The register/update checks of a ``samlConfig`` (the basics; SAML proper is the next issue)."""
    if not config.get("entryPoint"):
        raise APIError(400, codes.SAML_ENTRY_POINT_REQUIRED)
    idp = config.get("idpMetadata")
    if not isinstance(idp, dict):
        # sso.md §2: idpMetadata is required. Without it nothing names the IdP, so nothing pins the
        # Issuer of a response: any holder of the certificate's key could speak for any entity.
        raise validation_error(IDP_METADATA_REQUIRED)
    if not (idp.get("metadata") or idp.get("entityID")):
        raise APIError(400, codes.SAML_IDP_ENTITY_ID_REQUIRED)
    check_locations(config)
    certificates = certificates_of(config)
    has_metadata_xml = bool(idp.get("metadata"))
    if not certificates and not has_metadata_xml:
        raise APIError(400, codes.CERT_SOURCE_MISSING)
    for value in certificates:
        if load_certificate(value) is None:
            raise APIError(400, codes.SAML_INVALID_CERTIFICATE)
