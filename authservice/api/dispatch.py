"""The one pipeline every call goes through, over HTTP or in-process (core.md §1.1, §1.10).

HTTP order: rate limit -> route -> parse body -> Origin and URL fields -> validate -> guards -> handler.
In-process calls skip the first four steps (there is no request to limit, route, parse or check).
"""

import json
import logging
import math

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.db import DatabaseError, DataError, InterfaceError, OperationalError
from django.http import QueryDict
from django.views.decorators.csrf import csrf_exempt

from authservice import app_settings, origins, ratelimit
from authservice.api import guards, inputs, render
from authservice.api.context import Context, Headers, Redirect
from authservice.api.registry import registry
from authservice.errors import APIError, codes, validation_error

logger = logging.getLogger("authservice")
request_logger = logging.getLogger("django.request")

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"

# Router-wide URL fields: (where, key, label in the type error, error code when untrusted).
URL_FIELDS = (
    ("body", "callbackURL", "callbackURL", codes.INVALID_CALLBACK_URL),
    ("query", "callbackURL", "callbackURL", codes.INVALID_CALLBACK_URL),
    ("body", "redirectTo", "redirectURL", codes.INVALID_REDIRECT_URL),
    ("body", "errorCallbackURL", "errorCallbackURL", codes.INVALID_ERROR_CALLBACK_URL),
    ("body", "newUserCallbackURL", "newUserCallbackURL", codes.INVALID_NEW_USER_CALLBACK_URL),
)


# --- HTTP --------------------------------------------------------------------------------------
@csrf_exempt
def http_view(request, subpath=None):
    """The single Django view behind the base path."""
    subpath = subpath or ""
    ctx = None
    try:
        if app_settings.rate_limit.enabled:
            ratelimit.check(request, subpath or "/")
        endpoint, params = registry.resolve(request.method, subpath)
        if endpoint is None:
            raise APIError(404, codes.NOT_FOUND)
        raw_body = _parse_body(request, endpoint)
        query = _query_dict(request)
        headers = Headers.of_request(request)
        ctx = Context(endpoint, headers=headers, params=params, request=request)
        if endpoint.origin_check and request.method not in ("GET", "HEAD", "OPTIONS"):
            guards.check_origin(ctx)
            _check_url_fields(raw_body, query)
        result = _run(ctx, raw_body, query)
        return render.success(ctx, result)
    except APIError as error:
        return render.error(error, ctx)
    except DataError:
        # A value the database cannot store (too long, out of range) that validation let through:
        # the client's input, so a 400, and logged so the missing check gets added.
        logger.warning("database refused a value for %s", request.path, exc_info=True)
        return render.error(APIError(400, codes.VALIDATION_ERROR, "Invalid input"), ctx)
    except (OperationalError, InterfaceError) as exc:
        # The database went away (restart, failover): a clean, retryable answer.
        logger.warning("database unavailable: %s", exc)
        return render.error(APIError(503, codes.SERVICE_UNAVAILABLE), ctx)
    except Exception:  # noqa: BLE001 - the last line of defence: never an HTML 500
        request_logger.exception("Internal Server Error: %s", request.path, extra={"request": request})
        return render.error(APIError(500, codes.INTERNAL_SERVER_ERROR), ctx)


def _media_type(request):
    return (request.META.get("CONTENT_TYPE") or "").split(";", 1)[0].strip().lower()


