"""What one User resource may hold (I6) and which URLs it may carry (I4).

A User's multi-valued attributes (emails, phoneNumbers, photos, addresses, ...) are parsed by
scim2-models item by item, and kept in ``ScimUser.resource``, which every later read or PATCH parses
again: their size is the cost of every request that touches the user. Directories send a handful of
each; the bounds below leave room for that many times over and refuse the rest before parsing.
"""

from authservice import origins
from sso.scim import errors

# Items of one multi-valued attribute (a list anywhere in a User body or PATCH value).
MAX_VALUES = 100
# The stored resource, as JSON characters: Okta's and Entra's users are 1-4 KiB.
MAX_RESOURCE_CHARS = 32 * 1024


def check_lists(value):
    """Refuses (400 tooMany) a list longer than :data:`MAX_VALUES` anywhere in ``value`` (raw JSON),
    before scim2-models spends time on its items."""
    if isinstance(value, list):
        if len(value) > MAX_VALUES:
            raise errors.too_many(f"A multi-valued attribute holds at most {MAX_VALUES} values")
        for item in value:
            check_lists(item)
    elif isinstance(value, dict):
        for item in value.values():
            check_lists(item)


def check_patch(body):
    """:func:`check_lists` on each operation's value (the operations themselves are counted apart)."""
    operations = body.get("Operations") if isinstance(body, dict) else None
    for operation in operations if isinstance(operations, list) else ():
        if isinstance(operation, dict):
            check_lists(operation.get("value"))


def check_stored(resource, size):
    """The resource as it will be stored (``size``: its JSON length): bounded (a PATCH may add to it
    many times) and its lists too."""
    if size > MAX_RESOURCE_CHARS:
        raise errors.invalid_value(f"The resource is larger than {MAX_RESOURCE_CHARS} characters")
    check_lists(resource)


def check_urls(model):
    """``profileUrl`` and ``photos[].value`` are links a console or profile page shows: absolute http(s)
    only (origins.is_http_url), never ``javascript:`` or ``data:`` stored for someone to click."""
    if model.profile_url is not None and not origins.is_http_url(str(model.profile_url)):
        raise errors.invalid_value("profileUrl must be an absolute http(s) URL")
    for photo in model.photos or ():
        if photo.value is not None and not origins.is_http_url(str(photo.value)):
            raise errors.invalid_value("photos.value must be an absolute http(s) URL")


# Members one Group request (POST, PUT or PATCH) may name: each is parsed, checked and written, and
# Okta and Entra push large groups in batches far below this.
MAX_MEMBERS = 1000


def check_members(body):
    """Refuses (400 tooMany) a Group body or PATCH naming more than :data:`MAX_MEMBERS` members in all,
    counted in the raw JSON before any is parsed."""
    if not isinstance(body, dict):
        return
    count = _count(body.get("members"))
    operations = body.get("Operations")
    for operation in operations if isinstance(operations, list) else ():
        value = operation.get("value") if isinstance(operation, dict) else None
        # A value list (path "members"), or an object of attributes without a path.
        count += _count(value.get("members")) if isinstance(value, dict) else _count(value)
    if count > MAX_MEMBERS:
        raise errors.too_many(f"A request names at most {MAX_MEMBERS} members; send the rest in another")


def _count(value):
    return len(value) if isinstance(value, list) else 0
