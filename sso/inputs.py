"""Input fields the SSO bodies need on top of ``authservice.api.inputs``: URLs, enums, nested objects.

Messages keep zod's wording, so a failure reads ``[body.oidcConfig.clientId] Invalid input: expected
string, received undefined`` or ``[body.issuer] Invalid URL``.
"""

import re

from rest_framework import serializers

from authservice import origins
from authservice.api import inputs
from authservice.api.inputs import js_type
from sso import roles

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*$")


def is_url(value):
    """What ``new URL(value)`` accepts, roughly: a scheme, and a host for http(s).

    Parsed by the one URL parser (``origins.parse``). Whether a scheme may be stored or handed to a
    browser is decided where the field is used (``sso.saml_config.check_locations``, discovery).
    """
    try:
        parts = origins.parse(value)
    except origins.MalformedURL:
        return False
    if not parts.scheme or not _SCHEME.match(parts.scheme) or any(c.isspace() for c in value.strip()):
        return False
    if parts.scheme.lower() in ("http", "https", "ws", "wss", "ftp"):
        return bool(parts.hostname)
    return True


class Url(inputs.String):
    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        if not is_url(data):
            raise serializers.ValidationError("Invalid URL")
        return data


class Choice(inputs._Strict):  # noqa: SLF001 - the shared strict base
    expected = "string"

    def __init__(self, choices, **kwargs):
        self.choices = tuple(choices)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if data not in self.choices:
            options = "|".join(f'"{choice}"' for choice in self.choices)
            raise serializers.ValidationError(f"Invalid option: expected one of {options}")
        return data


class StringOrList(inputs._Strict):  # noqa: SLF001
    expected = "string"

    def to_internal_value(self, data):
        if isinstance(data, str):
            return data
        if isinstance(data, list) and all(isinstance(item, str) for item in data):
            return data
        raise serializers.ValidationError(
            f"Invalid input: expected string or array of strings, received {js_type(data)}")


# Nested objects are a core input type now; kept under this name for the SSO schemas.
Object = inputs.Object


class ServiceList(inputs._Strict):
    """``[{Binding, Location}]`` (idpMetadata.singleSignOnService ...): objects of strings, kept as sent."""

    expected = "array"

    def to_internal_value(self, data):
        if not isinstance(data, list):
            self.wrong_type(data)
        for index, item in enumerate(data):
            if not isinstance(item, dict):
                raise serializers.ValidationError(
                    {str(index): f"Invalid input: expected object, received {js_type(item)}"})
            for key, value in item.items():
                if not isinstance(value, str) or "\x00" in value:
                    raise serializers.ValidationError(
                        {f"{index}.{key}": f"Invalid input: expected string, received {js_type(value)}"})
        return data


# samlConfig's nested objects (sso.md §2): every key the SAML code reads has its JSON type here, so a
# list where a string is used is a 400 at the input, never a 500 later in an anonymous flow (I4).
# Other keys are kept as sent (the stored samlConfig keeps the given fields as sent); no code reads them.
class SamlIdpMetadataInput(Object):
    keep_unknown = True

    metadata = inputs.String(required=False)
    entityID = inputs.String(required=False)
    url = inputs.String(required=False)
    cert = StringOrList(required=False)
    singleSignOnService = ServiceList(required=False)
    singleLogoutService = ServiceList(required=False)
    isAssertionEncrypted = inputs.Boolean(required=False)
    encPrivateKey = inputs.String(required=False)
    encPrivateKeyPass = inputs.String(required=False)
    privateKey = inputs.String(required=False)
    privateKeyPass = inputs.String(required=False)


class SamlSpMetadataInput(Object):
    keep_unknown = True

    metadata = inputs.String(required=False)
    entityID = inputs.String(required=False)
    binding = inputs.String(required=False)
    privateKey = inputs.String(required=False)
    privateKeyPass = inputs.String(required=False)
    isAssertionEncrypted = inputs.Boolean(required=False)
    encPrivateKey = inputs.String(required=False)
    encPrivateKeyPass = inputs.String(required=False)
    signingCert = inputs.String(required=False)
    cert = inputs.String(required=False)
    encryptCert = inputs.String(required=False)
    encCert = inputs.String(required=False)


class OrganizationProvisioning(inputs._Strict):  # noqa: SLF001
    """``organizationProvisioning: {roleMapping: {attribute, values, defaultRole}}`` (issue 14 §4):
    checked by ``sso.roles.validate_mapping`` (roles ``member``/``admin`` only, bounded sizes)."""

    expected = "object"
    openapi_schema = {"type": ["object", "null"], "properties": {"roleMapping": {
        "type": ["object", "null"], "required": ["attribute"], "properties": {
            "attribute": {"type": "string", "description": "The OIDC claim or SAML attribute holding the groups"},
            "values": {"type": "object", "additionalProperties": {"enum": ["member", "admin"]}},
            "defaultRole": {"enum": ["member", "admin"]}}}}}

    def __init__(self, **kwargs):
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            self.wrong_type(data)
        return roles.validate_mapping(data)
