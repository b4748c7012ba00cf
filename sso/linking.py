"""From a verified SSO identity to a user, an account and a session (sso.md §6, §8 step 2).

Protocol-neutral: OIDC hands over (sub, mapped claims, token set), SAML (NameID, mapped attributes,
no tokens). Accounts are keyed on (providerId, accountId) and never found by e-mail alone; an existing
user with the same e-mail is linked only under the rules of sso.md §6.
"""

from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from authservice import app_settings, db, signals
from authservice.errors import APIError, codes
from authservice.flows import sessions
from authservice.models import Account
from sso import app_settings as sso_settings
from sso import errors  # noqa: F401 - registers the SSO codes
from sso.models import SsoProvider

# The redirect's ``error`` for each refusal, as better-auth writes them for OIDC (sso.md §9).
ACCOUNT_NOT_LINKED = "account not linked"
SIGNUP_DISABLED = "signup disabled"
UNABLE_TO_CREATE_USER = "unable to create user"
UNABLE_TO_CREATE_SESSION = "unable to create session"


class LinkRefused(Exception):
    """Sign-in refused by the linking rules; ``error`` is the redirect's ``error`` value."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


@dataclass
class Identity:
    """What a protocol verified: who the IdP says the user is."""

    account_id: str  # OIDC sub or SAML NameID
    user_info: dict  # {id, email, name, image?, emailVerified, ...extraFields, attributes}
    token: dict | None = None  # OIDC token set (sso.md §8 step 3); None for SAML
    account_fields: dict = field(default_factory=dict)  # token columns of the account row


@dataclass
class SignedIn:
    user: object
    session: object
    is_new_user: bool
    provider: SsoProvider


def sign_in(ctx, provider_ref, identity, *, request_sign_up=False):
    """One transaction: re-check the provider, find/link/create user and account, create the session.

    Raises LinkRefused, or APIError(SSO_PROVIDER_CHANGED) when the provider changed since the
    sign-in started; nothing is written then.
    """
    with transaction.atomic():
        provider = _locked_provider(provider_ref)
        user, is_new = _user_for(provider, identity, request_sign_up)
        try:
            with transaction.atomic():
                session = sessions.create_session(ctx, user)
        except IntegrityError:
            raise LinkRefused(UNABLE_TO_CREATE_SESSION) from None
    if is_new:
        signals.user_created.send(sender=type(user), user=user, provider=provider.provider_id)
    return SignedIn(user=user, session=session, is_new_user=is_new, provider=provider)


def _locked_provider(provider_ref):
    row_id = provider_ref.get("rowId")
    provider = db.get_row(SsoProvider, for_update=True, id=row_id) if isinstance(row_id, str) else None
    if provider is None or provider.provider_id != provider_ref.get("providerId") \
            or provider.fingerprint() != provider_ref.get("fingerprint"):
        raise APIError(409, codes.SSO_PROVIDER_CHANGED)
    return provider


def _user_for(provider, identity, request_sign_up):
    account = db.get_row(Account, related="user", provider_id=provider.provider_id, account_id=identity.account_id)
    if account is not None:
        _update_tokens(account, identity.account_fields)
        return account.user, False
    email = (identity.user_info.get("email") or "").strip().lower()
    existing = get_user_model().objects.filter(email__iexact=email).first()
    if existing is not None:
        if not may_link(provider, existing, identity.user_info):
            raise LinkRefused(ACCOUNT_NOT_LINKED)
        _create_account(provider, existing, identity)
        return existing, False
    if sso_settings.disable_implicit_sign_up and not request_sign_up:
        raise LinkRefused(SIGNUP_DISABLED)
    return _create_user(provider, email, identity), True


def may_link(provider, user, user_info):
    """Whether an SSO identity may join the existing ``user`` that has its e-mail (sso.md §6.2).

    A verified provider domain covering the e-mail links; without domain verification only a
    trusted, IdP-asserted verified e-mail does. Either way the local e-mail must be verified by
    default, or whoever signed up first with a victim's address would receive the victim's SSO logins.
    """
    if not app_settings.account_linking.enabled:
        return False
    if sso_settings.account_linking.require_local_email_verified and not user.email_verified:
        return False
    email_domain = user.email.rpartition("@")[2]
    if sso_settings.domain_verification.enabled:
        return bool(provider.domain_verified) and provider.matches_email_domain(email_domain)
    return bool(sso_settings.account_linking.trust_email_verified and user_info.get("emailVerified") is True)


def _create_user(provider, email, identity):
    info = identity.user_info
    user = get_user_model()(
        email=email, name=info.get("name") or "", image=info.get("image") or None,
        email_verified=info.get("emailVerified") is True,
    )
    user.set_unusable_password()
    try:
        with transaction.atomic():
            user.save()
            _create_account(provider, user, identity)
    except IntegrityError:
        raise LinkRefused(UNABLE_TO_CREATE_USER) from None
    return user


def _create_account(provider, user, identity):
    try:
        with transaction.atomic():
            Account.objects.create(provider_id=provider.provider_id, account_id=identity.account_id,
                                   user=user, **identity.account_fields)
    except IntegrityError:
        # The same (providerId, sub) was linked by a concurrent sign-in to someone else.
        raise LinkRefused(ACCOUNT_NOT_LINKED) from None


def _update_tokens(account, fields):
    if not fields:
        return
    for name, value in fields.items():
        setattr(account, name, value)
    account.save(update_fields=[*fields, "updated_at"])


def account_token_fields(token_set):
    """Account columns from an OIDC token set (sso.md §1: scope is comma-joined)."""
    return {
        "access_token": token_set.get("accessToken"),
        "refresh_token": token_set.get("refreshToken"),
        "id_token": token_set.get("idToken"),
        "access_token_expires_at": token_set.get("accessTokenExpiresAt"),
        "refresh_token_expires_at": token_set.get("refreshTokenExpiresAt"),
        "scope": ",".join(token_set.get("scopes") or []),
    }


def expiry(seconds):
    """``now + seconds`` for an ``expires_in`` value, or None when absent or not a number."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        return None
    return timezone.now() + timedelta(seconds=seconds)
