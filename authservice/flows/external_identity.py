"""One path from a verified external identity to a user and a session: social sign-in, SSO OIDC, SAML.

A protocol verifies who the provider says the user is (an :class:`Identity`) and names who vouches
for it (an :class:`Authority`: a social provider, an SSO provider). :func:`sign_in` then applies, in one
place each, the rules that must hold on every path (security.md I1):

- domain trust: an authority trusted only for some e-mail domains (an SSO provider with domain
  verification on) signs in, links and creates only users of those domains (F9, pre-hijacking:
  Sudhodanan & Paverd 2022); a deployment-configured social provider is trusted for every domain;
- the linking policy for an existing user with the same e-mail; a link by address proves the address,
  which retires what a pre-hijacker set up before it (authservice/flows/email_proof.py);
- new-user creation (no usable password: the user has none until they set one);
- ``is_active``: an inactive user gets no session, whichever protocol vouched for them;
- the second factor: a user with 2FA gets a pending two-factor sign-in instead of a session, as from
  /sign-in/email, unless the authority owns the second factor itself (SSO: ``second_factor_applies``);
- what the session must see at once: ``Authority.grant`` runs in the same transaction as the
  session row (SSO's organization membership and role, so the first request sees them);
- the provisioning hook: ``Authority.provision`` runs once the session row exists (SSO's
  provisionUser plugs in there); its failure removes the session.

Every refusal is a :class:`SignInRefused`; every browser flow's failure is a :class:`SignInFailure`,
rendered by :func:`failure_location` only (one URL builder, one place that forgets session cookies).
"""

from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone

from authservice import app_settings, cookie_cache, cookies, db, links, origins, signals, users
from authservice.errors import OAuthCallbackError as E
from authservice.flows import email_proof, sessions
from authservice.models import Account
from authservice.two_factor import challenge as two_factor_challenge


# --- the one failure type --------------------------------------------------------------------------
class SignInFailure(Exception):
    """A browser sign-in that ends in a redirect with ``?error=<error>[&error_description=...]``.

    ``error`` is a catalogued value (``authservice.errors.OAuthCallbackError``, ``sso.errors.RedirectError``
    or an API error code). ``target`` replaces the flow's default error target when the failing step
    knows a better one (a state's errorURL); ``to_success`` sends it to the success URL instead (SAML
    linking refusals, sso.md §6.3).
    """

    def __init__(self, error, description=None, *, target=None, to_success=False):
        super().__init__(error)
        self.error, self.description = str(error), description
        self.target, self.to_success = target, to_success

    @classmethod
    def from_api_error(cls, error):
        """A coded error raised during linking or by a hook: the code, with its message (sso.md §9)."""
        return cls(error.code, error.message)

    @property
    def code(self):
        """``error`` as social and SAML redirects write it: better-auth's phrases with "_" for " "."""
        return self.error.replace(" ", "_")


class SignInRefused(SignInFailure):
    """The rules of :func:`sign_in` said no; nothing was written. ``reason`` is the catalogued value."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def forget_session_cookies(ctx):
    """A failed sign-in sets no session cookie (one set before a later step failed is dropped)."""
    for key in (cookies.SESSION_TOKEN, cookies.DONT_REMEMBER):
        ctx.response_cookies.pop(cookies.cookie_name(key), None)
    cookie_cache.forget(ctx)


def failure_location(ctx, target, failure):
    """The Location of a failed browser sign-in: ``failure.target`` or ``target``, with the error."""
    forget_session_cookies(ctx)
    return links.with_error(failure.target or target, failure.error, failure.description)


# --- what a protocol hands over -------------------------------------------------------------------
@dataclass
class Identity:
    """Who the provider says the user is, after the protocol verified it."""

    account_id: str  # the provider's subject: OAuth/OIDC sub, SAML NameID
    email: str  # lower-cased
    email_verified: bool = False  # the provider's word, where the deployment trusts it
    name: str = ""
    image: str | None = None
    tokens: object = None  # authservice.social.base.Tokens, or None (SAML)
    user_info: dict = field(default_factory=dict)  # what the provisioning hook is shown


class Authority:
    """Who vouches for an identity, and the rules its plugin chose. Subclasses set the attributes,
    in ``lock()`` when they depend on a row read inside the sign-in's transaction."""

    provider_id = None  # the accounts' providerId
    # E-mail domains this authority is trusted for (I1), exact or as a parent; None = every domain.
    domains = None
    # Its word links an existing user by e-mail without an IdP-asserted email_verified.
    vouches_for_email = False
    require_local_email_verified = True  # linking needs the local e-mail verified
    require_email_verified = False  # no session until the user's e-mail is verified
    allow_sign_up = True
    # Session.sign_in_method of the sessions it opens (SSO's are exempt from two_factor.required_for).
    sign_in_method = "social"
    # A user with 2FA must still give their second factor: the provider only replaces the password.
    # False for an IdP that owns MFA itself (SSO), docs/mfa.md.
    second_factor_applies = True

    def lock(self):
        """First step inside the transaction; may re-read and lock what the rules depend on."""

    def grant(self, user, identity, is_new_user):
        """Inside the sign-in's transaction, right after the session row: write what the session must
        see on its first request (SSO: organization membership and role). Raising rolls back the
        whole sign-in, session included."""

    def provision(self, signed_in, identity):
        """The provisioning hook, after the session row exists; raising removes the session."""

    def trusts(self, email):
        """I1: whether this authority may vouch for a user with ``email``."""
        if self.domains is None:
            return True
        _, at, domain = (email or "").rpartition("@")
        domain = domain.strip().lower().rstrip(".")
        return bool(at and domain) and any(domain == d or domain.endswith("." + d) for d in self.domains)


