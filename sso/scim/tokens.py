"""SCIM bearer tokens: made once, shown once, stored as their SHA-256, one live token per connection.

The token keeps better-auth's shape, ``base64url("<secret>:<providerId>[:<organizationId>]")``, so an
IdP configured against better-auth takes it unchanged; only its hash is stored (I10). A new token
replaces the old one at once (rotation); revoking clears it. A token is a 24-character random
string's worth of entropy (~143 bits), so an unsalted SHA-256 is enough: nothing to brute-force.
"""

import base64
import hashlib
import logging

from django.db import transaction
from django.utils import timezone

from authservice.tokens import random_string
from sso import provider_claims
from sso.scim.models import ScimConnection

logger = logging.getLogger("sso")

SECRET_LENGTH = 32
# Bearer values longer than this are no token of ours: refused before hashing (I6).
MAX_TOKEN_LENGTH = 1024


def digest(token):
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def issue(provider, *, user=None):
    """A new token for ``provider``'s connection (made on first use); the previous token stops working."""
    secret = random_string(SECRET_LENGTH)
    claim = f"{secret}:{provider.provider_id}"
    if provider.organization_id:
        claim += f":{provider.organization_id}"
    token = base64.urlsafe_b64encode(claim.encode()).decode().rstrip("=")
    with transaction.atomic():
        connection, _ = ScimConnection.objects.select_for_update().get_or_create(provider=provider)
        connection.token_hash = digest(token)
        connection.token_hint = token[-4:]
        connection.token_created_at = timezone.now()
        connection.token_created_by = user
        connection.save(update_fields=["token_hash", "token_hint", "token_created_at", "token_created_by"])
    return connection, token


def revoke(connection):
    """The connection's token stops working; provisioned users and groups stay."""
    connection.token_hash = None
    connection.token_hint = ""
    connection.save(update_fields=["token_hash", "token_hint"])


def authenticate(authorization):
    """The connection whose live token the ``Authorization`` header carries, else None.

    Looked up by the token's hash on a unique index: the comparison is the database's equality on a
    value the caller cannot steer (a hash), so timing tells nothing about the stored token.
    """
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    connection = ScimConnection.objects.select_related("provider").filter(token_hash=digest(token)).first()
    if connection is None:
        return None
    claim = provider_claims.claims().get(connection.provider.provider_id)
    if claim is not None:
        # The connection of a row whose id the deployment claims (a settings provider's, a social
        # provider's): SCIM adoption trusts accounts by provider_id, which are that provider's users too
        # (I1, attack passes 14d/14e). Dead until the row is deleted. A 401, not the API's 409: the SCIM
        # client is the IdP, which cannot resolve it; the operator reads the log line.
        logger.error("SCIM token of the SSO provider row %r refused: its provider_id is claimed by %s. %s "
                     "(system check sso.E019)", connection.provider.provider_id, claim,
                     provider_claims.resolution(claim))
        return None
    now = timezone.now()
    # At most one write a minute per connection: "last used" for the admin, not an audit log.
    if connection.last_used_at is None or (now - connection.last_used_at).total_seconds() > 60:
        ScimConnection.objects.filter(pk=connection.pk).update(last_used_at=now)
    return connection
