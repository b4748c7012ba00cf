"""SSO's side of the one external-identity flow (authservice/flows/external_identity.py; sso.md §6, §8).

A protocol (OIDC: sub, mapped claims, tokens; SAML: NameID, mapped attributes) builds an
:func:`identity`; :func:`sign_in` hands it to the core flow with an :class:`SsoAuthority`, which locks
and re-checks the provider inside the sign-in's transaction and says what the provider is trusted for:

- with domain verification on, a verified provider vouches only for addresses in its domains
  (exact or subdomain): it creates, links and signs in no one else (I1, F9: pre-hijacking). A
  deployment may opt a provider out with ``AUTHSERVICE_SSO["trust_any_email_domain"]``;
- without domain verification, any address, but an existing user is linked only on an IdP-asserted
  verified e-mail with ``account_linking.trust_email_verified`` on (behaviour unchanged).
"""

from datetime import timedelta

from django.utils import timezone

from authservice import db
from authservice.errors import APIError, codes
from authservice.flows import external_identity
from sso import app_settings as sso_settings
from sso import errors  # noqa: F401 - registers the SSO codes
from sso import default_providers, provider_claims, provisioning
from sso.models import SsoProvider

# The refusal the SAML ACS catches: the core flow's, ``.error`` being the redirect's ``error``.
LinkRefused = external_identity.SignInRefused


def identity(account_id, user_info, tokens=None):
    """The core Identity for a mapped SSO user: ``user_info`` = {id, email, name, image?,
    emailVerified, ...extraFields, attributes} (what provisionUser is shown), ``tokens`` an OIDC
    ``Tokens`` (None for SAML)."""
    return external_identity.Identity(
        account_id=account_id,
        email=(user_info.get("email") or "").strip().lower(),
        # The IdP's claim counts only where the deployment trusts it (sso.md §3 step 9).
        email_verified=bool(sso_settings.account_linking.trust_email_verified
                            and user_info.get("emailVerified") is True),
        name=user_info.get("name") or "",
        image=user_info.get("image") or None,
        tokens=tokens,
        user_info=user_info,
    )


class SsoAuthority(external_identity.Authority):
    """An SSO provider, read and locked by ``lock()`` inside the sign-in's transaction.

    The IdP owns the second factor (docs/mfa.md): no local 2FA step, and its sessions are exempt from
    ``two_factor.required_for``.
    """

    sign_in_method = "sso"
    second_factor_applies = False

    def __init__(self, provider_ref, request_sign_up=False):
        self.provider_ref = provider_ref
        self.provider = None
        self.require_local_email_verified = sso_settings.account_linking.require_local_email_verified
        self.allow_sign_up = bool(request_sign_up) or not sso_settings.disable_implicit_sign_up
        self.membership = None  # what grant() wrote, announced by provision()

    def lock(self):
        provider = _locked_provider(self.provider_ref)
        self.provider, self.provider_id = provider, provider.provider_id
        self.domains = trusted_domains(provider)
        # A verified domain vouches for its own addresses; without verification only the IdP's
        # e-mail claim (when trusted) can link an existing user.
        self.vouches_for_email = bool(sso_settings.domain_verification.enabled)

    def grant(self, user, identity, is_new_user):
        # Membership and role are written with the session (issue 14 §4), announced in provision().
        self.membership = provisioning.grant(user=user, user_info=identity.user_info,
                                             token=token_set(identity.tokens), provider=self.provider)

    def provision(self, signed_in, identity):
        provisioning.run(user=signed_in.user, user_info=identity.user_info, token=token_set(identity.tokens),
                         provider=self.provider, is_new_user=signed_in.is_new_user,
                         membership=self.membership)


def trusted_domains(provider):
    """The e-mail domains ``provider`` may vouch for (I1); None = every domain.

    Every domain without domain verification (as before issue 12), or for a provider the deployment
    opted out in ``trust_any_email_domain``; else the domains it proved each on its own (issue 14 §3:
    a verified ``corp.com`` does not vouch for a pending ``corp.de``), all of them for a default
    provider from settings (the same rule routing uses), and none before.
    """
    if default_providers.is_from_settings(provider):
        return tuple(provider.domains())  # the domains the operator wrote, and only those (I1)
    if not sso_settings.domain_verification.enabled \
            or provider.provider_id in (sso_settings.trust_any_email_domain or ()):
        return None
    return tuple(provider.trusted_domains())


def sign_in(ctx, provider_ref, identity, *, request_sign_up=False):
    """Re-check the provider, find/link/create the user, open the session, run the hooks (sso.md §8).

    Returns the core ``SignedIn`` (``.authority.provider`` is the provider). Raises ``LinkRefused``, or
    APIError(SSO_PROVIDER_CHANGED) when the provider changed since the sign-in started, or a hook's
    APIError; no session exists afterwards then.
    """
    return external_identity.sign_in(ctx, SsoAuthority(provider_ref, request_sign_up), identity)


def _locked_provider(provider_ref):
    row_id = provider_ref.get("rowId")
    provider = default_providers.by_id(provider_ref.get("providerId"))
    if provider is None or provider.pk != row_id:  # a settings provider has no row to lock
        provider = db.get_row(SsoProvider, for_update=True, id=row_id) if isinstance(row_id, str) else None
        # The one step every SSO sign-in passes, whichever entry point found the row (I1).
        provider_claims.refuse_row(provider)
    if provider is None or provider.provider_id != provider_ref.get("providerId") \
            or provider.fingerprint() != provider_ref.get("fingerprint"):
        raise APIError(409, codes.SSO_PROVIDER_CHANGED)
    return provider


def token_set(tokens):
    """The OIDC token set the hooks are given (sso.md §8 step 3); None for SAML."""
    if tokens is None:
        return None
    return {
        "accessToken": tokens.access_token, "refreshToken": tokens.refresh_token, "idToken": tokens.id_token,
        "accessTokenExpiresAt": tokens.access_token_expires_at,
        "refreshTokenExpiresAt": tokens.refresh_token_expires_at,
        "scopes": list(tokens.scopes or []), "tokenType": (tokens.raw or {}).get("token_type"),
    }


def expiry(seconds):
    """``now + seconds`` for an ``expires_in`` value, or None when absent or not a number."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        return None
    return timezone.now() + timedelta(seconds=seconds)
