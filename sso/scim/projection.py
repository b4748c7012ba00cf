"""``attributes`` / ``excludedAttributes`` of a User read without parsing what the answer leaves out (I6).

Parsing a stored resource into scim2-models costs about a microsecond a byte; a page of 100 users
projected to ``userName`` must not cost what parsing 100 whole resources does. So:

- ``attributes``: only the top-level attributes named (and ``schemas``) are handed to the model, which
  then projects them exactly as before (sub-attributes, extensions, what is always returned);
- ``excludedAttributes`` alone: the plain answer (the stored dict, as a GET without parameters gets it)
  with the named attributes taken out; ``id`` and ``schemas`` are always returned (RFC 7643 §7).
"""

USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User"
_ALWAYS = {"id", "schemas"}


def _split(path, resource):
    """``(top-level key of resource, sub-attribute or None)`` for an attribute path, or None."""
    text = str(path).strip()
    lower = text.lower()
    if lower.startswith(USER_URN.lower() + ":"):
        text, lower = text[len(USER_URN) + 1:], lower[len(USER_URN) + 1:]
    for key in resource:
        if key.lower().startswith("urn:") and (lower == key.lower() or lower.startswith(key.lower() + ":")):
            rest = text[len(key) + 1:]
            return key, (rest or None)
    head, _, sub = text.partition(".")
    head = head.partition("[")[0].lower()
    for key in resource:
        if key.lower() == head:
            return key, (sub or None)
    return None


def requested(resource, attributes):
    """The stored ``resource`` cut to the top-level attributes ``attributes`` names, for the model."""
    keep = {"schemas"}
    for path in attributes:
        found = _split(path, resource)
        if found:
            keep.add(found[0])
    return {key: value for key, value in resource.items() if key in keep}


def excluded(data, attributes):
    """``data`` (a plain answer) without the attributes ``attributes`` names."""
    for path in attributes:
        found = _split(path, data)
        if found is None or found[0] in _ALWAYS:
            continue
        key, sub = found
        if sub is None:
            data.pop(key, None)
            continue
        value = data.get(key)  # copied before a sub-attribute goes: it may be the row's own resource
        if isinstance(value, list):
            value = data[key] = [dict(item) if isinstance(item, dict) else item for item in value]
        elif isinstance(value, dict):
            value = data[key] = dict(value)
        sub = sub.lower()
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                for name in [name for name in item if name.lower() == sub]:
                    del item[name]
    return data
