"""filter (eq, and, case rules), paging, and the errors of bad queries (RFC 7644 §3.4.2)."""

import pytest

from tests.sso.scim.conftest import scim_error, user_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(scim):
    for name, external, display in (("alice@acme.com", "A-1", "Alice Liddell"), ("bob@acme.com", "B-1", "Bob"),
                                    ("carol@acme.com", "c-1", "Carol")):
        body = user_body(name, externalId=external, displayName=display)
        assert scim.scim("POST", "/Users", body).status_code == 201
    return scim


def names(scim, query):
    response = scim.get_("/Users", {"filter": query})
    assert response.status_code == 200, response.content
    return sorted(r["userName"] for r in response.json()["Resources"])


def test_user_name_matches_in_any_case(people):
    assert names(people, 'userName eq "ALICE@acme.com"') == ["alice@acme.com"]


def test_attribute_names_are_case_insensitive(people):
    assert names(people, 'USERNAME eq "alice@acme.com"') == ["alice@acme.com"]


def test_external_id_is_case_exact(people):
    assert names(people, 'externalId eq "A-1"') == ["alice@acme.com"]
    assert names(people, 'externalId eq "a-1"') == []


def test_display_name_matches_in_any_case(people):
    assert names(people, 'displayName eq "alice liddell"') == ["alice@acme.com"]


def test_work_email_filter(people):
    assert names(people, 'emails[type eq "work"].value eq "Bob@Acme.com"') == ["bob@acme.com"]
    assert names(people, 'emails[type eq "home"].value eq "bob@acme.com"') == []


def test_and_combines(people):
    assert names(people, 'userName eq "bob@acme.com" and externalId eq "B-1"') == ["bob@acme.com"]
    assert names(people, 'userName eq "bob@acme.com" and externalId eq "A-1"') == []


def test_the_core_schema_urn_may_prefix_an_attribute(people):
    assert names(people, 'urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bob@acme.com"') == ["bob@acme.com"]


@pytest.mark.parametrize("query", ['userName eq', 'nickName eq "x"', 'userName gt "a"', 'userName eq "a" or',
                                   "x" * 3000])
def test_unsupported_or_broken_filters_are_invalid_filter(people, query):
    scim_error(people.get_("/Users", {"filter": query}), 400, "invalidFilter")


def test_count_zero_gives_the_total_only(people):
    body = people.get_("/Users", {"count": 0}).json()
    assert body["totalResults"] == 3 and body.get("Resources", []) == []


@pytest.mark.parametrize("value", ["x", "1.5", "9" * 40])
def test_a_non_integer_start_index_is_invalid_value(people, value):
    scim_error(people.get_("/Users", {"startIndex": value}), 400, "invalidValue")


def test_a_start_index_below_one_counts_as_one(people):
    assert people.get_("/Users", {"startIndex": -5}).json()["startIndex"] == 1


def test_count_is_capped_at_max_results(people, configure_sso):
    configure_sso(scim={"max_results": 2})
    body = people.get_("/Users", {"count": 100}).json()
    assert body["itemsPerPage"] == 2 and body["totalResults"] == 3


def test_search_by_post(people):
    response = people.scim("POST", "/Users/.search", {
        "schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"], "filter": 'userName eq "bob@acme.com"',
        "attributes": ["userName"]})
    assert response.status_code == 200, response.content
    assert response.json()["Resources"] == [
        {"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "id": response.json()["Resources"][0]["id"],
         "userName": "bob@acme.com"}]


def test_discovery_documents_say_what_is_unsupported(scim):
    config = scim.get_("/ServiceProviderConfig").json()
    assert config["patch"]["supported"] is True and config["filter"]["supported"] is True
    for feature in ("bulk", "sort", "etag", "changePassword"):
        assert config[feature]["supported"] is False
    types = {r["id"] for r in scim.get_("/ResourceTypes").json()["Resources"]}
    assert types == {"User", "Group"}
    schemas = {r["id"] for r in scim.get_("/Schemas").json()["Resources"]}
    assert "urn:ietf:params:scim:schemas:core:2.0:User" in schemas
    assert scim.get_("/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group").status_code == 200
    scim_error(scim.get_("/Schemas/nope"), 404)


def test_unknown_paths_and_methods_are_scim_errors(scim):
    scim_error(scim.get_("/Nope"), 404)
    scim_error(scim.scim("DELETE", "/Users"), 405)
    scim_error(scim.scim("POST", "/ServiceProviderConfig", {}), 405)


def test_a_wrong_content_type_is_415(scim):
    scim_error(scim.scim("POST", "/Users", user_body(), content_type="text/plain"), 415)


def test_attributes_pick_sub_attributes_and_extension_attributes(scim):
    enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
    body = user_body("dana@acme.com", **{enterprise: {"employeeNumber": "7", "department": "R&D"}})
    body["schemas"].append(enterprise)
    created = scim.scim("POST", "/Users", body).json()
    answer = scim.get_(f"/Users/{created['id']}", {
        "attributes": f"name.givenName,emails.value,{enterprise}:employeeNumber"}).json()
    assert answer["name"] == {"givenName": "Barbara"}
    assert answer["emails"] == [{"value": "dana@acme.com"}]
    assert answer[enterprise] == {"employeeNumber": "7"}
    assert "userName" not in answer and "phoneNumbers" not in answer


def test_excluded_attributes_leave_out_attributes_and_sub_attributes_but_never_id(scim):
    created = scim.scim("POST", "/Users", user_body("erin@acme.com")).json()
    query = {"excludedAttributes": "emails,name.givenName,id,meta"}
    for answer in (scim.get_(f"/Users/{created['id']}", query).json(), scim.get_("/Users", query).json()["Resources"][0]):
        assert "emails" not in answer and "meta" not in answer
        assert answer["name"] == {"familyName": "Jensen"}
        assert answer["id"] == created["id"] and answer["userName"] == "erin@acme.com"
    # The stored resource is untouched by the projection.
    assert scim.get_(f"/Users/{created['id']}").json()["name"]["givenName"] == "Barbara"
