"""Provider ids the deployment claims for something other than a database row (I1; attack passes 14d, 14e).

Accounts are keyed by ``(provider_id, account_id)`` only (authservice/flows/external_identity.py), so an
SSO row and anything else of the same id share every link: the row's IdP can name another provider's
subject and get that user's session, and deleting the row deletes the other provider's accounts
(sso/row_deletion.py). Registration refuses such ids (sso/providers.py ``reserved_ids``), but the
deployment may claim an id *after* a row took it, possibly an attacker's row registered in advance. Such a
row is in conflict: every path that would use it answers ``409 PROVIDER_ID_CONFLICT`` and logs an error
for the operator (:func:`refuse_row`), its management endpoints included, so its registrant cannot
delete it and take the other provider's accounts along. The operator resolves it by deleting the row
(``provider_id`` is immutable, sso/models.py), which deletes the accounts linked through it: for a
social id that provider's users link again at their next sign-in (fail-safe). System check ``sso.E019``
names every such row.

The claimant fails closed too while the row exists. A whole default_sso item answers the same 409
(sso/default_providers.py); a social provider's sign-in is refused by :func:`refuse_social_sign_in`,
run inside the core's sign-in transaction: the accounts the row's IdP linked before the claim (any
subject, to any user it chose) would otherwise sign the social provider's users into those users
(attack pass 14f). And the row cannot go by its owner's deletion (:mod:`sso.row_deletion`): that would
take the claimant's accounts along, so only the operator's deletion of the row itself removes it.

Not claims: a domain-less ``default_sso`` item names its row on purpose (it lends that row a private
key), and ``trust_any_email_domain`` configures a row rather than replacing it (warning ``sso.W003``).
"""

import logging

from authservice import app_settings as core_settings
from authservice.errors import APIError, codes
from sso import default_providers
from sso import errors as _sso_errors  # noqa: F401 - defines PROVIDER_ID_CONFLICT

logger = logging.getLogger("sso")

# Ids of other sign-in methods; an SSO provider must not shadow their accounts (sso.md §2).
BUILT_IN_IDS = ("credential", "email-otp", "magic-link", "phone-number", "anonymous", "siwe")
# better-auth's social provider ids (its socialProviderList).
SOCIAL_IDS = (
    "apple", "atlassian", "cognito", "discord", "dropbox", "facebook", "figma", "github", "gitlab",
    "google", "huggingface", "kakao", "kick", "line", "linear", "linkedin", "microsoft", "naver", "notion",
    "paybin", "paypal", "polar", "railway", "reddit", "roblox", "salesforce", "slack", "spotify", "tiktok",
    "twitch", "twitter", "vercel", "vk", "zoom",
)

SETTINGS_PROVIDER = "a provider in AUTHSERVICE_SSO['default_sso']"
SOCIAL_PROVIDER = "a social provider in AUTHSERVICE['social_providers']"


def claims():
    """``{provider_id: what claims it}``: the one set both the conflict rule and sso.E019 read.

    Built per call from the settings (tests and deployments change them; a few dozen entries).
    """
    found = dict.fromkeys(SOCIAL_IDS, "a built-in social provider id")
    found.update(dict.fromkeys(BUILT_IN_IDS, "a built-in sign-in method"))
    found.update(dict.fromkeys(core_settings.account_linking.trusted_providers or (),
                               "AUTHSERVICE['account_linking']['trusted_providers']"))
    found.update(dict.fromkeys(core_settings.social_providers or (), SOCIAL_PROVIDER))
    found.update(dict.fromkeys(default_providers.ids(), SETTINGS_PROVIDER))
    return found


def resolution(claim):
    """How the operator resolves a conflict: deletion only (a rename would leave the accounts behind)."""
    text = ("Delete the row in the Django admin; the accounts linked through it are deleted with it "
            "(its provider_id cannot be changed: the accounts are keyed by it).")
    if claim == SOCIAL_PROVIDER:
        text += " That social provider's users link again at their next sign-in."
    return text


def refuse_row(provider):
    """409 PROVIDER_ID_CONFLICT, and an error line for the operator, when ``provider`` is a database row
    whose id the deployment claims; else nothing. A settings provider is never refused here."""
    if provider is None or default_providers.is_from_settings(provider):
        return
    claim = claims().get(provider.provider_id)
    if claim is None:
        return
    # Logged for the operator only: the row's owner (maybe an attacker) learns no more than the code.
    logger.error("SSO provider row %s (%r) refused: its provider_id is claimed by %s. %s (system check "
                 "sso.E019)", provider.pk, provider.provider_id, claim, resolution(claim))
    raise APIError(409, codes.PROVIDER_ID_CONFLICT)


def refuse_social_sign_in(sender, user, provider, **kwargs):
    """``social_sign_in_committing`` receiver: 409 while a stored row has the social provider's id.

    Runs inside the sign-in's transaction after the account lookup, so the refusal rolls back whatever
    that lookup wrote (refreshed tokens, a link). One indexed lookup per social sign-in.
    """
    from sso.models import SsoProvider

    row_pk = SsoProvider.objects.filter(provider_id=provider).values_list("pk", flat=True).first()
    if row_pk is None:
        return
    logger.error("Social sign-in with %r refused: SSO provider row %s has the same provider_id, and accounts "
                 "are keyed by it. %s (system check sso.E019)", provider, row_pk, resolution(SOCIAL_PROVIDER))
    raise APIError(409, codes.PROVIDER_ID_CONFLICT)


def connect():
    from authservice import signals as core_signals

    core_signals.social_sign_in_committing.connect(refuse_social_sign_in, dispatch_uid="sso.provider_claims")
