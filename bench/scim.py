"""SCIM bench (issue 14 §1 "Scale"): list and filter among 100,000 users, and a PATCH that removes one member
from a group of 10,000. Target: p50 under 50 ms each.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/authservice_bench_scim python bench/scim.py

It recreates that database, migrates, seeds one SCIM connection with ``--users`` users (bulk inserts, no
password) and a group of ``--members`` of them (``--reuse``: keeps a database an earlier run seeded with as
many users, refills the group and issues a new token, which saves the ~150 s of seeding), then times
requests through Django's full request cycle in-process (``django.test.Client``: URL routing, middleware,
the SCIM view, the database; no socket), one at a time, ``--samples`` each, and prints p50/p99 in milliseconds:

- ``filter``: ``GET /Users?filter=userName eq "<random user>"`` (the lookup Okta and Entra make first);
- ``list``: ``GET /Users?startIndex=<random>&count=100`` (a page, with the total over 100,000);
- ``patch-remove``: ``PATCH /Groups/<id>`` removing one member by ``members[value eq "..."]`` (Okta).
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
os.environ.setdefault("AUTH_RATE_LIMIT", "false")
os.environ.setdefault("AUTH_SCIM_ENABLED", "true")

BASE = "/api/auth/scim/v2"


def seed(users_count, members_count):
    from django.utils import timezone

    from authservice import users
    from sso.models import SsoProvider
    from sso.scim import tokens
    from sso.scim.models import ScimGroup, ScimGroupMember, ScimUser

    owner = users.create(email="owner@bench-admin.example", name="Owner")
    provider = SsoProvider.objects.create(provider_id="bench-scim", issuer="https://idp.example.com",
                                          domain="example.com", domain_verified=True,
                                          oidc_config={"clientId": "c"}, user=owner)
    connection, token = tokens.issue(provider)
    model = type(owner)
    now = timezone.now()
    batch = 5000
    for start in range(0, users_count, batch):
        names = [f"user{n}@example.com" for n in range(start, min(start + batch, users_count))]
        made = model.objects.bulk_create([users.build(email=name, name=name, email_verified=True).user
                                          for name in names])
        ScimUser.objects.bulk_create([
            ScimUser(connection=connection, user=user, user_name=name, user_name_key=name, email_key=name,
                     display_name_key=name, external_id=f"ext-{name}", created_at=now, updated_at=now,
                     resource={"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"], "userName": name,
                               "emails": [{"value": name, "type": "work", "primary": True}]})
            for user, name in zip(made, names)])
    group = ScimGroup.objects.create(connection=connection, display_name="Everyone", display_name_key="everyone",
                                     created_at=now, updated_at=now)
    member_ids = list(ScimUser.objects.filter(connection=connection).values_list("pk", flat=True)[:members_count])
    ScimGroupMember.objects.bulk_create([ScimGroupMember(group=group, member_id=pk) for pk in member_ids],
                                        batch_size=5000)
    return token, group.pk, member_ids


def reuse(users_count, members_count):
    """The connection an earlier run seeded, if it holds ``users_count`` users: a new token, and its group
    refilled to ``members_count`` (the PATCH rows removed some). None when there is nothing to reuse."""
    from sso.models import SsoProvider
    from sso.scim import tokens
    from sso.scim.models import ScimGroup, ScimGroupMember, ScimUser

    provider = SsoProvider.objects.filter(provider_id="bench-scim").first()
    if provider is None or ScimUser.objects.filter(connection__provider=provider).count() != users_count:
        return None
    connection, token = tokens.issue(provider)
    group = ScimGroup.objects.get(connection=connection, display_name_key="everyone")
    member_ids = list(ScimUser.objects.filter(connection=connection).order_by("created_at", "id")
                      .values_list("pk", flat=True)[:members_count])
    ScimGroupMember.objects.filter(group=group).delete()
    ScimGroupMember.objects.bulk_create([ScimGroupMember(group=group, member_id=pk) for pk in member_ids],
                                        batch_size=5000)
    return token, group.pk, member_ids


def timed(samples, call):
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        response = call()
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code in (200, 204), response.content[:300]
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--members", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--reuse", action="store_true", help="keep a database an earlier run seeded")
    options = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL database (it is dropped and recreated).")
    if not options.reuse:
        subprocess.run([sys.executable, str(ROOT / "bench" / "fresh_db.py"), url], check=True)

    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    seeded = reuse(options.users, options.members) if options.reuse else None
    if seeded is None:
        if options.reuse:
            sys.exit(f"Nothing to reuse: no earlier run seeded {options.users} users there; run without --reuse.")
        seeded = seed(options.users, options.members)
        print(f"seeded {options.users} users, a group of {options.members} in {time.perf_counter() - started:.0f} s")
    token, group_id, member_ids = seeded
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # the visibility map index-only scans need
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    rng = random.Random(14)

    def filter_one():
        name = f"user{rng.randrange(options.users)}@example.com"
        return client.get(f"{BASE}/Users", {"filter": f'userName eq "{name}"'})

    def list_page():
        return client.get(f"{BASE}/Users", {"startIndex": rng.randrange(1, options.users - 100), "count": 100})

    removable = iter(rng.sample(member_ids, min(options.samples + 10, len(member_ids))))

    def patch_remove():
        body = ('{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":'
                f'[{{"op":"remove","path":"members[value eq \\"{next(removable)}\\"]"}}]}}')
        return client.generic("PATCH", f"{BASE}/Groups/{group_id}", body, content_type="application/scim+json")

    print("| request | p50 ms | p99 ms | target p50 |")
    print("| --- | ---: | ---: | ---: |")
    for label, call in ((f"filter userName eq ({options.users:,} users)", filter_one),
                        (f"list, 100 a page ({options.users:,} users)", list_page),
                        (f"PATCH remove 1 member (group of {options.members:,})", patch_remove)):
        timed(5, call)  # warm-up
        p50, p99 = timed(options.samples, call)
        print(f"| {label} | {p50:.1f} | {p99:.1f} | < 50 |")


if __name__ == "__main__":
    main()
