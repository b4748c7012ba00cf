"""The algorithm policy (sso.md §5 "Algorithms", option ``saml.algorithms``).

Applied to the configured ``signatureAlgorithm``/``digestAlgorithm`` at registration and to the
algorithms a response actually uses at the ACS. An allow-list, when set, replaces the
deprecated/secure classes for its kind.
"""

import logging

from sso import app_settings

logger = logging.getLogger("sso")

DSIG = "http://www.w3.org/2000/09/xmldsig#"
DSIG_MORE = "http://www.w3.org/2001/04/xmldsig-more#"
XMLENC = "http://www.w3.org/2001/04/xmlenc#"
XMLENC11 = "http://www.w3.org/2009/xmlenc11#"

SIGNATURE, DIGEST, KEY_ENCRYPTION, DATA_ENCRYPTION = "signature", "digest", "key_encryption", "data_encryption"

DEPRECATED = {
    SIGNATURE: {DSIG + "rsa-sha1", DSIG + "dsa-sha1", DSIG_MORE + "ecdsa-sha1"},
    DIGEST: {DSIG + "sha1"},
    KEY_ENCRYPTION: {XMLENC + "rsa-1_5"},
    DATA_ENCRYPTION: {XMLENC + "tripledes-cbc"},
}
SECURE = {
    SIGNATURE: {DSIG_MORE + name for name in ("rsa-sha256", "rsa-sha384", "rsa-sha512", "ecdsa-sha256",
                                              "ecdsa-sha384", "ecdsa-sha512")},
    DIGEST: {XMLENC + "sha256", XMLENC + "sha512", DSIG_MORE + "sha384"},
    KEY_ENCRYPTION: {XMLENC + "rsa-oaep-mgf1p", XMLENC11 + "rsa-oaep"},
    DATA_ENCRYPTION: {XMLENC + "aes128-cbc", XMLENC + "aes192-cbc", XMLENC + "aes256-cbc",
                      XMLENC11 + "aes128-gcm", XMLENC11 + "aes192-gcm", XMLENC11 + "aes256-gcm"},
}
SHORT_NAMES = {  # what admins type in samlConfig.signatureAlgorithm / digestAlgorithm
    "sha1": {SIGNATURE: DSIG + "rsa-sha1", DIGEST: DSIG + "sha1"},
    "sha256": {SIGNATURE: DSIG_MORE + "rsa-sha256", DIGEST: XMLENC + "sha256"},
    "sha384": {SIGNATURE: DSIG_MORE + "rsa-sha384", DIGEST: DSIG_MORE + "sha384"},
    "sha512": {SIGNATURE: DSIG_MORE + "rsa-sha512", DIGEST: XMLENC + "sha512"},
}
ALLOW_LIST_SETTING = {
    SIGNATURE: "allowed_signature_algorithms", DIGEST: "allowed_digest_algorithms",
    KEY_ENCRYPTION: "allowed_key_encryption_algorithms", DATA_ENCRYPTION: "allowed_data_encryption_algorithms",
}
# Transforms and c14n methods also carry an Algorithm attribute but are not policy-relevant.


class AlgorithmRefused(Exception):
    """``error`` is the ACS redirect's error; ``code`` the registration error code."""

    def __init__(self, error, code, message):
        super().__init__(message)
        self.error, self.code, self.message = error, code, message


def expand(kind, value):
    """A URI for ``value``, accepting the short names ``sha1``/``sha256``/... ."""
    if not isinstance(value, str):
        return value
    return SHORT_NAMES.get(value.strip().lower(), {}).get(kind, value.strip())


def check(kind, uri, *, where="response"):
    """Apply the policy to one algorithm URI; raises AlgorithmRefused, logs a warning for ``warn``."""
    uri = expand(kind, uri)
    allowed = getattr(app_settings.saml.algorithms, ALLOW_LIST_SETTING[kind])
    label = kind.replace("_", " ")
    if allowed:
        if uri not in [expand(kind, item) for item in allowed]:
            raise AlgorithmRefused("saml_algorithm_not_allowed", "SAML_ALGORITHM_NOT_ALLOWED",
                                   f"SAML {label} algorithm not allowed: {uri}")
        return
    if uri in DEPRECATED[kind]:
        policy = app_settings.saml.algorithms.on_deprecated
        if policy == "reject":
            code = "SAML_DEPRECATED_CONFIG_ALGORITHM" if where == "config" else "SAML_DEPRECATED_ALGORITHM"
            raise AlgorithmRefused("saml_deprecated_algorithm", code,
                                   f"SAML {label} algorithm is deprecated: {uri}")
        if policy == "warn":
            logger.warning("SAML %s uses the deprecated %s algorithm %s", where, label, uri)
        return
    if uri not in SECURE[kind]:
        raise AlgorithmRefused("saml_unknown_algorithm", "SAML_UNKNOWN_ALGORITHM",
                               f"Unknown SAML {label} algorithm: {uri}")


def check_all(found, *, where="response"):
    """``found`` = (signatures, digests, key transports, data encryptions) as lists of URIs."""
    for kind, uris in zip((SIGNATURE, DIGEST, KEY_ENCRYPTION, DATA_ENCRYPTION), found, strict=True):
        for uri in dict.fromkeys(uris):
            check(kind, uri, where=where)
