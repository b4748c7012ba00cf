"""A pysaml2 SP configuration per provider, built from the database row (sso.md §2, §5, §10).

The row is read on every request, so a provider updated through another server process is seen by
the next one. A loaded configuration without private keys is kept per process, keyed by everything
it is built from (the provider's fingerprint, base URL, expected issuer and audience, clock skew):
building it is about 1.5 ms of a SAML response's ~15. One with keys is built per ``client()``
block, its keys written to a private temporary directory for that block only, because pysaml2 and
its crypto backend reads keys from files. The keys themselves are parsed and validated once per
process (``_loaded_key``): validating a large RSA key costs up to seconds (security.md I6).
"""

import contextlib
import functools
import os
import shutil
import tempfile
from dataclasses import dataclass
from urllib.parse import quote
from xml.sax.saxutils import escape, quoteattr

from cryptography.hazmat.primitives import serialization
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.client import Saml2Client
from saml2.config import SPConfig
from saml2.sigver import RSACrypto

from authservice import links
from sso import app_settings
from sso.saml import signature, xml
from sso.saml_config import (
    _pem_blocks,
    certificates_of,
    encrypted_key_refusal,
    private_key_refusal,
    signing_key_refusal,
)
from sso.stored import as_dict, as_list, as_str

EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
DEFAULT_SIGNATURE = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
DEFAULT_DIGEST = "http://www.w3.org/2001/04/xmlenc#sha256"
ACS_PATH = "/sso/saml2/callback/"
ACS_ALIAS_PATH = "/sso/saml2/sp/acs/"


def xmlsec_binary():
    return shutil.which("xmlsec1") or "/usr/bin/xmlsec1"


