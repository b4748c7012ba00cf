"""The Single Logout facts of one provider (docs/saml-slo.md): our SLO URL, the IdP's SLO services,
and whether its logout messages must be signed.

The IdP's services come from its metadata XML (``md:SingleLogoutService``) or from
``idpMetadata.singleLogoutService`` (better-auth's shape: ``[{Binding, Location, ResponseLocation?}]``);
only http(s) locations count (I4, re-checked here in the form the browser will be given them).
"""

from dataclasses import dataclass
from urllib.parse import quote

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT

from authservice import links, origins
from sso import app_settings
from sso.saml import config, xml
from sso.stored import as_list, as_str

SLO_PATH = "/sso/saml2/sp/slo/"
BINDINGS = {"redirect": BINDING_HTTP_REDIRECT, "post": BINDING_HTTP_POST}


@dataclass(frozen=True)
class Service:
    binding: str  # "redirect" or "post"
    location: str
    response_location: str

    def target(self, response):
        """Where a message goes: a LogoutResponse to ResponseLocation when the IdP names one."""
        return self.response_location if response and self.response_location else self.location


def slo_url(ctx, provider):
    return f"{links.base(ctx)}{SLO_PATH}{quote(provider.provider_id, safe='')}"


def _binding_name(uri):
    return next((name for name, value in BINDINGS.items() if value == uri), None)


def services(settings):
    """The IdP's SLO services we can use, in the order it lists them (metadata XML first)."""
    found = []
    root = config._idp_descriptor_root(settings.idp_metadata_xml)  # noqa: SLF001 - the one metadata reader
    if root is not None:
        for element in root.iter(xml.q(xml.MD, "SingleLogoutService")):
            found.append((element.get("Binding"), element.get("Location"), element.get("ResponseLocation")))
    for item in as_list(settings.idp.get("singleLogoutService")):
        if isinstance(item, dict):
            found.append((item.get("Binding"), item.get("Location"), item.get("ResponseLocation")))
    result = []
    for binding, location, response_location in found:
        name = _binding_name(binding)
        location = as_str(location)
        if name is None or not location or not origins.is_http_url(location):
            continue
        response_location = as_str(response_location)
        if response_location and not origins.is_http_url(response_location):
            response_location = None
        result.append(Service(name, location, response_location or ""))
    return result


def service(settings, prefer=None):
    """The IdP's SLO service of the binding ``prefer`` if it offers one, else its Redirect one, else
    its POST one; None when it has none."""
    offered = services(settings)
    for wanted in (prefer, "redirect", "post"):
        for candidate in offered:
            if candidate.binding == wanted:
                return candidate
    return None


def _flag(settings, key, default):
    value = settings.config.get(key)
    return value if isinstance(value, bool) else bool(default)


def want_logout_request_signed(settings):
    """samlConfig.wantLogoutRequestSigned, else the setting (default true)."""
    return _flag(settings, "wantLogoutRequestSigned", app_settings.saml.want_logout_request_signed)


def want_logout_response_signed(settings):
    return _flag(settings, "wantLogoutResponseSigned", app_settings.saml.want_logout_response_signed)
