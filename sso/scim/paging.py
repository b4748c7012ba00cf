"""A page of a SCIM list: its total and its ids, read in one snapshot, the ids walked from the nearer end.

A B-tree keeps no positions: PostgreSQL (and SQLite) find ``OFFSET k`` by stepping over k index entries,
so the page at ``startIndex=99,901`` of 100,000 users walked 99,900 of them (bench/README.md "SCIM").
Counted from the other end the same page is ``total - k - count`` entries away, so walking from the nearer
end never steps over more than half the rows.

Counting from the end is exact only when the total and the walk see the same rows: under PostgreSQL's
default READ COMMITTED each statement has its own snapshot, and a user created between reading the total and
the walk would shift a page read from the end by one (a page read from the start is not moved by users
added after it, which is why a plain OFFSET needs no snapshot). So both run in one transaction that is
one snapshot: REPEATABLE READ on PostgreSQL, any transaction on SQLite. Where that cannot be had (a
transaction the caller opened at READ COMMITTED, another database), the walk is from the start, as before.
"""

import contextlib

from django.db import connections, transaction

_SNAPSHOT_LEVELS = ("repeatable read", "serializable")


@contextlib.contextmanager
def snapshot(alias):
    """A transaction on ``alias``; yields whether every read inside it sees the same rows."""
    connection = connections[alias]
    outermost = not connection.in_atomic_block
    with transaction.atomic(using=alias):
        if connection.vendor == "sqlite":
            consistent = True
        elif connection.vendor != "postgresql":
            consistent = False
        elif outermost:
            # Must be the transaction's first statement; a read-only REPEATABLE READ transaction takes no
            # locks and cannot fail to serialize.
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            consistent = True
        else:
            with connection.cursor() as cursor:
                cursor.execute("SHOW transaction_isolation")
                consistent = cursor.fetchone()[0] in _SNAPSHOT_LEVELS
        yield consistent


def rows(queryset, offset, count, total, consistent):
    """``queryset[offset:offset + count]``, ``total`` being ``queryset.count()`` read in the same
    :func:`snapshot` (``consistent``: what it yielded). Two statements: the page's pks from the ordering
    index alone (an index-only walk either way), then those rows by primary key."""
    after = total - offset - count  # the rows after the page: the walk from the end
    if not consistent or after >= offset:
        ids = list(queryset.values_list("pk", flat=True)[offset:offset + count])
    else:
        size = min(count, total - offset)
        after = max(after, 0)
        ids = list(queryset.reverse().values_list("pk", flat=True)[after:after + size]) if size > 0 else []
        ids.reverse()
    if not ids:
        return []
    found = queryset.model._default_manager.order_by().in_bulk(ids)
    return [found[pk] for pk in ids if pk in found]  # one deleted since its pk was read (no snapshot) is left out