@dataclass
class Settings:
    """The SAML facts of one provider, read from its ``samlConfig``."""

    provider: object
    config: dict

    @classmethod
    def of(cls, provider):
        return cls(provider, dict(provider.saml_config or {}))

    @property
    def idp(self):
        return as_dict(self.config.get("idpMetadata"))

    @property
    def sp(self):
        return as_dict(self.config.get("spMetadata"))

    # --- SP ---------------------------------------------------------------------------------------
    @property
    def sp_entity_id(self):
        return as_str(self.sp.get("entityID")) or self.provider.issuer

    @property
    def audiences(self):
        """Values accepted in every AudienceRestriction: the SP entity ID, or ``audience``."""
        return [value for value in (self.sp_entity_id, as_str(self.config.get("audience"))) if value]

    @property
    def name_id_format(self):
        return as_str(self.config.get("identifierFormat")) or EMAIL_FORMAT

    @property
    def want_assertions_signed(self):
        return bool(self.config.get("wantAssertionsSigned", False))

    @property
    def authn_requests_signed(self):
        return bool(self.config.get("authnRequestsSigned", False))

    @property
    def signing_key(self):
        return self.sp.get("privateKey") or self.config.get("privateKey")

    @property
    def signing_key_pass(self):
        return self.sp.get("privateKeyPass") or self.config.get("privateKeyPass")

    @property
    def signing_cert(self):
        return self.sp.get("signingCert") or self.sp.get("cert")

    @property
    def encryption_key(self):
        return self.sp.get("encPrivateKey") or self.idp.get("encPrivateKey")

    @property
    def encryption_key_pass(self):
        return self.sp.get("encPrivateKeyPass") or self.idp.get("encPrivateKeyPass")

    @property
    def encryption_cert(self):
        return self.sp.get("encryptCert") or self.sp.get("encCert")

    @property
    def signature_algorithm(self):
        from sso.saml import algorithms

        return algorithms.expand(algorithms.SIGNATURE, as_str(self.config.get("signatureAlgorithm")) or DEFAULT_SIGNATURE)

    @property
    def digest_algorithm(self):
        from sso.saml import algorithms

        return algorithms.expand(algorithms.DIGEST, as_str(self.config.get("digestAlgorithm")) or DEFAULT_DIGEST)

    def acs_url(self, ctx=None):
        return f"{links.base(ctx)}{ACS_PATH}{quote(self.provider.provider_id, safe='')}"

    def acs_urls(self, ctx=None):
        """Every URL a Destination or bearer Recipient may name: the seed path, the alias, custom ACS."""
        provider_id = quote(self.provider.provider_id, safe="")
        urls = [self.acs_url(ctx), f"{links.base(ctx)}{ACS_ALIAS_PATH}{provider_id}"]
        urls += _custom_acs_urls(self.sp.get("metadata"))
        return list(dict.fromkeys(urls))

    # --- IdP --------------------------------------------------------------------------------------
    @property
    def idp_metadata_xml(self):
        value = self.idp.get("metadata")
        return value if isinstance(value, str) and value.strip() else None

    @property
    def idp_entity_id(self):
        """The configured IdP entity ID, else the metadata's; ``None`` when neither names one."""
        if as_str(self.idp.get("entityID")):
            return self.idp["entityID"]
        root = _idp_descriptor_root(self.idp_metadata_xml)
        return root.get("entityID") if root is not None else None

    @property
    def certificates(self):
        """PEM bodies (no armour) of every configured signing certificate (arrays allow rotation)."""
        bodies = []
        for value in certificates_of(self.config):
            for block in _pem_blocks(value):
                body = "".join(block.replace("-----BEGIN CERTIFICATE-----", "")
                               .replace("-----END CERTIFICATE-----", "").split())
                if body and body not in bodies:
                    bodies.append(body)
        return bodies

    @property
    def signing_certificates(self):
        """Base64 bodies of the certificates a response may be signed with: the configured ones,
        else the signing keys of the IdP's metadata (as pysaml2 would take them from it)."""
        return self.certificates or list(_metadata_certificates(self.idp_metadata_xml))

    def decryption_key_pem(self):
        """The SP's decryption key as unencrypted PEM bytes (None without one); raises ConfigError."""
        if not self.encryption_key:
            return None
        return _unencrypted_pem(str(self.encryption_key), self.encryption_key_pass)

    def sso_url(self):
        """The IdP's redirect SSO service, else idpMetadata.singleSignOnService, else entryPoint."""
        root = _idp_descriptor_root(self.idp_metadata_xml)
        if root is not None:
            for service in root.iter(xml.q(xml.MD, "SingleSignOnService")):
                if service.get("Binding") == BINDING_HTTP_REDIRECT and service.get("Location"):
                    return service.get("Location")
        for service in as_list(self.idp.get("singleSignOnService")):
            if isinstance(service, dict) and as_str(service.get("Location")):
                return service["Location"]
        return as_str(self.config.get("entryPoint"))

    def idp_metadata(self, issuer=None):
        """IdP metadata for pysaml2: the given XML, or one built from the entity ID, SSO URL and certs.

        ``issuer`` names the entity when no entity ID is configured: the response is then bound to
        this provider by its configured certificates alone.
        """
        if self.idp_metadata_xml and not certificates_of(self.config):
            return self.idp_metadata_xml
        entity_id = self.idp_entity_id or issuer or as_str(self.config.get("entryPoint")) or "urn:unknown-idp"
        keys = "".join(
            '<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>'
            f"{body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
            for body in self.certificates)
        location = escape(self.sso_url() or "")
        return (
            f'<md:EntityDescriptor xmlns:md="{xml.MD}" xmlns:ds="{xml.DS}" entityID={quoteattr(entity_id)}>'
            f'<md:IDPSSODescriptor protocolSupportEnumeration="{xml.SAMLP}">{keys}'
            f'<md:SingleSignOnService Binding="{BINDING_HTTP_REDIRECT}" Location="{location}"/>'
            "</md:IDPSSODescriptor></md:EntityDescriptor>")


def _idp_descriptor_root(metadata):
    """The EntityDescriptor holding an IDPSSODescriptor in ``metadata`` XML, or None."""
    if not metadata:
        return None
    try:
        root = xml.parse(metadata)
    except xml.XmlRefused:
        return None
    for entity in [root, *root.iter(xml.q(xml.MD, "EntityDescriptor"))]:
        if entity.tag == xml.q(xml.MD, "EntityDescriptor") and entity.find(xml.q(xml.MD, "IDPSSODescriptor")) is not None:
            return entity
    return None


