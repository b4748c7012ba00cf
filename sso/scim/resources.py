"""What User and Group flows share: parsing with scim2-models, meta, paging, response projection."""

import functools

from pydantic import ValidationError
from scim2_models import Context, ListResponse, Meta, ResponseParameters, SCIMException

from sso.scim import errors


def validate(model, body, scim_ctx):
    """``body`` as ``model`` (a scim2-models resource or message); ScimError on anything it refuses."""
    if not isinstance(body, dict):
        raise errors.invalid_syntax("The request body must be a JSON object")
    body = _known_schemas_only(model, body)
    try:
        return model.model_validate(body, scim_ctx=scim_ctx)
    except ValidationError as exc:
        raise _validation_error(exc) from None
    except SCIMException as exc:
        raise errors.ScimError(exc.status, exc.detail, exc.scim_type or None) from None
    except (ValueError, TypeError):
        raise errors.invalid_value("The request is not a valid SCIM resource") from None


def _known_schemas_only(model, body):
    """Entra lists a schema of its own on Groups (``http://schemas.microsoft.com/.../ADSCIM/2.0/Group``)
    with no attribute in it: such a URN is dropped from ``schemas`` rather than refused. An attribute
    under an unknown URN is still refused by the model."""
    schemas = body.get("schemas")
    known = getattr(model, "model_fields", {}).get("schemas")
    if not isinstance(schemas, list) or known is None:
        return body
    allowed = set(_schemas_of(model))
    kept = [urn for urn in schemas if not isinstance(urn, str) or urn in allowed or urn in body
            or not urn.lower().startswith("http")]
    return body if kept == schemas else {**body, "schemas": kept}


def _schemas_of(model):
    found = list(getattr(model, "__schema__", None) and [model.__schema__] or [])
    for extension in getattr(model, "get_extension_models", lambda: {})().values():
        found.append(extension.__schema__)
    return [str(urn) for urn in found]


def _validation_error(exc):
    """The first problem, in a short message that names the attribute (never the whole input)."""
    first = (exc.errors(include_url=False, include_input=False) or [{}])[0]
    kind = str(first.get("type", ""))
    where = ".".join(str(part) for part in first.get("loc", ()) if not isinstance(part, int))
    detail = f"{where}: {first.get('msg', 'invalid value')}" if where else str(first.get("msg", "invalid value"))
    detail = detail[:300]
    if kind.startswith("scim_"):
        scim_type = kind[len("scim_"):]
        status = 409 if scim_type == "uniqueness" else 400
        return errors.ScimError(status, detail, scim_type)
    return errors.invalid_value(detail)


def meta(resource_type, row, location):
    return Meta(resource_type=resource_type, created=row.created_at, last_modified=row.updated_at,
                location=location)


def parameters(query):
    """``attributes`` / ``excludedAttributes`` of the query string (comma-separated)."""
    attributes = _split(query.get("attributes"))
    excluded = _split(query.get("excludedAttributes"))
    if not attributes and not excluded:
        return None
    try:
        return ResponseParameters(attributes=attributes or None, excluded_attributes=excluded or None)
    except ValidationError:
        raise errors.invalid_value("attributes or excludedAttributes is not a list of attribute paths") from None


def _split(value):
    if not value:
        return []
    if len(value) > 2048:
        raise errors.invalid_value("attributes or excludedAttributes is too long")
    return [part.strip() for part in value.split(",") if part.strip()]


def dump(model, params=None, scim_ctx=Context.RESOURCE_QUERY_RESPONSE):
    return model.model_dump(scim_ctx=scim_ctx, response_parameters=params)


def paging(query, max_results):
    """``(offset, count)`` from ``startIndex`` (1-based, below 1 means 1) and ``count`` (RFC 7644 §3.4.2.4)."""
    start = _int(query.get("startIndex"), "startIndex", default=1)
    count = _int(query.get("count"), "count", default=max_results)
    return max(start, 1) - 1, min(max(count, 0), max_results)


def _int(value, name, default):
    if value in (None, ""):
        return default
    text = str(value).strip()
    if not (text.lstrip("-").isdigit() and len(text) <= 18):
        raise errors.invalid_value(f"{name} must be an integer")
    return int(text)


@functools.cache
def parametrized(generic, model):
    """``ListResponse[User]``, ``PatchOp[User]``, …: pydantic builds a class (and its schema) per
    subscription, which costs milliseconds; made once per process."""
    return generic[model]


def list_response(model, rows, total, offset, to_model, params):
    resources = [to_model(row) for row in rows]
    response = parametrized(ListResponse, model)(total_results=total, start_index=offset + 1,
                                                 items_per_page=len(resources), resources=resources)
    return response.model_dump(scim_ctx=Context.SEARCH_RESPONSE, response_parameters=params)
