"""The SAML half of ``samlConfig`` validation at register and update (sso.md §2 "SAML config").

``validate(config)`` runs after the basic checks of ``sso.saml_config.validate`` (entry point, certificate
source, PEM parsing): metadata XML, SP keys and the algorithm policy. Every problem is a 400 with a
code, never a 500.

Metadata XML, IdP or SP, given or fetched, passes :func:`check_metadata_document`: nothing outside the
SAML family of namespaces (I3: SP metadata is served from the auth origin) and every URL-valued node
(``sso.saml.metadata.URL_ATTRIBUTES``/``URL_ELEMENTS``: endpoint locations, OrganizationURL, mdui URLs
and logos) http(s), contact addresses mailto: (I4: a browser, or an IdP console, follows them).
"""

from cryptography.hazmat.primitives import serialization

from authservice.errors import APIError
from sso.errors import codes
from sso.saml import algorithms, metadata, xml
from sso.saml.config import DEFAULT_SIGNATURE, Settings
from sso.saml_config import encrypted_key_refusal, load_certificate, private_key_refusal, signing_key_refusal
from sso.stored import as_dict, as_str

INVALID_IDP_METADATA = "Invalid IdP metadata: expected an EntityDescriptor with an IDPSSODescriptor"


def check_metadata_document(text, root, which):
    """Refuse foreign content (SAML_METADATA_FOREIGN_CONTENT) and non-http(s) endpoint locations
    (SAML_URL_INVALID) in parsed metadata ``root``; ``which`` is "idpMetadata" or "spMetadata"."""
    found = metadata.foreign_content(text, root)
    if found is not None:
        raise APIError(400, codes.SAML_METADATA_FOREIGN_CONTENT,
                       f"samlConfig.{which}.metadata holds {found}, which is not SAML metadata")
    for element in root.iter():
        found = metadata.bad_url(element)  # the one list of URL-valued nodes, attributes and elements
        if found is not None:
            raise APIError(400, codes.SAML_URL_INVALID,
                           f"samlConfig.{which}.metadata: {found} must be an http or https URL"
                           + (" (or a mailto: address)" if found == "EmailAddress" else ""))


def check_idp_metadata(text):
    """The checks every IdP metadata document passes, given or fetched (register, update, refresh)."""
    try:
        root = xml.parse(text)
    except xml.XmlRefused:
        raise APIError(400, codes.SAML_CONFIG_INVALID, INVALID_IDP_METADATA) from None
    check_metadata_document(text, root, "idpMetadata")
    return root


def _check_idp_metadata(config):
    text = as_dict(config.get("idpMetadata")).get("metadata")
    if not text:
        return
    root = check_idp_metadata(text)
    descriptors = list(root.iter(xml.q(xml.MD, "IDPSSODescriptor")))
    if not descriptors:
        raise APIError(400, codes.SAML_CONFIG_INVALID, INVALID_IDP_METADATA)
    for certificate in root.iter(xml.q(xml.DS, "X509Certificate")):
        if load_certificate(xml.text_of(certificate)) is None:
            raise APIError(400, codes.SAML_INVALID_CERTIFICATE,
                           "idpMetadata.metadata holds a certificate that is not valid")


def _check_sp_metadata(config):
    text = as_dict(config.get("spMetadata")).get("metadata")
    if not text:
        return
    try:
        root = xml.parse(text)
    except xml.XmlRefused:
        raise APIError(400, codes.SAML_INVALID_SP_METADATA) from None
    # Served from the auth origin (sso.md §5): an EntityDescriptor of our own SP, nothing else.
    descriptor = root.find(xml.q(xml.MD, "SPSSODescriptor"))
    if root.tag != xml.q(xml.MD, "EntityDescriptor") or descriptor is None:
        raise APIError(400, codes.SAML_INVALID_SP_METADATA)
    check_metadata_document(text, root, "spMetadata")
    declared = descriptor.get("WantAssertionsSigned")
    if declared is not None and "wantAssertionsSigned" in config \
            and (declared.strip().lower() == "true") != bool(config["wantAssertionsSigned"]):
        raise APIError(400, codes.SAML_SP_METADATA_ASSERTION_SIGNATURE_MISMATCH)


