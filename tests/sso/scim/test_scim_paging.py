"""Paging a list of users (RFC 7644 §3.4.2.4): every page is the slice of the whole list it names, whichever
end it is read from (sso/scim/paging.py), with the total of the connection's users and each user's groups."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.sso.scim.conftest import GROUP_URN, ScimClient, user_body

pytestmark = pytest.mark.django_db

PEOPLE = 7


@pytest.fixture
def people(scim):
    ids = []
    for n in range(PEOPLE):
        response = scim.scim("POST", "/Users", user_body(f"p{n}@acme.com"))
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    return ids


def listed(scim, **query):
    response = scim.get_("/Users", query)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.parametrize("count", [1, 2, 3, 5, 7, 10])
def test_every_page_is_the_slice_of_the_whole_list_it_names(scim, people, count):
    for start in range(1, PEOPLE + 3):
        body = listed(scim, startIndex=start, count=count)
        expected = people[start - 1:start - 1 + count]
        assert [r["id"] for r in body.get("Resources", [])] == expected, (start, count)
        assert body["totalResults"] == PEOPLE and body["startIndex"] == start
        assert body["itemsPerPage"] == len(expected)


def test_deleted_users_are_neither_counted_nor_listed(scim, people):
    assert scim.scim("DELETE", f"/Users/{people[5]}").status_code == 204
    body = listed(scim, startIndex=5, count=3)
    assert body["totalResults"] == PEOPLE - 1
    assert [r["id"] for r in body["Resources"]] == [people[4], people[6]]


def test_a_user_brought_back_is_counted_again(scim, people):
    scim.scim("DELETE", f"/Users/{people[0]}")
    assert scim.scim("POST", "/Users", user_body("p0@acme.com")).status_code == 201
    assert listed(scim, count=0)["totalResults"] == PEOPLE


def test_a_filtered_list_counts_what_the_filter_matches(scim, people):
    body = listed(scim, filter='userName eq "p3@acme.com"', startIndex=1, count=10)
    assert body["totalResults"] == 1 and [r["id"] for r in body["Resources"]] == [people[3]]


def test_each_listed_user_shows_their_groups(scim, people):
    for name, members in (("Eng", people[:2]), ("Ops", people[1:2])):
        assert scim.scim("POST", "/Groups", {"schemas": [GROUP_URN], "displayName": name,
                                             "members": [{"value": m} for m in members]}).status_code == 201
    resources = {r["id"]: r for r in listed(scim, count=3)["Resources"]}
    assert [g["display"] for g in resources[people[0]]["groups"]] == ["Eng"]
    assert [g["display"] for g in resources[people[1]]["groups"]] == ["Eng", "Ops"]
    assert all(g["type"] == "direct" for g in resources[people[1]]["groups"])
    assert "groups" not in resources[people[2]]
    assert scim.get_(f"/Users/{people[1]}").json()["groups"] == resources[people[1]]["groups"]


def test_a_page_costs_the_same_statements_however_many_groups_its_users_are_in(scim, people):
    def statements():
        with CaptureQueriesContext(connection) as captured:
            assert scim.get_("/Users", {"count": PEOPLE}).status_code == 200
        return len(captured)

    before = statements()
    for n in range(3):
        scim.scim("POST", "/Groups", {"schemas": [GROUP_URN], "displayName": f"g{n}",
                                      "members": [{"value": m} for m in people]})
    assert statements() == before


def test_another_connections_total_and_pages_hold_only_its_users(scim, people, provider_factory):
    from sso.scim import tokens

    _, token = tokens.issue(provider_factory("globex", domain="globex.com"))
    other = ScimClient(token)
    assert other.scim("POST", "/Users", user_body("x@globex.com")).status_code == 201
    body = listed(other, startIndex=1, count=10)
    assert body["totalResults"] == 1 and [r["userName"] for r in body["Resources"]] == ["x@globex.com"]
    assert listed(scim, count=0)["totalResults"] == PEOPLE
