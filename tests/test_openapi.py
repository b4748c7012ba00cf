"""GET /openapi.json documents exactly the registered endpoints, from their declarations (issue 8 §1)."""

import jsonschema
import pytest
from openapi_spec_validator import validate

from authservice.api import openapi
from authservice.api.registry import Endpoint, registry
from tests.conftest import ORIGIN, PASSWORD, error_of

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def document(api, db):
    response = api.api_get("/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"] == JSON
    return response.json()


def operations(document):
    return {(method.upper(), path): op for path, item in document["paths"].items() for method, op in item.items()}


def op(document, method, path):
    return operations(document)[(method, path)]


def body_schema(document, method, path, media_type=JSON):
    return op(document, method, path)["requestBody"]["content"][media_type]["schema"]


def conforms(document, schema, instance):
    """Validate ``instance`` against a schema of the document, its ``$ref``s resolved in the document."""
    jsonschema.Draft202012Validator({**schema, "components": document["components"]}).validate(instance)


def success_schema(document, method, path, status="200"):
    return op(document, method, path)["responses"][status]["content"][JSON]["schema"]


# --- coverage and validity ----------------------------------------------------------------------
def extension_operations():
    """The SCIM protocol routes: documented by sso/scim/openapi.py, not by the registry (another wire format)."""
    from sso.scim import openapi as scim_openapi

    return {(method.upper(), path): item for path, ops in scim_openapi.paths().items() for method, item in ops.items()}


def test_every_registered_endpoint_is_documented_and_nothing_else(document):
    registered = {(e.method, openapi.openapi_path(e.path)) for e in registry}
    assert set(operations(document)) == registered | set(extension_operations())


def test_the_scim_routes_are_documented_with_their_bearer_token_and_media_type(document):
    users = op(document, "POST", "/scim/v2/Users")
    assert users["security"] == [{"scimBearer": []}]
    assert "application/scim+json" in users["requestBody"]["content"]
    assert users["responses"]["409"]["content"]["application/scim+json"]["schema"] == {
        "$ref": "#/components/schemas/ScimError"}
    assert document["components"]["securitySchemes"]["scimBearer"]["scheme"] == "bearer"
    assert op(document, "POST", "/scim/generate-token")["responses"]["201"]


def test_without_scim_its_routes_leave_the_document(api, db, settings):
    settings.AUTHSERVICE_SSO = {**settings.AUTHSERVICE_SSO, "scim": {"enabled": False}}
    paths = api.api_get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/scim/")]


def test_plugin_endpoints_are_documented_too(document):
    plugin = [e for e in registry if e.handler.__module__.startswith("sso.")]
    assert plugin, "the sso app registers endpoints"
    for endpoint in plugin:
        assert (endpoint.method, openapi.openapi_path(endpoint.path)) in operations(document)


def test_the_document_documents_itself_and_the_reference_page(document):
    assert op(document, "GET", "/openapi.json")["operationId"] == "openapi_document"
    assert op(document, "GET", "/reference")["operationId"] == "openapi_reference"


def test_the_document_is_valid_openapi(document):
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_operation_ids_are_the_in_process_names(document):
    assert {o["operationId"] for o in operations(document).values()} == \
        {e.name for e in registry} | {o["operationId"] for o in extension_operations().values()}


def test_summaries_and_tags_come_from_the_declarations(document):
    sign_in = op(document, "POST", "/sign-in/email")
    assert sign_in["summary"] == registry.get("sign_in_email").summary
    assert sign_in["tags"] == ["email-password"]
    assert {"name": "email-password"} in document["tags"]


def test_the_server_is_the_public_base_url(document):
    assert document["servers"] == [{"url": ORIGIN + "/api/auth"}]


# --- errors -------------------------------------------------------------------------------------
def test_every_operation_answers_errors_with_the_shared_error_shape(document):
    scim = set(extension_operations())
    for key, operation in operations(document).items():
        if key in scim:  # the SCIM Error schema instead (RFC 7644 §3.12)
            assert operation["responses"]["5XX"]["content"]["application/scim+json"]["schema"] == {
                "$ref": "#/components/schemas/ScimError"}, key
            continue
        for status in ("4XX", "5XX"):
            assert operation["responses"][status] == {"$ref": "#/components/responses/Error"}, key
    error = document["components"]["responses"]["Error"]["content"][JSON]["schema"]
    assert error == {"$ref": "#/components/schemas/Error"}


