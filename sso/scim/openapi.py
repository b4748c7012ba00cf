"""The SCIM routes in the OpenAPI document (authservice/api/openapi.py ``extensions``).

They are not registry endpoints (sso/scim/views.py says why), so they are described here: bearer
authentication, ``application/scim+json`` bodies, answers and SCIM Error bodies. The resource schemas
are kept loose (``additionalProperties``): the normative ones are served by ``/scim/v2/Schemas``.
"""

from sso import app_settings as sso_settings

SCIM = "application/scim+json"
PREFIX = "/scim/v2"
SCHEME = "scimBearer"
TAG = "scim"

STRING = {"type": "string"}


def _ref(name):
    return {"$ref": f"#/components/schemas/{name}"}


COMPONENTS = {
    "ScimError": {"type": "object", "required": ["schemas", "status"], "properties": {
        "schemas": {"type": "array", "items": STRING}, "status": STRING, "scimType": STRING, "detail": STRING}},
    "ScimResource": {"type": "object", "required": ["schemas"], "additionalProperties": True, "properties": {
        "schemas": {"type": "array", "items": STRING}, "id": STRING, "externalId": STRING,
        "meta": {"type": "object"}}},
    "ScimUserInput": {"type": "object", "required": ["userName"], "additionalProperties": True, "properties": {
        "schemas": {"type": "array", "items": STRING}, "userName": STRING, "externalId": STRING,
        "displayName": STRING, "active": {"type": ["boolean", "string"]},
        "name": {"type": "object"}, "emails": {"type": "array", "items": {"type": "object"}}}},
    "ScimGroupInput": {"type": "object", "required": ["displayName"], "additionalProperties": True, "properties": {
        "schemas": {"type": "array", "items": STRING}, "displayName": STRING, "externalId": STRING,
        "members": {"type": "array", "items": {"type": "object", "properties": {"value": STRING,
                                                                                "display": STRING}}}}},
    "ScimPatchOp": {"type": "object", "required": ["schemas", "Operations"], "properties": {
        "schemas": {"type": "array", "items": STRING},
        "Operations": {"type": "array", "items": {"type": "object", "required": ["op"], "properties": {
            "op": STRING, "path": STRING, "value": {}}}}}},
    "ScimSearchRequest": {"type": "object", "properties": {
        "schemas": {"type": "array", "items": STRING}, "filter": STRING, "startIndex": {"type": "integer"},
        "count": {"type": "integer"}, "attributes": {"type": "array", "items": STRING},
        "excludedAttributes": {"type": "array", "items": STRING}}},
    "ScimListResponse": {"type": "object", "required": ["schemas", "totalResults"], "properties": {
        "schemas": {"type": "array", "items": STRING}, "totalResults": {"type": "integer"},
        "startIndex": {"type": "integer"}, "itemsPerPage": {"type": "integer"},
        "Resources": {"type": "array", "items": _ref("ScimResource")}}},
}

_QUERY = [
    {"name": "filter", "in": "query", "required": False, "schema": STRING},
    {"name": "startIndex", "in": "query", "required": False, "schema": {"type": "integer"}},
    {"name": "count", "in": "query", "required": False, "schema": {"type": "integer"}},
]
_PROJECTION = [
    {"name": "attributes", "in": "query", "required": False, "schema": STRING},
    {"name": "excludedAttributes", "in": "query", "required": False, "schema": STRING},
]
_ID = [{"name": "id", "in": "path", "required": True, "schema": STRING}]


def _json(schema, description="Success"):
    return {"description": description, "content": {SCIM: {"schema": schema}}}


def _errors(*statuses):
    described = {"400": "Bad request (scimType says why)", "401": "No valid bearer token",
                 "5XX": "Server error (SCIM Error schema; never expected)",
                 "404": "No such resource (of this connection)", "409": "uniqueness",
                 "413": "Body too large", "415": "Not application/scim+json", "501": "Not implemented"}
    return {status: _json(_ref("ScimError"), described[status]) for status in statuses}


