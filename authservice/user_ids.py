"""The id a new user would get, without creating one: sign-up's made-up user must not differ from a real one.

When sign-up answers without a session (auto sign-in off, or verification required), a taken address
gets a made-up user instead of an error (I7). Its id must look like the id a real insert takes:
a 32-character string id beside integer ids would tell that the account exists.

- A key with a default (``authservice.User``'s random string, a UUID): a fresh default.
- An integer key on PostgreSQL: ``nextval`` of the key's sequence. It consumes the value exactly as
  a real insert does, so the next real sign-up gets a later id in both cases.
- An integer key elsewhere: the next value without consuming it (SQLite's ``sqlite_sequence`` or
  the largest key + 1). The next real sign-up then gets the same id the made-up user showed, which an
  attacker who signs up twice in a row may notice; use PostgreSQL where enumeration matters.
"""

from django.contrib.auth import get_user_model
from django.db import connections, models, router
from django.db.models import Max

from authservice import tokens


def next_user_id():
    """A string id indistinguishable from the one a user created now would get."""
    model = get_user_model()
    pk = model._meta.pk
    if pk.has_default():
        return str(pk.get_default())
    if not isinstance(pk, models.IntegerField):  # AutoField and BigAutoField are IntegerFields
        return tokens.generate_id()
    alias = router.db_for_write(model)
    connection = connections[alias]
    table, column = model._meta.db_table, pk.column
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s))",
                           [connection.ops.quote_name(table), column])
            value = cursor.fetchone()[0]  # NULL for a key without a sequence
            if value is not None:
                return str(value)
        elif connection.vendor == "sqlite":
            cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
            row = cursor.fetchone()
            if row is not None:
                return str(row[0] + 1)
    largest = model._default_manager.using(alias).aggregate(largest=Max(pk.attname))["largest"]
    return str((largest or 0) + 1)