@functools.lru_cache(maxsize=64)
def _metadata_certificates(metadata):
    root = _idp_descriptor_root(metadata)
    if root is None:
        return ()
    bodies = []
    for descriptor in root.find(xml.q(xml.MD, "IDPSSODescriptor")).findall(xml.q(xml.MD, "KeyDescriptor")):
        if descriptor.get("use") not in (None, "signing"):
            continue
        for certificate in descriptor.iter(xml.q(xml.DS, "X509Certificate")):
            body = "".join((certificate.text or "").split())
            if body and body not in bodies:
                bodies.append(body)
    return tuple(bodies)


def _unencrypted_pem(pem, password=None):
    return _private_key("encryption key", pem, password)[1]


@functools.lru_cache(maxsize=64)
def _loaded_key(pem, password):
    """``(key, unencrypted PKCS#8 PEM)`` of an SP private key, or a refusal reason (cached too).

    Loading validates an RSA key (primality checks, up to seconds for large keys), and this runs on
    anonymous requests (sign-in start, ACS): each key is loaded once per process (security.md I6).
    The size is checked first on an unvalidated parse, so a key over the bound stored before
    sso.saml.validation bounded sizes costs no validation either."""
    refusal = encrypted_key_refusal(pem)  # before any load: opening pays the key's own KDF cost (I6)
    if refusal:
        return refusal
    data, secret = pem.encode(), password.encode() if password else None
    try:
        parsed = serialization.load_pem_private_key(data, secret, unsafe_skip_rsa_key_validation=True)
        refusal = private_key_refusal(parsed)
        if refusal:
            return refusal
        key = serialization.load_pem_private_key(data, secret)
    except (ValueError, TypeError):
        return "not a usable PEM private key"
    return key, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())


def _private_key(name, pem, password=None):
    loaded = _loaded_key(str(pem), str(password) if password else None)
    if isinstance(loaded, str):
        raise ConfigError(f"{name}: {loaded}")
    return loaded


def signer_key(settings):
    """``(key, PEM)`` of the SP signing key, checked to make ``settings.signature_algorithm``
    signatures with our signers (pysaml2 for AuthnRequests, sso.saml.slo_outbound for logout
    messages); None without a key. Raises ConfigError (a 400 SAML_CONFIG_INVALID at the endpoints) for
    a key registered before sso.saml.validation compared its type, or an algorithm we cannot sign."""
    if not settings.signing_key:
        return None
    key, pem = _private_key("signing key", settings.signing_key, settings.signing_key_pass)
    algorithm = settings.signature_algorithm
    refusal = signing_key_refusal(key, algorithm)  # the type, and an algorithm our signers produce
    if refusal:
        raise ConfigError(f"signing key: {refusal}")
    return key, pem


def _custom_acs_urls(sp_metadata):
    if not isinstance(sp_metadata, str) or not sp_metadata.strip():
        return []
    try:
        root = xml.parse(sp_metadata)
    except xml.XmlRefused:
        return []
    return [service.get("Location") for service in root.iter(xml.q(xml.MD, "AssertionConsumerService"))
            if service.get("Location")]


class ConfigError(Exception):
    """The stored samlConfig cannot be used (a private key that does not load)."""


def _write_key(directory, name, pem, password=None):
    """An unencrypted PKCS#8 copy of ``pem`` in ``directory`` (xmlsec reads the decryption key from
    a file); the key as loaded (once per process) is returned with the path."""
    key, unencrypted = _private_key(name, pem, password)
    path = os.path.join(directory, name)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(unencrypted)
    return path, key


def _write_cert(directory, name, pem):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="ascii") as handle:
        handle.write(pem)
    return path


