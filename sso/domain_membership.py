"""Organization membership by e-mail domain after a *social* sign-in (sso.md §8, last paragraph;
docs/sso-domains.md "Membership by e-mail domain").

Someone who signs in with Google as ``ada@acme.com`` joins the organization whose SSO provider
verified ``acme.com``, as if they had signed in through that provider. The core knows nothing of
organizations: it sends ``authservice.signals.social_sign_in_committing`` inside the sign-in's
transaction, right after the session row, and :func:`on_social_sign_in` (connected in
``SsoConfig.ready``) adds the membership there. Session and membership commit together, so the first
request after the redirect already sees the member (issue 14 §4).

The conditions, each a line of the spec:

- domain verification and the organization feature are on, ``organization_provisioning.disabled`` is
  not set;
- the user's *stored* e-mail is verified (I1: a membership is never granted on an unverified claim;
  the social provider's claim counts only once the sign-in recorded it);
- the e-mail's domain is covered by trusted domain rows of providers with an ``organizationId``, by
  the rules routing uses (sso/routing.py): each row's own status, a parent domain covers its
  subdomains, and the most specific match wins. If that match names exactly one organization, the
  user joins it; if it names several, nobody is added: the deployment has to decide, not row order;
- the user is not a member yet (a membership is never changed here: roles follow the IdP only on
  the IdP's own sign-ins, sso/provisioning.py). Pending invitations: this subset of the organization
  plugin has none, so none can be pending.

The role follows sso/provisioning.py's rules with nothing from the IdP: ``get_role`` when set (called
with ``user_info={}`` and ``token=None``, as better-auth does: a social provider's claims are not the
IdP's groups and must not be read as such), else the provider's ``roleMapping.defaultRole``, else
``organization_provisioning.default_role``. The membership is managed by the matched provider
(``Member.managed_by``), so that provider's own sign-ins and SCIM keep its role in step afterwards.
"""

from django.db import transaction

from authservice import signals as core_signals
from authservice import users
from authservice.errors import APIError
from sso import app_settings as sso_settings
from sso import hostnames, organizations, provider_claims, provisioning, routing, signals
from sso.models import Member, Organization


def connect():
    core_signals.social_sign_in_committing.connect(on_social_sign_in, dispatch_uid="sso.domain_membership")


def on_social_sign_in(sender, user, **kwargs):
    member = grant(user)
    if member is not None:
        # After the commit, as every membership announcement: no receiver sees uncommitted rows.
        transaction.on_commit(lambda: signals.member_added.send(sender=Member, member=member))


def applies():
    return bool(sso_settings.domain_verification.enabled and sso_settings.organization.enabled
                and not sso_settings.organization_provisioning.disabled)


def provider_for_email(email):
    """The provider whose organization a user with ``email`` joins, or None.

    None when no trusted domain of a provider with an organization covers the address, or when the
    most specific ones belong to more than one organization. Of several providers of that one
    organization, the oldest decides the role (as routing picks).
    """
    try:
        host = hostnames.email_domain(email)
    except APIError:
        return None  # an address no domain can cover (a bad stored value) joins nothing
    best = []
    # A row whose id the deployment claims is used for nothing, membership included (sso.provider_claims).
    entries = routing.covering_entries(host).filter(provider__organization_id__gt="").exclude(
        provider__provider_id__in=list(provider_claims.claims()))
    for entry in entries:
        if best and entry.length < best[0].length:
            break
        best.append(entry)
    if len({entry.provider.organization_id for entry in best}) != 1:
        return None
    return best[0].provider


def grant(user):
    """Add ``user`` to the organization their verified e-mail's domain names; the new Member or None.

    Runs inside the sign-in's transaction; a ``get_role`` hook that raises rolls the sign-in back,
    as it does for an SSO sign-in.
    """
    if not applies() or not users.is_email_verified(user):
        return None
    provider = provider_for_email(users.email_of(user))
    if provider is None or not Organization.objects.filter(pk=provider.organization_id).exists():
        return None
    if Member.objects.filter(organization_id=provider.organization_id, user=user).exists():
        return None
    role = provisioning.resolve_role(user=user, user_info={}, token=None, provider=provider)
    return organizations.add_member(provider.organization_id, user, role, managed_by=provider.pk,
                                    announce=False)