@dataclass
class SignedIn:
    user: object
    session: object  # None while a second factor is pending
    account: object
    is_new_user: bool
    authority: Authority
    # /sign-in/email's answer ({"twoFactorRedirect": True, ...}) when the user must give a second
    # factor first: no session exists, the two_factor cookie is set.
    two_factor: dict | None = None


# --- the flow ---------------------------------------------------------------------------------------
def sign_in(ctx, authority, identity, *, remember=True):
    """Find, link or create the user for ``identity`` and open a session (one transaction).

    Raises :class:`SignInRefused` (nothing written), an APIError from ``authority.lock()``, or what
    the provisioning hook raised (the session it followed is deleted).
    """
    with transaction.atomic():
        authority.lock()
        user, account, is_new, linked = _user_for(authority, identity)
        check_may_sign_in(authority, user)
        # Decided here, not in a protocol's view: every way a provider vouches for a user with 2FA
        # ends in the same pending sign-in /sign-in/email makes (trusted devices skip it the same way).
        pending = two_factor_challenge.begin_sign_in(ctx, user, remember) \
            if authority.second_factor_applies else None
        session = None
        if pending is None:
            try:
                with transaction.atomic():
                    session = sessions.create_session(ctx, user, remember=remember, announce=False,
                                                      method=authority.sign_in_method)
            except IntegrityError:
                raise SignInRefused(E.UNABLE_TO_CREATE_SESSION) from None
            authority.grant(user, identity, is_new)
    # Sent after the block, so a receiver that raises cannot roll the rows back.
    if is_new:
        signals.user_created.send(sender=type(user), user=user, provider=authority.provider_id)
    if linked:
        signals.account_linked.send(sender=Account, user=user, provider=authority.provider_id, account=account)
    if pending is not None:
        return SignedIn(user=user, session=None, account=account, is_new_user=is_new, authority=authority,
                        two_factor=pending)
    sessions.announce_sign_in(ctx, user, session)
    signed_in = SignedIn(user=user, session=session, account=account, is_new_user=is_new, authority=authority)
    try:
        authority.provision(signed_in, identity)
    except Exception:
        session.delete()
        forget_session_cookies(ctx)
        raise
    return signed_in


def check_may_sign_in(authority, user):
    """The rules for the user about to get a session, whichever way they were found."""
    if not authority.trusts(users.email_of(user)):
        raise SignInRefused(E.EMAIL_DOMAIN_NOT_TRUSTED)
    if authority.require_email_verified and not users.is_email_verified(user):
        raise SignInRefused(E.EMAIL_NOT_VERIFIED)
    if not user.is_active:
        raise SignInRefused(E.USER_INACTIVE)


