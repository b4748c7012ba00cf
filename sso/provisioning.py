"""After every successful SSO sign-in: the provisionUser hook, then organization membership (sso.md §8).

:func:`run` is what SSO plugs into the core flow's provisioning hook (``Authority.provision`` in
authservice/flows/external_identity.py), so it runs once the session row exists, and a failure
(an APIError from a hook) removes that session. Both hooks are dotted-path callables in
``AUTHSERVICE_SSO`` (``provision_user``, ``organization_provisioning.get_role``); provisioning is also
sent as the ``sso.signals.user_provisioned`` signal, and a new membership as ``sso.signals.member_added``.
"""

import logging

from sso import app_settings as sso_settings
from sso import organizations, signals
from sso.models import Member, Organization, SsoProvider

logger = logging.getLogger("sso")

ASSIGNABLE_ROLES = (Member.MEMBER, Member.ADMIN)


def run(*, user, user_info, token, provider, is_new_user):
    """Steps 3 and 4, in order."""
    provision(user=user, user_info=user_info, token=token, provider=provider, is_new_user=is_new_user)
    add_to_organization(user=user, user_info=user_info, token=token, provider=provider)


def provision(*, user, user_info, token, provider, is_new_user):
    """Step 3: runs on every SSO sign-in (the seed), told whether the user is new; only on the one that
    created the user when ``provision_user_on_every_login`` is off (better-auth's default)."""
    if not (is_new_user or sso_settings.provision_user_on_every_login):
        return
    hook = sso_settings.callable_setting(sso_settings.provision_user)
    if hook is not None:
        hook(user=user, user_info=user_info, token=token, provider=provider, is_new_user=is_new_user)
    signals.user_provisioned.send(sender=SsoProvider, user=user, user_info=user_info, token=token,
                                  provider=provider, is_new_user=is_new_user)


def add_to_organization(*, user, user_info, token, provider):
    """Step 4: make the user a member of the provider's organization, once. Returns the new Member or None."""
    settings = sso_settings.organization_provisioning
    if not provider.organization_id or not sso_settings.organization.enabled or settings.disabled:
        return None
    organization = Organization.objects.filter(pk=provider.organization_id).first()
    if organization is None or Member.objects.filter(organization=organization, user=user).exists():
        return None
    role = resolve_role(user=user, user_info=user_info, token=token, provider=provider)
    return organizations.add_member(organization.pk, user, role)


def resolve_role(*, user, user_info, token, provider):
    default = sso_settings.organization_provisioning.default_role or Member.MEMBER
    get_role = sso_settings.callable_setting(sso_settings.organization_provisioning.get_role)
    role = get_role(user=user, user_info=user_info, token=token, provider=provider) if get_role else default
    if role not in ASSIGNABLE_ROLES:
        # SSO may never mint owners: an IdP-controlled claim must not take over the organization.
        logger.warning("SSO provider %s: role %r is not assignable, using %r", provider.provider_id, role, default)
        return default if default in ASSIGNABLE_ROLES else Member.MEMBER
    return role
