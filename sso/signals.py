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
# provider, domains: the hostnames just proven by their DNS TXT records (issue 14 §3).
domain_verified = Signal()
# provider, domain: a re-check (sso_verify_domain --all) found the record gone and
# domain_verification.unverify_on_missing_record un-verified it.
domain_unverified = Signal()
# organization, user: the creator (now its owner).
organization_created = Signal()
# member: a Member row just inserted (creator, or SSO provisioning).
member_added = Signal()
# member, previous_role, provider: an SSO sign-in changed the role of a membership SSO manages,
# following the IdP's groups (issue 14 §4, docs/sso-roles.md).
member_role_changed = Signal()
# user, user_info, token, provider, is_new_user: every successful SSO sign-in, after the session row
# and the organization membership exist (sso.md §8 step 3; issue 14 §4 moved membership first).
user_provisioned = Signal()
# provider, name_id, session_indexes (list, empty = all), sessions (the Session rows, already deleted):
# the provider's IdP sent a verified LogoutRequest (SAML Single Logout, docs/saml-slo.md).
saml_logout_requested = Signal()