def test_the_error_schema_is_exactly_message_code_and_integer_status(document, api):
    schema = document["components"]["schemas"]["Error"]
    assert set(schema["required"]) == {"message", "code", "status"}
    assert schema["additionalProperties"] is False
    assert schema["properties"]["status"]["type"] == "integer"
    conforms(document, {"$ref": "#/components/schemas/Error"}, error_of(api.api_get("/nope")))
    with pytest.raises(jsonschema.ValidationError):
        conforms(document, {"$ref": "#/components/schemas/Error"}, {"message": "x", "code": "X", "status": "400"})


# --- requests: from the Input classes -----------------------------------------------------------
def test_sign_up_body_schema_is_its_input_class(document):
    schema = body_schema(document, "POST", "/sign-up/email")
    assert schema["required"] == ["name", "email", "password"]
    assert schema["properties"] == {
        "name": {"type": "string"},
        "email": {"type": "string", "format": "email", "maxLength": 254},
        "password": {"type": "string", "minLength": 1},
        "image": {"type": "string"},
        "callbackURL": {"type": "string"},
        "rememberMe": {"type": "boolean"},
    }
    assert op(document, "POST", "/sign-up/email")["requestBody"]["required"] is True


def test_form_endpoints_also_accept_forms_of_their_string_fields(document):
    content = op(document, "POST", "/sign-in/email")["requestBody"]["content"]
    assert list(content) == [JSON, FORM]
    assert set(content[FORM]["schema"]["properties"]) == {"email", "password", "callbackURL"}
    assert list(op(document, "POST", "/change-email")["requestBody"]["content"]) == [JSON]


def test_nullable_fields_allow_null(document):
    image = body_schema(document, "POST", "/update-user")["properties"]["image"]
    assert image == {"type": ["string", "null"]}


