"""The OpenAPI 3.1 document, built from the endpoint registry so it cannot drift from the routes.

Everything comes from the ``@endpoint`` declarations: path and path parameters, method, operationId (the
in-process name), summary, tags, the request body and query schemas (read from the endpoint's ``Input``
classes), the success body (the declaration's ``response`` name, looked up in ``SUCCESS`` below), redirects,
and the session cookie on guarded endpoints. A plugin that registers endpoints is documented without a
line here: an unknown ``response`` name, or none, documents a body of any shape rather than breaking the
document. A ``response`` may also be a JSON Schema dict, used as given.

Every operation answers errors with the shared ``Error`` shape ``{message, code, status}`` (core.md §1.4),
documented as the ``4XX`` and ``5XX`` ranges because any endpoint can meet the router's 404/413/415/429.
"""

import functools
import re
from importlib import metadata
from typing import NamedTuple

from rest_framework import serializers

from authservice import additional_fields, app_settings, cookies
from authservice.api import inputs
from authservice.api.registry import registry

OPENAPI_VERSION = "3.1.0"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
COOKIE_SCHEME = "sessionCookie"

_PARAM = re.compile(r":([A-Za-z_][A-Za-z0-9_]*)")


def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


def obj(required=(), **properties):
    """An object schema; keys clients do not know may be added (plugins extend records, core.md §6)."""
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


STRING = {"type": "string"}
BOOLEAN = {"type": "boolean"}
DATE = {"type": "string", "format": "date-time"}


def nullable(schema):
    return {"anyOf": [schema, {"type": "null"}]}


# --- records (core.md §6) and the error body (§1.4) --------------------------------------------
COMPONENTS = {
    "Error": {
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "For humans; clients may show it"},
            # UPPER_SNAKE in core, but the SSO plugin keeps better-auth's lower-case discovery codes.
            "code": {"type": "string", "minLength": 1, "description": "Clients switch on it"},
            "status": {"type": "integer", "minimum": 100, "maximum": 599, "description": "The HTTP status"},
        },
        "required": ["message", "code", "status"],
        "additionalProperties": False,
    },
    "User": obj(
        ("id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt"),
        id=STRING, name=STRING, email=STRING, emailVerified=BOOLEAN,
        image={"type": ["string", "null"]}, createdAt=DATE, updatedAt=DATE,
        twoFactorEnabled=BOOLEAN,  # while the two_factor plugin is enabled
    ),
    "Session": obj(
        ("id", "token", "userId", "expiresAt", "createdAt", "updatedAt", "ipAddress", "userAgent"),
        id=STRING, token=STRING, userId=STRING, expiresAt=DATE, createdAt=DATE, updatedAt=DATE,
        ipAddress=STRING, userAgent=STRING,
        twoFactorEnrollmentRequired={"const": True},  # get-session, only while two_factor.required_for is pending
    ),
    "SsoProvider": obj(("providerId",), providerId=STRING, issuer=STRING, domain=STRING,
                       organizationId={"type": ["string", "null"]}, domainVerified=BOOLEAN,
                       oidcConfig={"type": ["object", "null"]}, samlConfig={"type": ["object", "null"]},
                       domains={"type": "array", "items": ref("SsoProviderDomain")},
                       organizationProvisioning={"type": ["object", "null"]}),
    # One domain of a provider and its verification state (issue 14 §3, docs/sso-domains.md).
    "SsoProviderDomain": obj(("domain", "status", "txtRecord"), domain=STRING,
                             status={"enum": ["pending", "verified", "failed"]}, txtRecord=STRING,
                             domainVerificationToken={"type": ["string", "null"]},
                             verifiedAt={"type": ["string", "null"]}, checkedAt={"type": ["string", "null"]},
                             recordMissingSince={"type": ["string", "null"]}),
    "Organization": obj(("id", "name", "slug"), id=STRING, name=STRING, slug=STRING,
                        logo={"type": ["string", "null"]}, createdAt=DATE),
    "Passkey": obj(
        ("id", "publicKey", "userId", "credentialID", "counter", "deviceType", "backedUp", "createdAt"),
        id=STRING, name={"type": ["string", "null"]}, publicKey=STRING, userId=STRING, credentialID=STRING,
        counter={"type": "integer"}, deviceType={"enum": ["singleDevice", "multiDevice"]}, backedUp=BOOLEAN,
        transports=STRING, createdAt=DATE, aaguid={"type": ["string", "null"]},
    ),
    "Account": obj(
        ("id", "accountId", "providerId", "userId", "scopes", "createdAt", "updatedAt"),
        id=STRING, accountId=STRING, providerId=STRING, userId=STRING,
        scopes={"type": "array", "items": STRING}, createdAt=DATE, updatedAt=DATE,
    ),
}