def _check_sp_certificates(config):
    # Private keys are checked when first used (a bad one answers SAML_CONFIG_INVALID there).
    sp = as_dict(config.get("spMetadata"))
    for label in ("signingCert", "cert", "encryptCert", "encCert"):
        if sp.get(label) and load_certificate(sp[label]) is None:
            raise APIError(400, codes.SAML_INVALID_CERTIFICATE, f"spMetadata.{label} is not a valid PEM certificate")


# Where samlConfig may hold SP private keys (sso.saml.config.Settings reads the same places).
SP_KEY_FIELDS = (("spMetadata", "privateKey"), (None, "privateKey"), ("spMetadata", "encPrivateKey"),
                 ("idpMetadata", "encPrivateKey"))


SP_SIGNING_KEY_FIELDS = (("spMetadata", "privateKey"), (None, "privateKey"))


def _signature_algorithm(config):
    return algorithms.expand(algorithms.SIGNATURE, as_str(config.get("signatureAlgorithm")) or DEFAULT_SIGNATURE)


def _passwords(config, section, field):
    """Every password a reader of this key field may open it with: the one stored next to it, and the
    one :class:`sso.saml.config.Settings` hands the signer or decrypter (``spMetadata.privateKeyPass or
    privateKeyPass``, ...). Checking with the first only let an EC key encrypted under the other be
    "left to its first use" and stored (tests/security/test_attack14_social_sp_key_shapes.py)."""
    holder = as_dict(config.get(section)) if section else config
    settings = Settings(None, config)
    used = settings.signing_key_pass if (section, field) in SP_SIGNING_KEY_FIELDS else settings.encryption_key_pass
    # As the readers turn them into bytes (sso.saml.config._private_key): any stored JSON value.
    return list(dict.fromkeys(str(password) if password else None
                              for password in (holder.get(f"{field}Pass"), used, None)))


def _parsed_keys(pem, passwords):
    """The keys ``pem`` loads as under each of ``passwords`` (an unvalidated parse: cheap, I6)."""
    keys = []
    for password in passwords:
        try:
            keys.append(serialization.load_pem_private_key(
                pem.encode(), password.encode() if password else None, unsafe_skip_rsa_key_validation=True))
        except (ValueError, TypeError):
            continue
    return keys


def _check_sp_key_sizes(config):
    """SAML_CONFIG_INVALID for an SP private key over the size bound (RSA over 4096 bits, EC off
    P-256/384/521): every anonymous sign-in start or ACS request would sign or decrypt with it, and
    loading validates it (seconds at 8192 bits; security.md I6). A signing key must also be of the
    signatureAlgorithm's type (an EC key cannot make RSA-SHA256 signatures: every SLO answer and
    signed AuthnRequest would fail). The key is read from an unvalidated parse, with every password a
    reader may use; a key that loads under none is still left to its first use (a clean
    SAML_CONFIG_INVALID there)."""
    for section, field in SP_KEY_FIELDS:
        holder = as_dict(config.get(section)) if section else config
        pem = holder.get(field)
        if not isinstance(pem, str) or not pem:
            continue
        where = f"{section}.{field}" if section else field
        refusal = encrypted_key_refusal(pem)  # before any parse: opening it pays its KDF cost (I6)
        if refusal:
            raise APIError(400, codes.SAML_CONFIG_INVALID, f"samlConfig.{where} is {refusal}")
        for key in _parsed_keys(pem, _passwords(config, section, field)):
            refusal = private_key_refusal(key)
            if refusal is None and (section, field) in SP_SIGNING_KEY_FIELDS:
                refusal = signing_key_refusal(key, _signature_algorithm(config))
            if refusal:
                raise APIError(400, codes.SAML_CONFIG_INVALID, f"samlConfig.{where} is {refusal}")


def _check_algorithms(config):
    for kind, key in ((algorithms.SIGNATURE, "signatureAlgorithm"), (algorithms.DIGEST, "digestAlgorithm")):
        value = config.get(key)
        if value is None:
            continue
        try:
            algorithms.check(kind, value, where="config")
        except algorithms.AlgorithmRefused as refused:
            raise APIError(400, getattr(codes, refused.code), refused.message) from None


def validate(config):
    """Raise a coded 400 APIError when ``config`` (a samlConfig dict) cannot work."""
    _check_idp_metadata(config)
    _check_sp_metadata(config)
    _check_sp_certificates(config)
    _check_sp_key_sizes(config)
    _check_algorithms(config)