def test_string_lists_records_and_numbers_are_typed(document):
    properties = body_schema(document, "POST", "/sign-in/social")["properties"]
    assert properties["scopes"] == {"type": "array", "items": {"type": "string"}}
    assert properties["additionalData"] == {"type": "object"}
    assert properties["additionalParams"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert properties["idToken"]["type"] == "object"


def test_an_optional_body_is_not_required(document):
    assert op(document, "POST", "/sign-out")["requestBody"]["required"] is False
    assert "requestBody" not in op(document, "POST", "/revoke-sessions")


def test_query_parameters_come_from_the_query_input(document):
    parameters = op(document, "GET", "/verify-email")["parameters"]
    assert parameters == [
        {"name": "token", "in": "query", "required": True, "schema": {"type": "string"}},
        {"name": "callbackURL", "in": "query", "required": False, "schema": {"type": "string"}},
    ]
    flags = {p["name"]: p for p in op(document, "GET", "/get-session")["parameters"]}
    assert flags["disableRefresh"]["schema"]["type"] == "string"


def test_path_parameters_use_braces(document):
    assert "/reset-password/:token" not in document["paths"]
    parameters = op(document, "GET", "/reset-password/{token}")["parameters"]
    assert parameters[0] == {"name": "token", "in": "path", "required": True, "schema": {"type": "string"}}
    assert parameters[1]["name"] == "callbackURL" and parameters[1]["required"] is True


# --- responses ----------------------------------------------------------------------------------
def test_guarded_endpoints_need_the_session_cookie(document):
    scheme = document["components"]["securitySchemes"]["sessionCookie"]
    assert scheme == {**scheme, "type": "apiKey", "in": "cookie", "name": "auth.session_token"}
    for endpoint in registry:
        operation = op(document, endpoint.method, openapi.openapi_path(endpoint.path))
        assert ("security" in operation) == bool(endpoint.guard), endpoint.name


def test_redirecting_endpoints_document_302_with_location(document):
    assert set(op(document, "GET", "/reset-password/{token}")["responses"]) == {"302", "4XX", "5XX"}
    verify = op(document, "GET", "/verify-email")["responses"]
    assert {"200", "302"} <= set(verify)
    assert "Location" in verify["302"]["headers"]
    assert "302" not in op(document, "POST", "/sign-in/email")["responses"]


def test_the_error_page_may_answer_html(document):
    assert "text/html" in op(document, "GET", "/error")["responses"]["200"]["content"]


def test_every_response_name_in_use_has_a_documented_shape():
    names = {e.response for e in registry if isinstance(e.response, str)}
    assert names - set(openapi.SUCCESS) == set()


def test_sign_up_answer_conforms_to_its_documented_schema(document, api):
    response = api.api_post("/sign-up/email", {"name": "Ada", "email": "ada@example.com", "password": PASSWORD})
    assert response.status_code == 200
    conforms(document, success_schema(document, "POST", "/sign-up/email"), response.json())


def test_get_session_answers_conform_with_and_without_a_session(document, signed_in, api):
    schema = success_schema(document, "GET", "/get-session")
    conforms(document, schema, signed_in.api_get("/get-session").json())
    conforms(document, schema, None)
    conforms(document, success_schema(document, "GET", "/list-sessions"), signed_in.api_get("/list-sessions").json())
    conforms(document, success_schema(document, "GET", "/list-accounts"), signed_in.api_get("/list-accounts").json())


def test_a_wrong_user_record_does_not_conform(document):
    with pytest.raises(jsonschema.ValidationError):
        conforms(document, {"$ref": "#/components/schemas/User"}, {"id": "1", "name": "Ada"})


# --- declarations this module does not know -----------------------------------------------------
def _plugin_endpoint(**options):
    return Endpoint(method="POST", path="/plugin/:thing/do", handler=lambda ctx: None, name="plugin_do",
                    tags=("plugin",), **options)


def test_an_unknown_response_name_is_documented_as_any_success():
    document = openapi.build(endpoints=[_plugin_endpoint(response="SomethingNew")])
    validate(document)
    responses = document["paths"]["/plugin/{thing}/do"]["post"]["responses"]
    assert responses["2XX"]["content"][JSON]["schema"] == {}


def test_a_response_shorthand_dict_becomes_an_object_schema():
    document = openapi.build(endpoints=[_plugin_endpoint(response={"url": "string", "redirect": "boolean"})])
    validate(document)
    schema = document["paths"]["/plugin/{thing}/do"]["post"]["responses"]["200"]["content"][JSON]["schema"]
    assert schema == {"type": "object", "properties": {"url": {"type": "string"}, "redirect": {"type": "boolean"}}}


def test_a_redirects_flag_documents_a_302():
    document = openapi.build(endpoints=[_plugin_endpoint(response="Status", redirects=True)])
    assert "302" in document["paths"]["/plugin/{thing}/do"]["post"]["responses"]


# --- the reference page -------------------------------------------------------------------------
def test_the_reference_page_lists_every_operation_when_debug_is_on(api, db, settings):
    settings.DEBUG = True
    response = api.api_get("/reference")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    for endpoint in registry:
        assert f'id="{endpoint.name}"' in page
    assert "<script" not in page and "http://" not in page.replace(ORIGIN, "")


def test_the_reference_page_is_404_when_debug_is_off(api, db, settings):
    settings.DEBUG = False
    assert error_of(api.api_get("/reference")) == {"message": "Not Found", "code": "NOT_FOUND", "status": 404}


def test_guarded_endpoints_name_the_enrolment_refusal_while_required_for_is_set(configure):
    from authservice.api import openapi

    configure(two_factor={"enabled": True, "required_for": ["is_staff"]})
    paths = openapi.build()["paths"]
    assert "TWO_FACTOR_ENROLLMENT_REQUIRED" in paths["/list-sessions"]["get"]["description"]
    assert "TWO_FACTOR_ENROLLMENT_REQUIRED" not in paths["/get-session"]["get"].get("description", "")