def schemas():
    """The components' schemas, the User with the project's returned additional fields."""
    extra = additional_fields.schema_properties()
    if not extra:
        return COMPONENTS
    user = COMPONENTS["User"]
    return {**COMPONENTS, "User": {**user, "properties": {**user["properties"], **extra}}}


class Success(NamedTuple):
    """What a successful call answers: a JSON body (schema), an HTML page, a 302, or a mix."""

    json: object = None
    html: bool = False
    xml: bool = False
    redirect: bool = False
    description: str = "Success"
    status: str = "200"


# A name this table does not know: any 2xx JSON answer, so a plugin never breaks the document.
ANY = Success(json={}, description="Success (shape not documented)", status="2XX")

# ``Endpoint.response`` name -> success answer. Every name used by a declaration belongs here.
SUCCESS = {
    "Ok": Success(obj(("ok",), ok=BOOLEAN)),
    "Status": Success(obj(("status",), status=BOOLEAN)),
    "StatusMessage": Success(obj(("status", "message"), status=BOOLEAN, message=STRING)),
    "Success": Success(obj(("success",), success=BOOLEAN)),
    "SuccessMessage": Success(obj(("success", "message"), success=BOOLEAN, message=STRING)),
    "TokenUser": Success(obj(("token", "user"), token={"type": ["string", "null"]}, user=ref("User"))),
    "SignIn": Success({"anyOf": [
        obj(("redirect", "token", "user"), redirect=BOOLEAN, token=STRING, url=STRING, user=ref("User")),
        # A user with two-factor authentication: no session yet (the two_factor plugin).
        obj(("twoFactorRedirect", "twoFactorMethods"), twoFactorRedirect=BOOLEAN,
            twoFactorMethods={"type": "array", "items": {"type": "string", "enum": ["totp", "otp"]}}),
    ]}),
    "SessionUser": Success(obj(("session", "user"), session=ref("Session"), user=ref("User"))),
    "PasskeySignIn": Success({"anyOf": [
        obj(("session", "user"), session=ref("Session"), user=ref("User")),
        # A presence-only assertion (no UV) of a user with two-factor authentication: the first step only.
        obj(("twoFactorRedirect", "twoFactorMethods"), twoFactorRedirect=BOOLEAN,
            twoFactorMethods={"type": "array", "items": {"type": "string", "enum": ["totp", "otp"]}}),
    ]}),
    "SessionUserOrNull": Success(
        nullable(obj(("session", "user"), session=ref("Session"), user=ref("User"))),
        description="The session and its user, or null without a valid session",
    ),
    "Session": Success(obj(("session",), session=ref("Session"))),
    "SessionList": Success({"type": "array", "items": ref("Session")}),
    "AccountList": Success({"type": "array", "items": ref("Account")}),
    "User": Success(obj(("user",), user=ref("User"))),
    "StatusUserOrRedirect": Success(
        obj(("status",), status=BOOLEAN, user={"anyOf": [ref("User"), {"type": "null"}]}),
        redirect=True, description="Done; a 302 to callbackURL when one was given",
    ),
    "Redirect": Success(redirect=True, description="Always a redirect"),
    # GET /error: a page with DEBUG on, else a 302 (core.md §4.2).
    "Html": Success(html=True, redirect=True, description="An HTML page, or a 302 where configured"),
    "Xml": Success(xml=True, description="An XML document"),
    "Page": Success(html=True, description="An HTML page"),
    "OpenAPI": Success(obj(("openapi", "info", "paths"), openapi=STRING, info={"type": "object"},
                           paths={"type": "object"}), description="This document"),
    # Social sign-in and link-social (core.md §5.1, §4.19).
    "SocialSignIn": Success(obj(("redirect",), redirect=BOOLEAN, url=STRING, token=STRING,
                                user=ref("User"), status=BOOLEAN)),
    "SocialLink": Success(obj(("url", "redirect"), url=STRING, redirect=BOOLEAN, status=BOOLEAN)),
    "UrlRedirect": Success(obj(("url", "redirect"), url=STRING, redirect=BOOLEAN)),
    "TwoFactorEnabled": Success(obj(("method",), method={"type": "string", "enum": ["otp", "totp"]},
                                    totpURI=STRING, backupCodes={"type": "array", "items": STRING})),
    "TotpURI": Success(obj(("totpURI",), totpURI=STRING)),
    "BackupCodes": Success(obj(("status", "backupCodes"), status=BOOLEAN,
                               backupCodes={"type": "array", "items": STRING})),
    "TrustedDeviceList": Success({"type": "array", "items": obj(
        ("id", "createdAt", "expiresAt"), id=STRING, userAgent=STRING, ipAddress=STRING,
        createdAt=DATE, expiresAt=DATE)}),
    "NoContent": Success(status="204", description="Done, no body"),
    # The passkey plugin: WebAuthn options as the browser's navigator.credentials takes them (JSON form).
    "PasskeyOptions": Success(obj(("challenge",), challenge=STRING, rp={"type": "object"}, user={"type": "object"},
                                  timeout={"type": "number"}, rpId=STRING)),
    "PasskeyRegistered": Success({"allOf": [ref("Passkey"), obj(session=ref("Session"), user=ref("User"))]}),
    "PasskeyList": Success({"type": "array", "items": ref("Passkey")}),
    "PasskeyUpdated": Success(obj(("passkey",), passkey=ref("Passkey"))),
    # The SSO plugin and its organization subset (sso.md); kept loose where the plugin may add keys.
    "DomainVerificationToken": Success(obj(("domainVerificationToken",), domainVerificationToken=STRING,
                                           domains={"type": "array", "items": ref("SsoProviderDomain")}),
                                       status="201"),
    "SsoProvider": Success(ref("SsoProvider")),
    "ScimToken": Success(obj(("scimToken",), scimToken=STRING), status="201"),
    "SsoProviderRegistered": Success(ref("SsoProvider")),
    "SsoProviderList": Success(obj(("providers",), providers={"type": "array", "items": ref("SsoProvider")})),
    "Organization": Success(ref("Organization")),
    "OrganizationList": Success({"type": "array", "items": ref("Organization")}),
    "MemberList": Success(obj(("members", "total"), members={"type": "array", "items": {"type": "object"}},
                              total={"type": "integer"})),
}


