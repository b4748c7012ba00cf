"""IdP metadata by URL: ``samlConfig.idpMetadata.url`` (issue 7 item 7; better-auth cannot do this).

The URL is fetched at registration (:func:`hydrate`) and again by ``manage.py sso_refresh_metadata``
(:func:`refresh`), so a rotated IdP signing certificate reaches us without anyone editing the provider.
The fetched document is stored as ``idpMetadata.metadata``, where the SAML code reads certificates and
endpoints from; a failed refresh keeps the last good copy.

The fetch runs on the server with a URL a user typed, so it goes through the one guarded client,
:mod:`authservice.fetch` (I8, sso.md §10.10: one lookup, checked and pinned address, bounded size and
time). On top of its rules: https only unless the URL lies in a trusted origin, at most
``MAX_REDIRECTS`` redirects (each hop checked again), and ``saml.max_metadata_size`` bytes.

The provider's identity (I5: entity ID, signing certificates, metadata URL) is compared with the
stored one *after* every fetch: :func:`identity` is what both update-provider and :func:`refresh`
compare, so a URL that now serves another IdP's keys cannot slip past the lock.
"""

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException
from django.db import transaction

from authservice import fetch
from authservice.errors import APIError
from sso import app_settings, identity
from sso.errors import codes, metadata_too_large_message
from sso.saml import validation as saml_validation

MAX_REDIRECTS = 5
MD = "urn:oasis:names:tc:SAML:2.0:metadata"
DS = "http://www.w3.org/2000/09/xmldsig#"
HEADERS = {"Accept": "application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.8",
           "User-Agent": "authservice-sso-metadata"}


# --- the fetch ----------------------------------------------------------------------------------
def fetch_bytes(url):
    """The body at ``url`` through the guarded client; every failure is an :class:`APIError`."""
    try:
        response = fetch.request("GET", url, timeout=app_settings.discovery_timeout, headers=HEADERS,
                                 max_bytes=app_settings.saml.max_metadata_size, max_redirects=MAX_REDIRECTS,
                                 https_only=True)
    except fetch.InvalidURL:
        raise APIError(400, codes.SAML_METADATA_URL_INVALID) from None
    except fetch.PrivateAddress:
        raise APIError(400, codes.SAML_METADATA_URL_PRIVATE_HOST) from None
    except fetch.TooLarge:
        limit = app_settings.saml.max_metadata_size
        raise APIError(400, codes.SAML_METADATA_TOO_LARGE, metadata_too_large_message("IdP", limit)) from None
    except fetch.FetchError as failure:
        raise APIError(502, codes.SAML_METADATA_FETCH_FAILED,
                       f"Failed to fetch IdP metadata: {failure.reason}") from None
    if response.status_code != 200:
        raise APIError(502, codes.SAML_METADATA_FETCH_FAILED,
                       f"Failed to fetch IdP metadata: HTTP {response.status_code}")
    return response.content


# --- the document --------------------------------------------------------------------------------
def entity_id(xml):
    """The ``entityID`` of IdP metadata after the checks of :func:`parse`."""
    return parse(xml).get("entityID")


def parse(xml):
    """The root ``md:EntityDescriptor`` of IdP metadata with a signing certificate, else 400."""
    try:
        root = ElementTree.fromstring(xml, forbid_dtd=True)
    except (ElementTree.ParseError, DefusedXmlException, ValueError):
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA) from None
    descriptor = root.find(f"{{{MD}}}IDPSSODescriptor")
    if root.tag != f"{{{MD}}}EntityDescriptor" or not root.get("entityID") or descriptor is None:
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA)
    signing = [key for key in descriptor.findall(f"{{{MD}}}KeyDescriptor") if key.get("use") in (None, "signing")]
    if not any((key.findtext(f".//{{{DS}}}X509Certificate") or "").strip() for key in signing):
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA)
    return root


def fetch_metadata(url):
    """IdP metadata XML (text) fetched from ``url``, checked to be an IdP EntityDescriptor."""
    body = fetch_bytes(url)
    try:
        xml = body.decode("utf-8")
    except UnicodeDecodeError:
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA) from None
    parse(xml)
    return xml


def metadata_url(config):
    idp = (config or {}).get("idpMetadata")
    url = idp.get("url") if isinstance(idp, dict) else None
    return url if isinstance(url, str) and url else None


def _check_entity(config, xml):
    """The fetched document must describe the IdP this provider was set up for."""
    idp = config.get("idpMetadata") or {}
    expected = idp.get("entityID")
    if not expected and idp.get("metadata"):
        try:
            expected = entity_id(idp["metadata"])
        except APIError:
            expected = None
    found = entity_id(xml)
    if expected and found != expected:
        raise APIError(400, codes.SAML_INVALID_IDP_METADATA,
                       f'IdP metadata entityID "{found}" does not match "{expected}"')


def hydrate(config, previous=None):
    """``config`` with ``idpMetadata.metadata`` fetched from ``idpMetadata.url`` (register / update).

    Called before the SAML config checks, so a config naming only a URL passes the certificate-source
    rule. ``previous`` is the stored config on update: the URL is fetched again only when it changed.
    """
    url = metadata_url(config)
    if url is None or (previous is not None and metadata_url(previous) == url
                       and (config.get("idpMetadata") or {}).get("metadata")):
        return config
    xml = fetch_metadata(url)
    idp = {key: value for key, value in config["idpMetadata"].items() if key != "metadata"}
    _check_entity({**config, "idpMetadata": idp}, xml)
    return {**config, "idpMetadata": {**idp, "metadata": xml}}


def refresh(provider, allow_rekey=False):
    """Fetch the provider's metadata URL again; True when the stored copy changed.

    The fetched document must pass the SAML config checks, and, while accounts are linked, keep the
    provider's identity (I5: entity ID and signing keys, compared after the fetch) unless an
    administrator re-keys explicitly (``allow_rekey``). On any failure or refusal the stored copy
    stays as it was and the :class:`APIError` propagates. The row is re-read under a lock so a
    concurrent update-provider is neither lost nor overwritten.
    """
    from sso.models import SsoProvider

    url = metadata_url(provider.saml_config)
    if url is None:
        raise APIError(400, codes.SAML_METADATA_URL_INVALID)
    xml = fetch_metadata(url)
    with transaction.atomic():
        current = SsoProvider.objects.select_for_update().get(pk=provider.pk)
        config = current.saml_config or {}
        if metadata_url(config) != url:  # reconfigured meanwhile: that update wins
            return False
        _check_entity(config, xml)
        if config["idpMetadata"].get("metadata") == xml:
            return False
        updated = {**config, "idpMetadata": {**config["idpMetadata"], "metadata": xml}}
        saml_validation.validate(updated)
        identity.check_unchanged(current, config, updated, allow_rekey=allow_rekey)
        current.saml_config = updated
        current.save(update_fields=["saml_config", "updated_at"])
    provider.saml_config = current.saml_config
    return True