def _parse_body(request, endpoint):
    """The decoded body (dict, list, scalar) or ``None`` when the request has none."""
    try:
        body = request.body
    except RequestDataTooBig:
        raise APIError(413, codes.PAYLOAD_TOO_LARGE) from None
    if not body:
        return None
    allowed = (FORM, JSON) if endpoint.form else (JSON,)
    content_type = request.META.get("CONTENT_TYPE")
    allowed_text = ", ".join(allowed)
    if not content_type:
        raise APIError(415, codes.UNSUPPORTED_MEDIA_TYPE,
                       f"Content-Type is required. Allowed types: {allowed_text}")
    media_type = _media_type(request)
    if media_type not in allowed:
        raise APIError(415, codes.UNSUPPORTED_MEDIA_TYPE,
                       f'Content-Type "{content_type}" is not allowed. Allowed types: {allowed_text}')
    if media_type == FORM:
        try:
            form = QueryDict(body, encoding="utf-8")
        except TooManyFieldsSent:
            raise APIError(413, codes.PAYLOAD_TOO_LARGE) from None
        return {key: form.getlist(key)[-1] for key in form}
    try:
        value = json.loads(body.decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite_float)
        # "\ud800" escapes decode to lone surrogates, which no database column can store.
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError):  # UnicodeError is a ValueError
        raise APIError(400, codes.BAD_REQUEST) from None
    return JSON_NULL if value is None else value


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def _finite_float(text):
    """``1e309`` is valid JSON that Python reads as infinity, which no endpoint, column or answer can
    carry (JSON has no infinity): refused as the literal ``Infinity`` is, so no handler ever sees one."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


class _JsonNull:
    """A body that is the JSON literal ``null``: zod reports it as ``received null``, not ``undefined``."""

    def __repr__(self):
        return "JSON_NULL"


JSON_NULL = _JsonNull()


def _query_dict(request):
    if not request.META.get("QUERY_STRING"):
        return {}  # what an empty QueryDict gives, without building one (most requests have no query)
    query = {}
    for key in request.GET:
        values = request.GET.getlist(key)
        query[key] = values if len(values) > 1 else values[0]
    return query


def _check_url_fields(body, query):
    sources = {"body": body if isinstance(body, dict) else {}, "query": query}
    for where, key, label, code in URL_FIELDS:
        value = sources[where].get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise validation_error(f"Invalid {label}: expected a string")
        if not origins.is_allowed_url(value):
            raise APIError(403, code)


# --- shared by both ----------------------------------------------------------------------------
def _validate(endpoint, raw_body, query):
    if raw_body is JSON_NULL:
        if endpoint.body is not None:
            raise validation_error("[body] Invalid input: expected object, received null")
        raw_body = None
    body = raw_body
    if body is None and endpoint.body_optional:
        body = {}
    if endpoint.body is not None:
        body, problem = inputs.validate(endpoint.body, body, "body")
        if problem:
            raise validation_error(problem)
    elif not isinstance(body, dict):
        body = {}
    if endpoint.query is not None:
        query, problem = inputs.validate(endpoint.query, query or {}, "query")
        if problem:
            raise validation_error(problem)
    return body, query or {}


def _run(ctx, raw_body, query):
    ctx.body, ctx.query = _validate(ctx.endpoint, raw_body, query)
    guards.run(ctx)
    return ctx.endpoint.handler(ctx)


# --- in-process --------------------------------------------------------------------------------
def call(endpoint, *, body=None, headers=None, query=None, params=None, request=None,
         return_headers=False, as_response=False):
    """Run ``endpoint`` in-process (core.md §1.10)."""
    if endpoint.headers_required and headers is None and request is None:
        error = validation_error("Headers is required")
        if as_response:
            return render.error(error, None)
        raise error
    if request is not None and headers is None:
        headers = Headers(request.headers)
    ctx = Context(endpoint, headers=headers, params=params, request=request)
    try:
        result = _run(ctx, body, query)
    except APIError as error:
        if as_response:
            return render.error(error, ctx)
        error.headers = render.headers_of(ctx, error.headers)
        raise
    except DatabaseError:
        if as_response:
            return render.error(APIError(503, codes.SERVICE_UNAVAILABLE), ctx)
        raise
    if as_response:
        return render.success(ctx, result)
    if isinstance(result, Redirect):
        headers_out = render.headers_of(ctx, {"location": result.location})
        raise APIError(302, "FOUND", "Redirect", headers=headers_out)
    if return_headers:
        return {"headers": render.headers_of(ctx), "response": result}
    return result
