"""Organization roles from the IdP's groups (issue 14 §4, docs/sso-roles.md).

A provider's ``organizationProvisioning.roleMapping`` (stored in ``SsoProvider.organization_provisioning``)
names the SAML attribute or OIDC claim that carries the user's groups, and maps group values to roles::

    {"attribute": "groups",
     "values": {"okta-admins": "admin", "everyone": "member"},
     "defaultRole": "member"}

- :func:`role_for_groups` turns a list of group names into one role; SCIM group membership uses it too,
  so a user's role is the same whichever way the IdP told us about their groups.
- :func:`groups_from_user_info` reads the groups from a sign-in's ``user_info`` (the raw claims or
  attributes under ``attributes``).

Roles are only ever ``member`` or ``admin`` (:data:`ASSIGNABLE_ROLES`): an IdP claim, which whoever
administers the IdP controls, never makes an ``owner`` (that would hand over the organization).
"""

from rest_framework import serializers

from sso import app_settings as sso_settings

MEMBER, ADMIN, OWNER = "member", "admin", "owner"
ASSIGNABLE_ROLES = (MEMBER, ADMIN)
# When several groups match, the strongest role wins.
RANK = {MEMBER: 0, ADMIN: 1}
# Bounds (I6): a mapping is configuration, a group list comes from the IdP on every sign-in.
MAX_MAPPED_VALUES = 200
MAX_NAME = 256
MAX_GROUPS = 1000


def mapping_of(provider):
    """The provider's role mapping dict, or None when it has none."""
    config = getattr(provider, "organization_provisioning", None) or {}
    mapping = config.get("roleMapping") if isinstance(config, dict) else None
    return mapping if isinstance(mapping, dict) and mapping.get("attribute") else None


def default_role(provider=None):
    """The mapping's ``defaultRole``, else the deployment's ``organization_provisioning.default_role``."""
    mapping = mapping_of(provider) if provider is not None else None
    role = (mapping or {}).get("defaultRole") or sso_settings.organization_provisioning.default_role
    return role if role in ASSIGNABLE_ROLES else MEMBER


def role_for_groups(provider, group_names: list[str]) -> str:
    """The role ``group_names`` give in ``provider``'s organization: the strongest role any of them
    maps to, else the default role. Group values match exactly (IdPs send stable names or ids)."""
    mapping = mapping_of(provider)
    values = mapping.get("values") if mapping else None
    best = None
    if isinstance(values, dict):
        for name in group_names[:MAX_GROUPS]:
            role = values.get(name) if isinstance(name, str) else None
            if role in ASSIGNABLE_ROLES and (best is None or RANK[role] > RANK[best]):
                best = role
    return best or default_role(provider)


def groups_from_user_info(provider, user_info):
    """The group names a sign-in carries in the mapped claim or attribute; None without a mapping.

    OIDC claims are a list of strings or one string; SAML attributes one value or a list. Anything
    else (numbers, objects) is not a group name and is left out; an absent claim is no groups, so
    a user removed from every group falls back to the default role.
    """
    mapping = mapping_of(provider)
    if mapping is None:
        return None
    attributes = (user_info or {}).get("attributes") or {}
    value = attributes.get(mapping["attribute"]) if isinstance(attributes, dict) else None
    items = value if isinstance(value, list) else [value]
    # Exactly as sent: no strip, no folding. A group "admins\u00a0" is another group at the IdP (some let
    # users name their own), so it must not be read as "admins" (attack 14, group name padding).
    return [item for item in items[:MAX_GROUPS] if isinstance(item, str) and item]


def role_from_user_info(provider, user_info):
    """The role the sign-in's groups give; None when the provider maps no groups."""
    groups = groups_from_user_info(provider, user_info)
    return None if groups is None else role_for_groups(provider, groups)


# --- the registration body's ``organizationProvisioning`` ------------------------------------------
def validate_mapping(value):
    """``organizationProvisioning`` as registration and update take it; ValidationError when wrong.

    ``owner`` is refused here already, so a stored mapping can never name it.
    """
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) - {"roleMapping"}:
        raise serializers.ValidationError("organizationProvisioning takes only roleMapping")
    mapping = value.get("roleMapping")
    if mapping is None:
        return {}
    if not isinstance(mapping, dict) or set(mapping) - {"attribute", "values", "defaultRole"}:
        raise serializers.ValidationError("roleMapping takes attribute, values and defaultRole")
    attribute = mapping.get("attribute")
    if not isinstance(attribute, str) or not 0 < len(attribute) <= MAX_NAME or attribute != attribute.strip():
        raise serializers.ValidationError("roleMapping.attribute must name a claim or attribute")
    values = mapping.get("values", {})
    if not isinstance(values, dict) or len(values) > MAX_MAPPED_VALUES:
        raise serializers.ValidationError(f"roleMapping.values must map at most {MAX_MAPPED_VALUES} groups")
    for group, role in values.items():
        # Refused, not stripped: the sign-in compares names exactly, so a padded key would either never
        # match or, stripped here, match a different group than the one the admin wrote.
        if not 0 < len(group) <= MAX_NAME or "\x00" in group or group != group.strip():
            raise serializers.ValidationError("roleMapping.values has an invalid group name (empty, too long, "
                                              "or with leading or trailing spaces)")
        if role not in ASSIGNABLE_ROLES:
            raise serializers.ValidationError(f"roleMapping.values may map to {' or '.join(ASSIGNABLE_ROLES)} only")
    role = mapping.get("defaultRole")
    if role is not None and role not in ASSIGNABLE_ROLES:
        raise serializers.ValidationError(f"roleMapping.defaultRole may be {' or '.join(ASSIGNABLE_ROLES)} only")
    cleaned = {"attribute": attribute, "values": dict(values)}
    if role is not None:
        cleaned["defaultRole"] = role
    return {"roleMapping": cleaned}