_SCHEMA_KEYWORDS = {"$ref", "properties", "items", "anyOf", "oneOf", "allOf", "enum", "const"}
_JSON_TYPES = {"string", "boolean", "number", "integer", "object", "array", "null"}


def _dict_response(response):
    """A JSON Schema as given, or the shorthand ``{"url": "string", "redirect": "boolean"}``."""
    if _SCHEMA_KEYWORDS & set(response) or response.get("type") in ("object", "array"):
        return response
    properties = {
        key: ({"type": value} if value in _JSON_TYPES else {}) if isinstance(value, str) else value
        for key, value in response.items()
    }
    return {"type": "object", "properties": properties}


def success_of(endpoint):
    response = endpoint.response
    if isinstance(response, dict):
        found = Success(json=_dict_response(response))
    else:
        found = SUCCESS.get(response, ANY) if response else ANY
    if getattr(endpoint, "redirects", False) or endpoint.extra.get("redirects"):
        found = found._replace(redirect=True)
    return found


# --- Input classes -> JSON Schema ---------------------------------------------------------------
# A custom strict field (a plugin's) says which JSON type it wants in zod's words.
_STRICT_TYPES = {"string": "string", "boolean": "boolean", "number": "number", "array": "array",
                 "object": "object", "record": "object"}

