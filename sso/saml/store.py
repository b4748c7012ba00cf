"""Server-side SAML records (sso.md §1, §10 rules 1-2), all in the database so every process agrees [D8].

- ``saml-authn-request:<ID>``: a Verification row per AuthnRequest, consumed by an atomic delete.
- ``saml-used-assertion:<ID>``: a :class:`sso.models.SamlUsedAssertion` row under a unique key.
- ``saml-logout-request:<ID>``: a Verification row per LogoutRequest we sent (Single Logout),
  consumed by the LogoutResponse answering it, as an AuthnRequest is by its response.
- ``saml-used-logout:<ID>``: the replay tombstone of a logout message we accepted, in the same table
  and under the same unique key as the assertions' (one replay store).
"""

import json
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from authservice.models import Verification
from sso import app_settings
from sso.models import SamlUsedAssertion
from sso.saml import instants

REQUEST_PREFIX = "saml-authn-request:"
ASSERTION_PREFIX = "saml-used-assertion:"
LOGOUT_REQUEST_PREFIX = "saml-logout-request:"
LOGOUT_MESSAGE_PREFIX = "saml-used-logout:"
REPLAY_FALLBACK = timedelta(minutes=15)


class RequestRefused(Exception):
    """``description`` is the redirect's error_description (sso.md §9)."""

    def __init__(self, description):
        super().__init__(description)
        self.description = description


def remember_request(provider, request_id, relay_state=None):
    """Store the AuthnRequest ``request_id``, with the RelayState that went with it: the response
    answering it must come back with that RelayState, which is bound to the browser (I9)."""
    now = timezone.now()
    expires = now + timedelta(milliseconds=app_settings.saml.request_ttl)
    value = {"id": request_id, "providerId": provider.provider_id, "providerRef": provider.provider_ref(),
             "createdAt": int(now.timestamp() * 1000), "expiresAt": int(expires.timestamp() * 1000),
             "relayState": relay_state}
    Verification.objects.create(identifier=REQUEST_PREFIX + request_id, value=json.dumps(value),
                                expires_at=expires)


def remember_logout_request(provider, request_id, callback_url):
    """Store our LogoutRequest ``request_id`` with where its LogoutResponse sends the browser."""
    now = timezone.now()
    expires = now + timedelta(milliseconds=app_settings.saml.logout_request_ttl)
    value = {"id": request_id, "providerId": provider.provider_id, "callbackURL": callback_url}
    Verification.objects.create(identifier=LOGOUT_REQUEST_PREFIX + request_id, value=json.dumps(value),
                                expires_at=expires)


def consume_logout_request(provider_id, request_id):
    """Take our stored LogoutRequest ``request_id`` of ``provider_id`` (single use); raises RequestRefused."""
    return consume_request(provider_id, request_id, prefix=LOGOUT_REQUEST_PREFIX)


def consume_request(provider_id, request_id, prefix=REQUEST_PREFIX):
    """Take the stored AuthnRequest ``request_id`` of ``provider_id``; raises RequestRefused.

    An ID of another provider is refused and left in place: its own flow may still complete.
    """
    row = Verification.objects.find(prefix + request_id)
    if row is None:
        raise RequestRefused("Unknown or expired request ID")
    try:
        stored = json.loads(row.value)
    except ValueError:
        stored = {}
    if stored.get("providerId") != provider_id:
        raise RequestRefused("Provider mismatch")
    if not row.claim() or row.expires_at <= timezone.now():
        raise RequestRefused("Unknown or expired request ID")
    return stored


def reserve_assertion(provider_id, assertion_id, not_on_or_after=None, prefix=ASSERTION_PREFIX):
    """Record ``assertion_id`` as used; False when it already was (by any process)."""
    now = timezone.now()
    skew = timedelta(milliseconds=app_settings.saml.clock_skew)
    # instants.later saturates: an IdP's NotOnOrAfter at the end of the datetime range must not overflow.
    expires = instants.later(not_on_or_after, skew) if not_on_or_after else now + REPLAY_FALLBACK
    expires = max(expires, now + timedelta(seconds=1))
    identifier = prefix + assertion_id
    if _insert_tombstone(identifier, provider_id, expires):
        return True  # the usual case: a fresh assertion ID, one INSERT
    # An expired tombstone no longer protects anything (the assertion itself has expired by then):
    # it is replaced. Of two requests replacing it, the second INSERT fails.
    expired, _ = SamlUsedAssertion.objects.filter(identifier=identifier, expires_at__lte=now).delete()
    return bool(expired) and _insert_tombstone(identifier, provider_id, expires)


def reserve_logout_message(provider_id, message_id, until):
    """Record the ID of a logout message we accepted until ``until``; False when it already was."""
    return reserve_assertion(provider_id, message_id, until, prefix=LOGOUT_MESSAGE_PREFIX)


def _insert_tombstone(identifier, provider_id, expires):
    try:
        with transaction.atomic():
            SamlUsedAssertion.objects.create(identifier=identifier, provider_id=provider_id, expires_at=expires)
    except IntegrityError:
        return False
    return True


def purge_expired():
    """Delete expired tombstones and AuthnRequest rows (run it from cron, or it runs on sign-in)."""
    now = timezone.now()
    SamlUsedAssertion.objects.filter(expires_at__lte=now).delete()
    for prefix in (REQUEST_PREFIX, LOGOUT_REQUEST_PREFIX):
        Verification.objects.filter(identifier__startswith=prefix, expires_at__lte=now).delete()
