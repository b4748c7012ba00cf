"""The total of a connection's users that PostgreSQL's triggers keep (ScimUserTotal, migration 0010): it
agrees with the rows after every kind of write, the ORM's or not, and a deep page is read from the nearer
end inside one REPEATABLE READ snapshot. PostgreSQL only: other databases count."""

import pytest
from django.db import connection as db
from django.test.utils import CaptureQueriesContext

from authservice import users
from sso.scim.models import ScimUser, ScimUserTotal
from tests.sso.scim.conftest import user_body

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(db.vendor != "postgresql", reason="the triggers are PostgreSQL's"),
]


def kept(scim):
    return ScimUserTotal.objects.filter(connection=scim.connection).values_list("live", flat=True).first() or 0


def counted(scim):
    return ScimUser.objects.filter(connection=scim.connection, deleted=False).count()


def add(scim, *names):
    ids = []
    for name in names:
        response = scim.scim("POST", "/Users", user_body(name))
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])
    return ids


def test_the_total_follows_creates_deletes_and_revivals(scim):
    ids = add(scim, "a@acme.com", "b@acme.com", "c@acme.com")
    assert kept(scim) == counted(scim) == 3
    scim.scim("DELETE", f"/Users/{ids[0]}")
    assert kept(scim) == counted(scim) == 2
    add(scim, "a@acme.com")  # the deleted resource comes back
    assert kept(scim) == counted(scim) == 3
    scim.scim("PUT", f"/Users/{ids[1]}", user_body("b@acme.com", displayName="B"))  # an update changes nothing
    assert kept(scim) == 3


def test_the_total_follows_bulk_inserts_raw_updates_and_cascades(scim):
    people = [users.create(email=f"m{i}@acme.com", name="m") for i in range(5)]
    ScimUser.objects.bulk_create([ScimUser(connection=scim.connection, user=person, user_name=f"m{i}",
                                           user_name_key=f"m{i}", resource={"userName": f"m{i}"})
                                  for i, person in enumerate(people)])
    assert kept(scim) == 5
    ScimUser.objects.filter(user__in=people[:2]).update(deleted=True)
    assert kept(scim) == counted(scim) == 3
    people[4].delete()  # the user's deletion cascades to their resource
    assert kept(scim) == counted(scim) == 2
    ScimUser.objects.filter(user=people[0]).update(deleted=False)
    assert kept(scim) == counted(scim) == 3


def test_another_connections_writes_leave_this_total_alone(scim, provider_factory):
    from sso.scim import tokens
    from tests.sso.scim.conftest import ScimClient

    add(scim, "a@acme.com")
    _, token = tokens.issue(provider_factory("globex", domain="globex.com"))
    other = ScimClient(token)
    assert other.scim("POST", "/Users", user_body("x@globex.com")).status_code == 201
    assert kept(scim) == 1


def test_deleting_the_connection_deletes_its_total(scim):
    add(scim, "a@acme.com")
    scim.connection.delete()
    assert not ScimUserTotal.objects.filter(connection_id=scim.connection.pk).exists()


def test_the_list_reads_the_kept_total_instead_of_counting(scim):
    add(scim, "a@acme.com", "b@acme.com")
    with CaptureQueriesContext(db) as captured:
        assert scim.get_("/Users", {"count": 1}).json()["totalResults"] == 2
    assert not [q["sql"] for q in captured if "COUNT(" in q["sql"].upper()]


@pytest.mark.django_db(transaction=True)
def test_a_deep_page_is_read_from_the_end_in_one_snapshot(scim):
    ids = add(scim, *(f"p{n}@acme.com" for n in range(6)))
    with CaptureQueriesContext(db) as captured:
        body = scim.get_("/Users", {"startIndex": 5, "count": 2}).json()
    assert [r["id"] for r in body["Resources"]] == ids[4:6] and body["totalResults"] == 6
    sql = [q["sql"] for q in captured]
    assert "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ" in sql
    assert [s for s in sql if '"created_at" DESC' in s]  # the walk from the end


@pytest.mark.django_db(transaction=True)
def test_concurrent_creates_and_deletes_keep_the_total_exact(scim):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    ids = add(scim, *(f"d{n}@acme.com" for n in range(4)))

    def request(n):
        try:  # each thread has its own database connection, hence its own transaction
            if n < len(ids):
                return scim.scim("DELETE", f"/Users/{ids[n]}").status_code
            return scim.scim("POST", "/Users", user_body(f"c{n}@acme.com")).status_code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(request, range(len(ids) + 8)))
    assert codes == [204] * len(ids) + [201] * 8
    assert kept(scim) == counted(scim) == 8
