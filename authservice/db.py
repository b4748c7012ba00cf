"""Hot-path SQL compiled once per database instead of on every request.

Django compiles a queryset into SQL on every evaluation; for the few lookups that run on every
sign-in or authenticated request that compiling was the larger part of the request's CPU
(bench/README.md: get-session, the SAML ACS). The SQL here is fixed (only parameters change), so
it is built once per database alias from the model's metadata, and rows come back as model
instances through the same converters Django applies (time zones, SQLite's text dates).

Only equality lookups on one table (optionally joined with one foreign key, or with the row of
another table that shares the looked-up values), one column of the rows such a lookup finds, an
insert of a new row, and an update or delete by primary key (optionally only while a counter is
under its bound). Anything more involved stays on the ORM. Parameters are passed as given (values
``get_db_prep_save`` does not change: strings, integers, booleans), except the values an insert or
update writes.

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


def _lock_clause(connection, target):
    """``FOR UPDATE OF`` naming ``target``'s rows only: its table, or its key column where the database
    names columns there (Oracle); ``None`` where the database cannot name one (MariaDB)."""
    features = connection.features
    if not features.has_select_for_update_of:
        return None
    if features.select_for_update_of_column:
        return f" FOR UPDATE OF {_quote(connection, target, target._meta.pk)}"
    return f" FOR UPDATE OF {connection.ops.quote_name(target._meta.db_table)}"


@functools.lru_cache(maxsize=None)
def _select_sql(model, alias, fields, related, for_update, lock_related=False):
    connection = connections[alias]
    quote = connection.ops.quote_name
    table, selected = quote(model._meta.db_table), columns(model, alias)
    lock = " FOR UPDATE" if for_update and connection.features.has_select_for_update else ""
    if related:
        foreign_key = model._meta.get_field(related)
        target = foreign_key.related_model
        selected = selected + columns(target, alias)
        table += (f" INNER JOIN {quote(target._meta.db_table)} ON {_quote(connection, model, foreign_key)} = "
                  f"{_quote(connection, target, foreign_key.target_field)}")
        if lock_related and connection.features.has_select_for_update:
            lock = _lock_clause(connection, target) or ""
    where = " AND ".join(f"{_quote(connection, model, model._meta.get_field(name))} = %s" for name in fields)
    return f"SELECT {', '.join(selected)} FROM {table} WHERE {where} LIMIT 1{lock}"


@functools.lru_cache(maxsize=None)
def _lock_sql(model, alias):
    connection = connections[alias]
    return (f"SELECT 1 FROM {connection.ops.quote_name(model._meta.db_table)} "
            f"WHERE {_quote(connection, model, model._meta.pk)} = %s FOR UPDATE")


def get_row(model, *, related=None, for_update=False, lock_related=False, **equals):
    """The one ``model`` row whose fields equal ``equals`` (unordered: for unique lookups), or None.

    ``related`` names a foreign key to load in the same query (``select_related``). ``for_update``
    locks the row (``SELECT ... FOR UPDATE`` where the database has it) and, as
    ``select_for_update()``, belongs inside ``transaction.atomic()``. ``lock_related`` locks the related
    row alone (``select_for_update(of=...)``), which then comes back as it is once locked; where the
    database cannot name the row to lock, a second statement locks it after the read.
    """
    alias = router.db_for_write(model) if for_update or lock_related else router.db_for_read(model)
    connection = connections[alias]
    names = tuple(sorted(equals))
    with _cursor(connection) as cursor:
        cursor.execute(_select_sql(model, alias, names, related, for_update, lock_related),
                       [equals[name] for name in names])
        row = cursor.fetchone()
    if row is None:
        return None
    if not related:
        return instance(model, alias, row)
    width = len(columns(model, alias))
    found = instance(model, alias, row[:width])
    foreign_key = model._meta.get_field(related)
    target = foreign_key.related_model
    found_target = instance(target, alias, row[width:])
    foreign_key.set_cached_value(found, found_target)
    if lock_related and connection.features.has_select_for_update and _lock_clause(connection, target) is None:
        with _cursor(connection) as cursor:
            cursor.execute(_lock_sql(target, alias), [found_target.pk])
    return found


@functools.lru_cache(maxsize=None)
def _pair_sql(model, other, alias, fields):
    connection = connections[alias]
    quote = connection.ops.quote_name
    joined = " AND ".join(f"{_quote(connection, other, other._meta.get_field(name))} = "
                          f"{_quote(connection, model, model._meta.get_field(name))}" for name in fields)
    where = " AND ".join(f"{_quote(connection, model, model._meta.get_field(name))} = %s" for name in fields)
    return (f"SELECT {', '.join(columns(model, alias) + columns(other, alias))} "
            f"FROM {quote(model._meta.db_table)} LEFT OUTER JOIN {quote(other._meta.db_table)} ON {joined} "
            f"WHERE {where} LIMIT 1")


def get_pair(model, other, **equals):
    """``(row, other_row)``: the ``model`` row whose fields equal ``equals`` and the ``other`` row whose
    same-named fields hold the same values (two one-to-ones on one user, say), in one statement.

    ``other_row`` is None when ``other`` has no such row; both are None when ``model`` has none.
    """
    alias = router.db_for_read(model)
    names = tuple(sorted(equals))
    with _cursor(connections[alias]) as cursor:
        cursor.execute(_pair_sql(model, other, alias, names), [equals[name] for name in names])
        row = cursor.fetchone()
    if row is None:
        return None, None
    width = len(columns(model, alias))
    other_values = row[width:]
    if other_values[_plan(other, alias)[1].index(other._meta.pk.attname)] is None:  # no row joined
        return instance(model, alias, row[:width]), None
    return instance(model, alias, row[:width]), instance(other, alias, other_values)


def _where_pk(connection, model, below):
    """``pk = %s``, then ``field < %s`` for each name of ``below``: a write that holds only while a
    counter or a high-water mark is still under its bound, decided by the database, not by a read."""
    conditions = [f"{_quote(connection, model, model._meta.pk)} = %s"]
    conditions += [f"{_quote(connection, model, model._meta.get_field(name))} < %s" for name in below]
    return " AND ".join(conditions)


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
def _delete_sql(model, alias, below=()):
    connection = connections[alias]
    return (f"DELETE FROM {connection.ops.quote_name(model._meta.db_table)} "
            f"WHERE {_where_pk(connection, model, below)}")


def delete_by_pk(model, pk, *, below=None):
    """Delete one row by primary key in one statement; True when this call removed it.

    ``below`` (``{"attempts": 5}``): only while each of those fields is under its bound.
    For rows nothing refers to and no signal watches (verification, state and challenge rows): unlike
    ``QuerySet.delete()`` there is no cascade and no pre/post_delete signal.
    """
    alias = router.db_for_write(model)
    names = tuple(sorted(below or {}))
    with _cursor(connections[alias]) as cursor:
        cursor.execute(_delete_sql(model, alias, names), [pk, *[below[name] for name in names]])
        return cursor.rowcount == 1


@functools.lru_cache(maxsize=None)
def _update_sql(model, alias, fields, below):
    connection = connections[alias]
    assignments = ", ".join(f"{connection.ops.quote_name(model._meta.get_field(name).column)} = %s"
                            for name in fields)
    return (f"UPDATE {connection.ops.quote_name(model._meta.db_table)} SET {assignments} "
            f"WHERE {_where_pk(connection, model, below)}")


def update_by_pk(model, pk, values, *, below=None):
    """Set ``values`` (field name to value) on the row ``pk`` in one statement; True when it changed.

    ``below`` as for :func:`delete_by_pk`. No ``save()``: no signal, no other field written, as
    ``QuerySet.update()``.
    """
    alias = router.db_for_write(model)
    connection = connections[alias]
    fields, names = tuple(sorted(values)), tuple(sorted(below or {}))
    params = [model._meta.get_field(name).get_db_prep_save(values[name], connection) for name in fields]
    with _cursor(connection) as cursor:
        cursor.execute(_update_sql(model, alias, fields, names), [*params, pk, *[below[name] for name in names]])
        return cursor.rowcount == 1


@functools.lru_cache(maxsize=None)
def _insert_sql(model, alias):
    connection = connections[alias]
    quote = connection.ops.quote_name
    fields = model._meta.concrete_fields
    return (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) "
            f"VALUES ({', '.join(['%s'] * len(fields))})")


def insert(row):
    """Write the new ``row`` (a model instance whose key is set, as a default makes it) in one statement;
    returns it, saved. What ``save()`` writes on creation (``pre_save`` applied), without its signals."""
    model = type(row)
    if row.pk is None or model._meta.parents:
        raise ValueError("db.insert writes rows with their key set, of models without parents")
    alias = router.db_for_write(model, instance=row)
    connection = connections[alias]
    params = [field.get_db_prep_save(field.pre_save(row, True), connection) for field in model._meta.concrete_fields]
    with _cursor(connection) as cursor:
        cursor.execute(_insert_sql(model, alias), params)
    row._state.adding, row._state.db = False, alias
    return row