def _user_for(authority, identity):
    """``(user, account, is_new_user, linked)``; runs inside sign_in's transaction, so a refusal here
    or in check_may_sign_in() rolls back whatever was written (refreshed tokens, a link, a user)."""
    # The returning user's one query (the hot path of the OIDC callback and the SAML ACS).
    account = db.get_row(Account, related="user", provider_id=authority.provider_id,
                         account_id=identity.account_id)
    if account is not None:
        # check_may_sign_in() then judges the account's user, not the asserted e-mail: that user gets
        # the session (an IdP may assert another address for a linked subject).
        refresh_tokens(account, identity.tokens)
        mark_verified(account.user, identity, account)
        return account.user, account, False, False
    if not authority.trusts(identity.email):
        raise SignInRefused(E.EMAIL_DOMAIN_NOT_TRUSTED)
    user = users.find_by_email(identity.email)
    if user is not None:
        if not may_link(authority, user, identity):
            raise SignInRefused(E.ACCOUNT_NOT_LINKED)
        account = create_account(authority, user, identity)
        # Linked by its address, the identity vouches for the address: a proof (flows/email_proof.py).
        if not email_proof.prove(user, account=account, password=email_proof.RETIRE):
            email_proof.linked_by_address(user, account)
        return user, account, False, True
    if not authority.allow_sign_up:
        raise SignInRefused(E.SIGNUP_DISABLED)
    user, account = create_user(authority, identity)
    return user, account, True, False


def may_link(authority, user, identity):
    """Whether ``identity`` may join the existing ``user`` with its e-mail (core.md §5.4, sso.md §6.2).

    The local e-mail must be verified by default, or whoever signed up first with a victim's address
    would receive the victim's provider logins.
    """
    if app_settings.account_linking.as_dict().get("disable_implicit_linking"):
        return False
    if authority.require_local_email_verified and not users.is_email_verified(user):
        return False
    return may_attach(authority, identity)


def may_attach(authority, identity):
    """Linking is on, and the e-mail is vouched for by the authority (a trusted social provider, a
    verified SSO domain) or verified by the provider. Explicit linking (link-social) needs this too."""
    return bool(app_settings.account_linking.enabled
                and (authority.vouches_for_email or identity.email_verified))


def mark_verified(user, identity, account):
    """A linked identity whose provider now verifies the user's address proves it (flows/email_proof.py).

    It was linked while the address was unproven, so by the account's holder (link-social from their
    session): the password is theirs too, and is confirmed. Links by address prove at once (``_user_for``).
    """
    if (identity.email_verified and identity.email == users.email_of(user).lower()
            and not users.is_email_verified(user)):
        email_proof.prove(user, account=account, password=email_proof.CONFIRM)


# --- rows --------------------------------------------------------------------------------------------
def token_columns(tokens):
    """The account's token columns from a ``Tokens`` (the one mapping); absent values are left out,
    so a sign-in without a new refresh token keeps the stored one."""
    if tokens is None:
        return {}
    values = {"access_token": tokens.access_token, "refresh_token": tokens.refresh_token,
              "id_token": tokens.id_token, "access_token_expires_at": tokens.access_token_expires_at,
              "refresh_token_expires_at": tokens.refresh_token_expires_at}
    return {key: value for key, value in values.items() if value is not None}


def refresh_tokens(account, tokens):
    """Sign-in refreshes the tokens; the scope is left alone (only link-social widens it)."""
    columns = token_columns(tokens)
    if columns:
        Account.objects.filter(pk=account.pk).update(updated_at=timezone.now(), **columns)


def create_account(authority, user, identity):
    try:
        with transaction.atomic():
            return Account.objects.create(user=user, **_account_fields(authority, identity))
    except IntegrityError:  # the same (providerId, accountId) linked concurrently
        raise SignInRefused(E.LINK_FAILED) from None


def create_user(authority, identity):
    """The one way a user is made from an external identity: with its account, both or neither,
    and an unusable password (sign-in by password needs a reset or set-password first)."""
    # A provider's picture that is not an http(s) URL (``javascript:``, ``data:``) is dropped, not an
    # error: the user did not choose it, and every client renders it (I4).
    image = identity.image if origins.is_http_url(identity.image) else None
    try:
        with transaction.atomic():
            user = users.create(email=identity.email, name=identity.name or "", image=image,
                                email_verified=bool(identity.email_verified))
            account = Account.objects.create(user=user, **_account_fields(authority, identity))
    except IntegrityError:  # the same e-mail or account created concurrently
        raise SignInRefused(E.UNABLE_TO_CREATE_USER) from None
    return user, account


def _account_fields(authority, identity):
    fields = {"provider_id": authority.provider_id, "account_id": identity.account_id,
              **token_columns(identity.tokens)}
    if identity.tokens is not None:
        fields["scope"] = ",".join(identity.tokens.scopes or [])
    return fields