def field_schema(field):
    """The JSON Schema of one DRF field: our strict ``inputs`` fields, and plain DRF ones as a plugin may use."""
    declared = getattr(field, "openapi_schema", None)  # a custom field may describe itself
    if declared is not None:
        return dict(declared() if callable(declared) else declared)
    if isinstance(field, inputs.String):
        schema = {"type": "string"}
        if field.min_length:
            schema["minLength"] = field.min_length
        if getattr(field, "max_length", None):
            schema["maxLength"] = field.max_length
        if field.email:
            schema.update(format="email", maxLength=inputs.EMAIL_MAX_LENGTH)
    elif isinstance(field, inputs.Flag):
        schema = {"type": "string", "description": "A flag: true for any non-empty value"}
    elif isinstance(field, (inputs.Boolean, serializers.BooleanField)):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"}
    elif isinstance(field, inputs.Number):
        schema = {"type": "integer" if field.integer else "number"}
        if field.minimum is not None:
            schema["minimum"] = field.minimum
        if field.maximum is not None:
            schema["maximum"] = field.maximum
    elif isinstance(field, (serializers.FloatField, serializers.DecimalField)):
        schema = {"type": "number"}
    elif isinstance(field, inputs.StringList):
        schema = {"type": "array", "items": {"type": "string"}}
    elif isinstance(field, inputs.NumberList):
        schema = {"type": "array", "items": {"type": "number"}}
    elif isinstance(field, inputs.DateTime):
        schema = dict(DATE)
    elif isinstance(field, inputs.Record):
        schema = {"type": "object"}
        if field.values == "string":
            schema["additionalProperties"] = {"type": "string"}
    elif isinstance(field, serializers.Serializer):
        schema = input_schema(type(field))
    elif isinstance(field, serializers.ListField):
        schema = {"type": "array", "items": field_schema(field.child)}
    elif isinstance(field, serializers.DictField):
        schema = {"type": "object", "additionalProperties": field_schema(field.child)}
    elif isinstance(field, serializers.CharField):
        schema = {"type": "string"}
    elif isinstance(field, inputs._Strict) and field.expected in _STRICT_TYPES:  # noqa: SLF001
        schema = {"type": _STRICT_TYPES[field.expected]}
    else:  # JSONField and anything unknown: any JSON value
        return {"description": field.help_text} if field.help_text else {}
    if getattr(field, "allow_null", False):
        schema["type"] = [schema["type"], "null"]
    if field.help_text:
        schema["description"] = str(field.help_text)
    return schema


def input_fields(input_class):
    return input_class().fields.items()


def input_schema(input_class):
    """An ``Input`` class as an object schema. Unknown keys are ignored by the server, so allowed here."""
    properties, required = {}, []
    for name, field in input_fields(input_class):
        if getattr(field, "undocumented", False):  # accepted, but not for clients to send
            continue
        properties[name] = field_schema(field)
        if field.required:
            required.append(name)
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _form_schema(schema):
    """Form fields are strings (core.md §1.2): only the string-typed fields can be sent that way."""
    def is_string(prop):
        kind = prop.get("type")
        return kind == "string" or (isinstance(kind, list) and "string" in kind)

    properties = {name: prop for name, prop in schema["properties"].items() if is_string(prop)}
    form = {"type": "object", "properties": properties}
    required = [name for name in schema.get("required", ()) if name in properties]
    if required:
        form["required"] = required
    return form


# --- operations ---------------------------------------------------------------------------------
def openapi_path(path):
    """``/reset-password/:token`` -> ``/reset-password/{token}``."""
    return _PARAM.sub(r"{\1}", path)


def _parameters(endpoint):
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in endpoint.param_names
    ]
    if endpoint.query is not None:
        for name, field in input_fields(endpoint.query):
            parameters.append({"name": name, "in": "query", "required": bool(field.required),
                               "schema": field_schema(field)})
    return parameters


def _request_body(endpoint):
    if endpoint.body is None:
        return None
    schema = input_schema(endpoint.body)
    content = {JSON: {"schema": schema}}
    if endpoint.form:
        content[FORM] = {"schema": _form_schema(schema)}
    return {"required": not endpoint.body_optional, "content": content}


