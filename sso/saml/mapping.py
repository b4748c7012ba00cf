"""From a verified assertion to user info (sso.md §5 "Attribute mapping", §8 step 3).

Where the provider's ``mapping`` names no attribute, the names real IdPs send are recognised:
friendly names (``mail``, ``sn``, ``cn`` ...), their ``urn:oid:`` forms and the WS-Federation claim URIs.
"""

from sso import app_settings, linking

CLAIMS = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/"
EMAIL_NAMES = ("email", "mail", "emailAddress", "Email", "urn:oid:0.9.2342.19200300.100.1.3",
               "urn:oid:1.2.840.113549.1.9.1", CLAIMS + "emailaddress")
GIVEN_NAMES = ("givenName", "firstName", "given_name", "urn:oid:2.5.4.42", CLAIMS + "givenname")
SURNAMES = ("surname", "sn", "lastName", "family_name", "urn:oid:2.5.4.4", CLAIMS + "surname")
DISPLAY_NAMES = ("displayName", "cn", "name", "urn:oid:2.16.840.1.113730.3.1.241", "urn:oid:2.5.4.3",
                 CLAIMS + "name")


class MappingError(Exception):
    pass


def raw_attributes(assertion):
    """``{Name: value or [values]}`` of every attribute; also returns ``{FriendlyName: Name}``."""
    values, friendly = {}, {}
    for statement in assertion.attribute_statement or []:
        for attribute in statement.attribute or []:
            if not attribute.name:
                continue
            texts = [(value.text or "").strip() for value in attribute.attribute_value or []]
            previous = values.get(attribute.name)
            if previous is not None:
                texts = (previous if isinstance(previous, list) else [previous]) + texts
            values[attribute.name] = texts[0] if len(texts) == 1 else texts
            if attribute.friendly_name:
                friendly.setdefault(attribute.friendly_name, attribute.name)
    return values, friendly


def _lookup(values, friendly, names):
    for name in names:
        if not name:
            continue
        key = name if name in values else friendly.get(name)
        if key is not None:
            value = values[key]
            if isinstance(value, list):
                value = next((item for item in value if item), "")
            if value:
                return value
    return None


def _names(configured, fallbacks):
    return (configured,) if configured else fallbacks


def identity(name_id, assertion, config):
    """A ``linking.identity`` for the NameID and attributes of ``assertion``; raises MappingError."""
    mapping = config.get("mapping")
    mapping = mapping if isinstance(mapping, dict) else {}  # a legacy row of another shape maps nothing
    values, friendly = raw_attributes(assertion)
    if not name_id:
        raise MappingError("SAML response is missing the NameID")
    subject = name_id
    if mapping.get("id") and mapping["id"] != "nameID":
        # No fallback to the NameID: account_id would mix two namespaces, and a NameID equal to another
        # user's attribute value would sign in as them (I1).
        subject = _lookup(values, friendly, (mapping["id"],))
        if not isinstance(subject, str) or not subject:
            raise MappingError("SAML response is missing the attribute that identifies the account")
    email = _lookup(values, friendly, _names(mapping.get("email"), EMAIL_NAMES)) or name_id
    email = email.strip().lower()
    if "@" not in email:
        raise MappingError("SAML response is missing the email")
    given = _lookup(values, friendly, _names(mapping.get("firstName"), GIVEN_NAMES))
    surname = _lookup(values, friendly, _names(mapping.get("lastName"), SURNAMES))
    name = " ".join(part for part in (given, surname) if part) or _lookup(
        values, friendly, _names(mapping.get("name"), DISPLAY_NAMES)) or name_id
    verified = False
    if app_settings.account_linking.trust_email_verified and mapping.get("emailVerified"):
        raw = values.get(mapping["emailVerified"], values.get(friendly.get(mapping["emailVerified"], "")))
        verified = raw is True or raw == "true"
    info = {"id": subject, "email": email, "name": name, "emailVerified": verified}
    extra = mapping.get("extraFields")
    for field_name, attribute in (extra if isinstance(extra, dict) else {}).items():
        if not isinstance(attribute, str):
            continue
        key = attribute if attribute in values else friendly.get(attribute)
        info[field_name] = values.get(key) if key else None
    info["attributes"] = values
    return linking.identity(subject, info)