def sp_config(ctx, settings, directory, *, issuer=None, audience=None):
    """A loaded SPConfig. ``audience`` replaces the SP entity ID as the audience pysaml2 expects (the
    ACS accepts either the entity ID or the configured ``audience``, and re-checks every restriction)."""
    entity_id = audience or settings.sp_entity_id
    sp = {
        # Destination and bearer Recipient may name any of our ACS URLs (seed path, alias, custom).
        "endpoints": {"assertion_consumer_service": [(url, BINDING_HTTP_POST) for url in settings.acs_urls(ctx)]},
        # sso.md §10 rule 3: a valid signature on the Response OR the Assertion is always required.
        "want_response_signed": False,
        "want_assertions_signed": settings.want_assertions_signed,
        "want_assertions_or_response_signed": True,
        "authn_requests_signed": settings.authn_requests_signed,
        # InResponseTo is checked by sso.saml.acs against the database, not by pysaml2's memory.
        "allow_unsolicited": True,
        "name_id_format": [settings.name_id_format],
        "name_id_policy_format": settings.name_id_format,
        "name_id_format_allow_create": True,
    }
    config = {
        "entityid": entity_id,
        "xmlsec_binary": xmlsec_binary(),
        "metadata": {"inline": [settings.idp_metadata(issuer)]},
        "service": {"sp": sp},
        "accepted_time_diff": int(app_settings.saml.clock_skew // 1000),
        "allow_unknown_attributes": True,
        "only_use_keys_in_metadata": True,
        "signing_algorithm": settings.signature_algorithm,
        "digest_algorithm": settings.digest_algorithm,
        "delete_tmpfiles": True,
    }
    if settings.signing_key and settings.signing_cert:
        config["cert_file"] = _write_cert(directory, "signing.crt", settings.signing_cert)
    if settings.encryption_key:
        keypair = {"key_file": _write_key(directory, "encryption.pem", settings.encryption_key,
                                          settings.encryption_key_pass)[0]}
        if settings.encryption_cert:
            keypair["cert_file"] = _write_cert(directory, "encryption.crt", settings.encryption_cert)
        config["encryption_keypairs"] = [keypair]
    loaded = SPConfig()
    loaded.load(config)
    return loaded


_KEYLESS_CONFIGS = {}
_KEYLESS_LIMIT = 64


def _keyless_config(ctx, settings, issuer=None, audience=None):
    key = (settings.provider.provider_id, settings.provider.fingerprint(), links.base(ctx), issuer, audience,
           app_settings.saml.clock_skew)
    config = _KEYLESS_CONFIGS.get(key)
    if config is None:
        if len(_KEYLESS_CONFIGS) >= _KEYLESS_LIMIT:
            _KEYLESS_CONFIGS.clear()  # stale entries of reconfigured providers go too
        config = _KEYLESS_CONFIGS[key] = sp_config(ctx, settings, None, issuer=issuer, audience=audience)
    return config


def _saml_client(config, signing=None):
    """A Saml2Client; ``signing``: ``(path, key)`` of the SP signing key, loaded once per process.

    The key is handed to pysaml2's signer here rather than named as ``key_file`` in the configuration,
    from which every Saml2Client would load (and validate) it again (security.md I6)."""
    saml_client = Saml2Client(config=config)
    # Signatures are checked and assertions decrypted in this process, not by the xmlsec1 binary.
    saml_client.sec.crypto = signature.InProcessVerifier(saml_client.sec.crypto.xmlsec, delete_tmpfiles=True)
    if signing is not None:
        saml_client.sec.key_file, key = signing
        saml_client.sec.sec_backend = RSACrypto(key)
    return saml_client


@contextlib.contextmanager
def client(ctx, provider, **options):
    """``with client(ctx, provider) as (saml_client, settings):`` a Saml2Client for this provider."""
    settings = Settings.of(provider)
    if not (settings.signing_key or settings.encryption_key):
        yield _saml_client(_keyless_config(ctx, settings, **options)), settings
        return
    with tempfile.TemporaryDirectory(prefix="sso-saml-") as directory:
        os.chmod(directory, 0o700)
        signing = None
        if settings.signing_key:
            signing = _write_key(directory, "signing.pem", settings.signing_key, settings.signing_key_pass)
        yield _saml_client(sp_config(ctx, settings, directory, **options), signing), settings
