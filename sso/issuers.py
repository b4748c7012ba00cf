"""One OIDC issuer, one token endpoint: what the shared callback's RFC 9207 check rests on (I1).

The shared callback (``AUTHSERVICE_SSO["redirect_uri"]``) gives every provider the same redirect URI,
so the IdP that answered is told apart only by the ``iss`` it sends, compared with the issuer of the
provider the state was stored for. A row's issuer is whatever its registrant wrote (with
``skipDiscovery`` nothing ties it to the endpoints), so an attacker could register ``evil`` with the
issuer of an honest provider and their own token endpoint: a victim who starts a sign-in at ``evil`` is
bounced to the honest IdP, which answers the shared callback with the honest ``iss`` and the state of
``evil``, and the service would post the honest code to the attacker's token endpoint (OAuth mix-up,
RFC 9700 §4.4; tests/security/test_attack14d_default_sso_mixup.py).

What must hold is narrower than "one provider per issuer": a code that an issuer's IdP issued is only
ever posted to one token endpoint. Providers that share an issuer *and* its token endpoint (two
organizations with clients of their own at one OP, Google's for example) are safe to confuse: the
code reaches the IdP that issued it, with the other client's credentials, and the IdP refuses it
(RFC 6749 §4.1.3 binds a code to its client). So:

- :func:`check_available` at register and update: a row may not claim the issuer of a provider from
  settings with another (or no) token endpoint: the operator's issuers are the operator's. With the
  shared callback on, the same holds against every other row (otherwise both would be refused at the
  callback below: a way to break someone else's sign-ins).
- :func:`is_ambiguous` at the shared callback: a row whose issuer another provider also claims with
  another (or no) token endpoint is refused there, whatever registration allowed before (rows
  registered before the shared callback was turned on, or before the operator named the issuer in
  settings, or two concurrent registrations). A settings provider is refused only on a conflict with
  another settings provider: a code sent to the operator's own token endpoint leaks nowhere, so a row
  copying its issuer cannot harm it.

Per-provider callbacks need neither rule: the IdP only returns to the redirect URI registered for the
client the browser was sent with, and that path names the provider.

Issuers and endpoints are compared exactly, as the ``iss`` check compares issuers: ``https://idp/`` and
``https://idp`` are different issuers, and an ``iss`` matches at most one of them.
"""

from authservice.errors import APIError
from sso import app_settings, default_providers
from sso.errors import codes
from sso.models import SsoProvider


def _token_endpoint(config):
    return (config or {}).get("tokenEndpoint") or None


def _settings_claims(issuer, except_provider_id=None):
    """The oidcConfigs of the settings providers claiming ``issuer`` (read as default_providers.build
    reads them, without building: nothing here may fail on a provider)."""
    for item in default_providers.items():
        oidc = item.get("oidc_config", item.get("oidcConfig"))
        if oidc and default_providers.item_issuer(item) == issuer \
                and default_providers.item_id(item) != except_provider_id:
            yield oidc


def _row_claims(issuer, except_provider_id):
    rows = SsoProvider.objects.filter(issuer=issuer, oidc_config__isnull=False).exclude(provider_id=except_provider_id)
    return rows.values_list("oidc_config", flat=True)


def _conflict(token_endpoint, claims):
    """Whether a claim redeems codes elsewhere; an unknown endpoint (discovered later) counts as elsewhere."""
    return any(token_endpoint is None or _token_endpoint(config) != token_endpoint for config in claims)


def check_available(issuer, provider_id, config):
    """Refuses (422 ``ISSUER_IN_USE``) an OIDC issuer that row ``provider_id`` with ``config`` may not take."""
    token_endpoint = _token_endpoint(config)
    if _conflict(token_endpoint, _settings_claims(issuer)):
        raise APIError(422, codes.ISSUER_IN_USE)
    if app_settings.redirect_uri and _conflict(token_endpoint, _row_claims(issuer, provider_id)):
        raise APIError(422, codes.ISSUER_IN_USE)


def is_ambiguous(provider):
    """Whether ``iss`` equal to ``provider``'s issuer could name a provider that redeems codes elsewhere."""
    token_endpoint = _token_endpoint(provider.oidc_config)
    if _conflict(token_endpoint, _settings_claims(provider.issuer, provider.provider_id)):
        return True
    return not default_providers.is_from_settings(provider) \
        and _conflict(token_endpoint, _row_claims(provider.issuer, provider.provider_id))