def _responses(endpoint):
    found = success_of(endpoint)
    responses = {}
    content = {}
    if found.json is not None:
        content[JSON] = {"schema": found.json}
    if found.html:
        content["text/html"] = {"schema": {"type": "string"}}
    if found.xml:
        content["application/xml"] = {"schema": {"type": "string"}}
    if content:
        responses[found.status] = {"description": found.description, "content": content}
    elif not found.redirect:
        responses[found.status] = {"description": found.description}
    if found.redirect:
        responses["302"] = {
            "description": "Redirect (core.md §1.7)",
            "headers": {"Location": {"required": True, "schema": {"type": "string"}}},
        }
    responses["4XX"] = {"$ref": "#/components/responses/Error"}
    responses["5XX"] = {"$ref": "#/components/responses/Error"}
    return responses


_GUARDS = {
    "session": "Needs a session (401 UNAUTHORIZED without one).",
    "sensitive": "Needs a session, checked against the database (401 UNAUTHORIZED without one).",
    "fresh": "Needs a fresh session (401 UNAUTHORIZED; 403 SESSION_NOT_FRESH when it is too old).",
}


def _enrolment_required():
    options = app_settings.two_factor
    return bool(options.enabled and options.required_for)


def _description(endpoint):
    notes = []
    if endpoint.guard:
        notes.append(_GUARDS.get(endpoint.guard, f"Guard: {endpoint.guard}."))
        if not endpoint.during_enrolment and _enrolment_required():
            notes.append("403 TWO_FACTOR_ENROLLMENT_REQUIRED while two_factor.required_for names the caller "
                         "and they have not enrolled.")
    if endpoint.origin_check and endpoint.method not in ("GET", "HEAD", "OPTIONS"):
        notes.append("A request with cookies must send a trusted Origin (403 otherwise).")
    if endpoint.login_csrf:
        notes.append("Login CSRF protection applies (core.md §1.8).")
    if endpoint.headers_required:
        notes.append("In-process calls must pass headers.")
    return " ".join(notes)


def operation(endpoint):
    op = {
        "operationId": endpoint.name,
        "summary": endpoint.summary or endpoint.name.replace("_", " "),
        "tags": list(endpoint.tags),
    }
    description = _description(endpoint)
    if description:
        op["description"] = description
    parameters = _parameters(endpoint)
    if parameters:
        op["parameters"] = parameters
    body = _request_body(endpoint)
    if body is not None:
        op["requestBody"] = body
    op["responses"] = _responses(endpoint)
    if endpoint.guard:
        op["security"] = [{COOKIE_SCHEME: []}]
    return op


@functools.lru_cache(maxsize=1)
def _version():
    try:
        return metadata.version("django-authservice")
    except metadata.PackageNotFoundError:
        return "0.0.0"


# Plugins' routes that are not registry endpoints (another wire format, e.g. SCIM) add themselves here:
# callables ``extend(document)`` run on the whole document of every registered endpoint.
extensions = []


def build(server_url=None, endpoints=None):
    """The document for ``endpoints`` (default: every registered endpoint, plus what ``extensions`` add),
    served from ``server_url``."""
    paths = {}
    tags = []
    for endpoint in registry if endpoints is None else endpoints:
        paths.setdefault(openapi_path(endpoint.path), {})[endpoint.method.lower()] = operation(endpoint)
        tags += [tag for tag in endpoint.tags if tag not in tags]
    document = {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "authservice",
            "version": _version(),
            "description": "Authentication API, wire-compatible with better-auth. Errors are always "
                           "JSON {message, code, status}.",
        },
        "servers": [{"url": server_url or app_settings.base_path}],
        "tags": [{"name": tag} for tag in tags],
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "responses": {
                "Error": {
                    "description": "Error: {message, code, status} (core.md §1.4)",
                    "content": {JSON: {"schema": ref("Error")}},
                },
            },
            "securitySchemes": {
                COOKIE_SCHEME: {"type": "apiKey", "in": "cookie",
                                "name": cookies.cookie_name(cookies.SESSION_TOKEN),
                                "description": "The session cookie set by sign-in and sign-up"},
            },
        },
    }
    if endpoints is None:
        for extend in extensions:
            extend(document)
    return document
