"""Hot-path SQL compiled once per database instead of on every request.

Django compiles a queryset into SQL on every evaluation; for the few lookups that run on every
sign-in or authenticated request that compiling was the larger part of the request's CPU
(bench/README.md: get-session, the SAML ACS). The SQL here is fixed (only parameters change), so
it is built once per database alias from the model's metadata, and rows come back as model
instances through the same converters Django applies (time zones, SQLite's text dates).

Only equality lookups on one table (optionally joined with one foreign key), one column of the
rows such a lookup finds, and a delete by primary key. Anything more involved stays on the ORM.

On PostgreSQL with psycopg 3, when the project turns prepared statements on
(``DATABASES[...]["OPTIONS"]["prepare_threshold"]``, which Django leaves off for connection poolers),
these statements run on a server-binding cursor, so psycopg prepares each of them once per connection
and PostgreSQL stops parsing and planning it on every request. Django's own queries keep Django's
client-binding cursor: only this fixed SQL, with its plain parameters, changes how it is sent.
"""

import functools

from django.db import connections, router


@functools.lru_cache(maxsize=None)
def _server_binding_cursor():
    """psycopg 3's server-binding cursor class, or None. Imported on first use by a PostgreSQL connection
    only: importing Django's postgresql backend without a driver raises ImproperlyConfigured, and a site
    on SQLite or MySQL has none (tests/adoption)."""
    try:
        from django.db.backends.postgresql.base import ServerBindingCursor  # noqa: PLC0415
    except ImportError:  # pragma: no cover - psycopg2 has no server-side binding
        return None
    return ServerBindingCursor


def _quote(connection, model, field):
    quote = connection.ops.quote_name
    return f"{quote(model._meta.db_table)}.{quote(field.column)}"


@functools.lru_cache(maxsize=None)
def _plan(model, alias):
    """(select list, attnames, [(column, converters)]) for every concrete field of ``model``."""
    connection = connections[alias]
    columns, attnames, converters = [], [], []
    for field in model._meta.concrete_fields:
        column = field.get_col(model._meta.db_table)
        functions = connection.ops.get_db_converters(column) + field.get_db_converters(connection)
        columns.append(_quote(connection, model, field))
        attnames.append(field.attname)
        converters.append((len(attnames) - 1, column, functions))
    return columns, attnames, [entry for entry in converters if entry[2]]


def columns(model, alias):
    """The quoted ``table.column`` list that ``instance`` reads, in order."""
    return _plan(model, alias)[0]


def instance(model, alias, values):
    """A model instance from one row of ``columns(model, alias)``, converted as the ORM converts it."""
    connection = connections[alias]
    _, attnames, converters = _plan(model, alias)
    values = list(values)
    for index, column, functions in converters:
        for function in functions:
            values[index] = function(values[index], column, connection)
    return model.from_db(alias, attnames, values)


def _cursor(connection):
    """A cursor for the fixed SQL here: server-binding where psycopg may prepare it, else Django's."""
    if connection.vendor != "postgresql" or _server_binding_cursor() is None:
        return connection.cursor()
    # What connection.cursor() does before it makes its cursor: health check, (re)connect.
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    raw = connection.connection
    if getattr(raw, "prepare_threshold", None) is None:
        return connection.cursor()
    with connection.wrap_database_errors:
        # Wrapped as Django wraps its own (error translation, execute_wrapper, query logging).
        return connection._prepare_cursor(_server_binding_cursor()(raw))


@functools.lru_cache(maxsize=None)
def _select_sql(model, alias, fields, related, for_update):
    connection = connections[alias]
    quote = connection.ops.quote_name
    table, selected = quote(model._meta.db_table), columns(model, alias)
    if related:
        foreign_key = model._meta.get_field(related)
        target = foreign_key.related_model
        selected = selected + columns(target, alias)
        table += (f" INNER JOIN {quote(target._meta.db_table)} ON {_quote(connection, model, foreign_key)} = "
                  f"{_quote(connection, target, foreign_key.target_field)}")
    where = " AND ".join(f"{_quote(connection, model, model._meta.get_field(name))} = %s" for name in fields)
    lock = " FOR UPDATE" if for_update and connection.features.has_select_for_update else ""
    return f"SELECT {', '.join(selected)} FROM {table} WHERE {where} LIMIT 1{lock}"


def get_row(model, *, related=None, for_update=False, **equals):
    """The one ``model`` row whose fields equal ``equals`` (unordered: for unique lookups), or None.

    ``related`` names a foreign key to load in the same query (``select_related``). ``for_update``
    locks the row (``SELECT ... FOR UPDATE`` where the database has it) and, as
    ``select_for_update()``, belongs inside ``transaction.atomic()``.
    """
    alias = router.db_for_write(model) if for_update else router.db_for_read(model)
    names = tuple(sorted(equals))
    with _cursor(connections[alias]) as cursor:
        cursor.execute(_select_sql(model, alias, names, related, for_update), [equals[name] for name in names])
        row = cursor.fetchone()
    if row is None:
        return None
    if not related:
        return instance(model, alias, row)
    width = len(columns(model, alias))
    found = instance(model, alias, row[:width])
    foreign_key = model._meta.get_field(related)
    foreign_key.set_cached_value(found, instance(foreign_key.related_model, alias, row[width:]))
    return found


@functools.lru_cache(maxsize=None)
def _values_sql(model, alias, field, fields, order_by):
    """(SQL, column expression, converters) of :func:`values`."""
    connection = connections[alias]
    selected = model._meta.get_field(field)
    column = selected.get_col(model._meta.db_table)
    where = " AND ".join(f"{_quote(connection, model, model._meta.get_field(name))} = %s" for name in fields)
    order = ", ".join(_quote(connection, model, model._meta.get_field(name)) for name in order_by)
    sql = (f"SELECT {_quote(connection, model, selected)} FROM {connection.ops.quote_name(model._meta.db_table)} "
           f"WHERE {where}" + (f" ORDER BY {order}" if order else ""))
    return sql, column, connection.ops.get_db_converters(column) + selected.get_db_converters(connection)


def values(model, field, *, order_by=(), **equals):
    """``field`` of every ``model`` row whose fields equal ``equals``, in ``order_by`` order: a list,
    as ``values_list(field, flat=True)`` gives."""
    alias = router.db_for_read(model)
    names = tuple(sorted(equals))
    sql, column, converters = _values_sql(model, alias, field, names, tuple(order_by))
    connection = connections[alias]
    with _cursor(connection) as cursor:
        cursor.execute(sql, [equals[name] for name in names])
        rows = cursor.fetchall()
    found = []
    for (value,) in rows:
        for function in converters:
            value = function(value, column, connection)
        found.append(value)
    return found


@functools.lru_cache(maxsize=None)
def _delete_sql(model, alias):
    connection = connections[alias]
    return (f"DELETE FROM {connection.ops.quote_name(model._meta.db_table)} "
            f"WHERE {_quote(connection, model, model._meta.pk)} = %s")


def delete_by_pk(model, pk):
    """Delete one row by primary key in one statement; True when this call removed it.

    For rows nothing refers to and no signal watches (verification and state rows): unlike
    ``QuerySet.delete()`` there is no cascade and no pre/post_delete signal.
    """
    alias = router.db_for_write(model)
    with _cursor(connections[alias]) as cursor:
        cursor.execute(_delete_sql(model, alias), [pk])
        return cursor.rowcount == 1
