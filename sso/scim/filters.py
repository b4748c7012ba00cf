"""The ``filter`` parameter (RFC 7644 §3.4.2.2) as a Django ``Q`` over the indexed columns.

scim2-models parses the expression (its grammar, its errors); this module only maps the attributes we
index to columns. Supported: ``eq``, ``ne``, ``co``, ``sw``, ``ew``, ``pr``, ``and``, ``or``, ``not`` on
the attributes of ``USER_COLUMNS`` / ``GROUP_COLUMNS`` (``emails[type eq "work"].value`` included).
Anything else is ``400 invalidFilter``: never a silently ignored condition that would widen a result.
"""

from django.db.models import Q
from scim2_models import SCIMException
from scim2_models.path import Comparison, LogicalExpr, LogicalOperator, Not, Present, ScimFilter, ValuePath

from sso.scim import errors

# Longest filter we parse (I6): the grammar is linear, but there is no reason for a long one.
MAX_FILTER_LENGTH = 2048

USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_URN = "urn:ietf:params:scim:schemas:core:2.0:Group"


class Column:
    """An attribute's column; ``fold`` = matched case-insensitively (caseExact false), stored lower-case."""

    def __init__(self, name, fold=False, kind=str):
        self.name, self.fold, self.kind = name, fold, kind


# Attribute names are case-insensitive (RFC 7644 §3.10): the keys are lower-case.
USER_COLUMNS = {
    "id": Column("id"),
    "username": Column("user_name_key", fold=True),
    "externalid": Column("external_id"),
    "displayname": Column("display_name_key", fold=True),
    "emails.value": Column("email_key", fold=True),
    "active": Column("active", kind=bool),
}
GROUP_COLUMNS = {
    "id": Column("id"),
    "displayname": Column("display_name_key", fold=True),
    "externalid": Column("external_id"),
    "members.value": Column("memberships__member_id"),
}
URNS = {USER_URN.lower(): USER_COLUMNS, GROUP_URN.lower(): GROUP_COLUMNS}


def parse(text, columns):
    """``Q`` for ``text``; raises ScimError(invalidFilter)."""
    if len(text) > MAX_FILTER_LENGTH:
        raise errors.invalid_filter("The filter is too long")
    try:
        ast = ScimFilter(text).ast
    except (SCIMException, ValueError) as exc:
        raise errors.invalid_filter(f"Invalid filter: {exc}") from None
    return _Translator(columns).visit(ast)


def text_literal(value):
    """``value`` (a string literal of a filter), refused when the grammar's ``\\uXXXX`` unescaping left a
    lone surrogate in it: no column stores one, so it would reach the database as an error (a 500)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.invalid_filter("A filter string holds a lone UTF-16 surrogate") from None
    return value


class _Translator:
    def __init__(self, columns):
        self.columns = columns

    def visit(self, node, prefix=None):
        if isinstance(node, LogicalExpr):
            parts = [self.visit(term, prefix) for term in node.terms]
            combined = parts[0]
            for part in parts[1:]:
                combined = combined & part if node.op == LogicalOperator.and_ else combined | part
            return combined
        if isinstance(node, Not):
            return ~self.visit(node.expr, prefix)
        if isinstance(node, ValuePath):
            return self.value_path(node)
        if isinstance(node, Comparison):
            return self.comparison(node, prefix)
        if isinstance(node, Present):
            column = self.column(node.attr_path, prefix)
            if column.kind is bool:
                return Q(**{f"{column.name}__isnull": False})
            return Q(**{f"{column.name}__isnull": False}) & ~Q(**{column.name: ""})
        raise errors.invalid_filter("Unsupported filter expression")

    def value_path(self, node):
        """``emails[type eq "work" and value eq "x"]``: the one address we index is the work one, so a
        ``type`` condition holds for ``work`` only; ``value`` conditions apply to it."""
        attr = node.attr_path.attr.lower()
        if node.sub_attr:
            raise errors.invalid_filter("Unsupported filter expression")
        return self.visit(node.val_filter, prefix=attr)

    def column(self, attr_path, prefix=None):
        attr = attr_path.attr.lower()
        columns = self.columns
        if attr_path.uri:
            columns = URNS.get(attr_path.uri.lower())
            if columns is not self.columns:
                raise errors.invalid_filter(f"Unsupported schema in filter: {attr_path.uri}")
        name = f"{prefix}.{attr}" if prefix else attr
        if attr_path.sub_attr:
            name = f"{name}.{attr_path.sub_attr.lower()}"
        if name not in columns:
            raise errors.invalid_filter(f"Filtering on {name!r} is not supported")
        return columns[name]

    def comparison(self, node, prefix):
        if prefix == "emails" and node.attr_path.attr.lower() == "type" and not node.attr_path.sub_attr:
            # Only the work address is indexed: "type eq work" holds, any other type matches nothing.
            matches = node.op.value == "eq" and str(node.value).lower() == "work"
            return Q() if matches else Q(pk__in=[])
        column = self.column(node.attr_path, prefix)
        value = node.value
        if column.kind is bool:
            if not isinstance(value, bool) or node.op.value not in ("eq", "ne"):
                raise errors.invalid_filter("A boolean attribute compares with eq or ne to true or false")
            query = Q(**{column.name: value})
            return query if node.op.value == "eq" else ~query
        if not isinstance(value, str):
            # A string attribute compared with a number or null matches nothing (RFC 7644 §3.4.2.2).
            return Q(pk__in=[]) if node.op.value != "ne" else Q()
        text_literal(value)
        if column.fold:
            value = value.lower()
        lookup = {"eq": "", "ne": "", "co": "__contains", "sw": "__startswith", "ew": "__endswith"}.get(node.op.value)
        if lookup is None:
            raise errors.invalid_filter(f"The operator {node.op.value!r} is not supported")
        query = Q(**{column.name + lookup: value})
        return ~query if node.op.value == "ne" else query
