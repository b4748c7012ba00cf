"""SSO events as Django signals. Receivers get ``sender`` plus the keyword arguments listed.

Sent after the change is written; a receiver that raises does not undo it.
"""

from django.dispatch import Signal

# provider: the new SsoProvider; user: who registered it.
provider_registered = Signal()
# provider.
provider_updated = Signal()
# provider_id, user: sent after the provider and its accounts are gone.
provider_deleted = Signal()
# provider: its domain was proven by a DNS TXT record.
domain_verified = Signal()
# organization, user: the creator (now its owner).
organization_created = Signal()
# member: a Member row just inserted (creator, or SSO provisioning).
member_added = Signal()
# user, user_info, token, provider, is_new_user: every successful SSO sign-in, after the session row
# exists and before organization membership (sso.md §8 step 3).
user_provisioned = Signal()
# provider, name_id, session_indexes (list, empty = all), sessions (the Session rows, already deleted):
# the provider's IdP sent a verified LogoutRequest (SAML Single Logout, docs/saml-slo.md).
saml_logout_requested = Signal()