def _op(operation_id, summary, responses, parameters=(), body=None):
    op = {"operationId": operation_id, "summary": summary, "tags": [TAG], "security": [{SCHEME: []}],
          "responses": {**responses, **_errors("400", "401", "404", "5XX")}}
    if parameters:
        op["parameters"] = list(parameters)
    if body is not None:
        # Inline, as the registry's bodies are (the reference page lists their fields).
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": COMPONENTS[body]},
                                                           SCIM: {"schema": COMPONENTS[body]}}}
        op["responses"].update(_errors("409", "413", "415"))
    return op


def _resource_paths(name, input_schema):
    item = {"200": _json(_ref("ScimResource"))}
    patch_answers = {"200": _json(_ref("ScimResource")), "204": {"description": "Changed (no body)"}}
    return {
        f"{PREFIX}/{name}": {
            "get": _op(f"scim_list_{name.lower()}", f"List or filter {name}",
                       {"200": _json(_ref("ScimListResponse"))}, _QUERY + _PROJECTION),
            "post": _op(f"scim_create_{name.lower()}", f"Create a {name[:-1]}",
                        {"201": _json(_ref("ScimResource"), "Created")}, _PROJECTION, input_schema),
        },
        f"{PREFIX}/{name}/.search": {
            "post": _op(f"scim_search_{name.lower()}", f"Search {name} (the query in the body)",
                        {"200": _json(_ref("ScimListResponse"))}, body="ScimSearchRequest"),
        },
        f"{PREFIX}/{name}/{{id}}": {
            "get": _op(f"scim_get_{name.lower()}", f"One {name[:-1]}", item, _ID + _PROJECTION),
            "put": _op(f"scim_replace_{name.lower()}", f"Replace a {name[:-1]}", item, _ID + _PROJECTION,
                       input_schema),
            "patch": _op(f"scim_patch_{name.lower()}", f"Patch a {name[:-1]}", patch_answers, _ID + _PROJECTION,
                         "ScimPatchOp"),
            "delete": _op(f"scim_delete_{name.lower()}", f"Delete a {name[:-1]}",
                          {"204": {"description": "Deleted"}}, _ID),
        },
    }


def _discovery_paths():
    return {
        f"{PREFIX}/ServiceProviderConfig": {"get": _op(
            "scim_service_provider_config", "What this SCIM server supports", {"200": _json(_ref("ScimResource"))})},
        f"{PREFIX}/Schemas": {"get": _op("scim_schemas", "The resource schemas",
                                         {"200": _json(_ref("ScimListResponse"))})},
        f"{PREFIX}/Schemas/{{id}}": {"get": _op("scim_schema", "One schema by URN",
                                                {"200": _json(_ref("ScimResource"))}, _ID)},
        f"{PREFIX}/ResourceTypes": {"get": _op("scim_resource_types", "The resource types",
                                               {"200": _json(_ref("ScimListResponse"))})},
        f"{PREFIX}/ResourceTypes/{{id}}": {"get": _op("scim_resource_type", "One resource type",
                                                      {"200": _json(_ref("ScimResource"))}, _ID)},
    }


def paths():
    return {**_discovery_paths(), **_resource_paths("Users", "ScimUserInput"),
            **_resource_paths("Groups", "ScimGroupInput")}


def extend(document):
    """Add the SCIM routes while SCIM is on (as the routes themselves answer only then)."""
    if not sso_settings.scim.enabled:
        return
    document["paths"].update(paths())
    document["components"]["schemas"].update(COMPONENTS)
    document["components"]["securitySchemes"][SCHEME] = {
        "type": "http", "scheme": "bearer",
        "description": "A SCIM connection's token (POST /scim/generate-token, the admin or manage.py scim_token)"}
    if not any(tag["name"] == TAG for tag in document["tags"]):
        document["tags"].append({"name": TAG})
