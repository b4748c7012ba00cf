"""The SCIM protocol over HTTP: ``{base}/scim/v2/...``, one view, routed here.

Why not the endpoint registry (authservice/api): SCIM has its own media type (``application/scim+json``),
its own error body (the Error schema, not ``{message, code, status}``), its own authentication (the
connection's bearer token, never a session or cookie, so no Origin check) and its own resource shapes.
The registry's pipeline would answer a SCIM client in better-auth's dialect. The routes are still listed
in the OpenAPI document (sso/scim/openapi.py) and fuzzed (tests/test_fuzz.py).
"""

import json
import logging
import re

from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, DataError, IntegrityError
from django.http import HttpResponse
from django.views.decorators.csrf import csrf_exempt

from authservice import links
from sso import app_settings as sso_settings
from sso.scim import discovery, errors, groups, paging, projection, resources, tokens, users

logger = logging.getLogger("sso")
request_logger = logging.getLogger("django.request")

MEDIA_TYPE = errors.MEDIA_TYPE
LIST_URN = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
ACCEPTED_TYPES = (MEDIA_TYPE, "application/json")
_ROUTE = re.compile(r"^(?P<kind>[A-Za-z]+)(?:/(?P<id>[^/]+))?/?\Z")


class _Request:
    """What ``authservice.links`` reads of a context: the request."""

    def __init__(self, request):
        self.request = request


def base_url(request):
    return f"{links.base(_Request(request))}/scim/v2"


def respond(data, status=200, location=None):
    if data is None:
        response = HttpResponse(status=status)
    else:
        response = HttpResponse(json.dumps(data, ensure_ascii=False), status=status, content_type=MEDIA_TYPE)
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    if location:
        response["Location"] = location
    return response


def error_response(error):
    response = respond(error.body(), status=error.status)
    if error.status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="SCIM"'
    return response


@csrf_exempt
def scim_view(request, subpath=""):
    try:
        return _dispatch(request, subpath or "")
    except errors.ScimError as error:
        return error_response(error)
    except DataError:
        logger.warning("database refused a SCIM value for %s", request.path, exc_info=True)
        return error_response(errors.invalid_value("A value is too long or out of range"))
    except IntegrityError:  # a concurrent write won a unique constraint the flow's own check did not see
        return error_response(errors.uniqueness("The resource conflicts with another; retry"))
    except DatabaseError as exc:
        logger.warning("database unavailable for SCIM: %s", exc)
        return error_response(errors.ScimError(503, "Service unavailable"))
    except Exception:  # noqa: BLE001 - never an HTML 500
        request_logger.exception("Internal Server Error: %s", request.path, extra={"request": request})
        return error_response(errors.ScimError(500, "Internal server error"))


def _dispatch(request, subpath):
    if not sso_settings.scim.enabled:
        raise errors.not_found("Endpoint")
    connection = tokens.authenticate(request.headers.get("Authorization"))
    if connection is None:
        raise errors.ScimError(401, "A valid SCIM bearer token is required")
    if subpath.rstrip("/") == ".search":
        # Searching every resource type at once (RFC 7644 §3.4.3) is not offered: 501, as §3.12 says.
        raise errors.ScimError(501, "Search across resource types is not supported; use /Users/.search")
    route = _ROUTE.match(subpath)
    if route is None:
        raise errors.not_found("Endpoint")
    kind, item_id = route["kind"], route["id"]
    base = base_url(request)
    if kind in ("ServiceProviderConfig", "Schemas", "ResourceTypes"):
        if request.method != "GET":
            raise errors.ScimError(405, "Method not allowed")
        if kind == "ServiceProviderConfig":
            if item_id is not None:
                raise errors.not_found("Endpoint")
            return respond(discovery.service_provider_config(base))
        return respond(discovery.listing(kind, base, item_id))
    if kind == "Users":
        return UserRoutes(request, connection, base).route(item_id)
    if kind == "Groups":
        return GroupRoutes(request, connection, base).route(item_id)
    raise errors.not_found("Endpoint")


def _body(request):
    try:
        raw = request.body
    except RequestDataTooBig:
        raise errors.ScimError(413, "The request body is too large") from None
    media_type = (request.META.get("CONTENT_TYPE") or "").split(";", 1)[0].strip().lower()
    if media_type not in ACCEPTED_TYPES:
        raise errors.ScimError(415, f"Send {MEDIA_TYPE}")
    try:
        text = raw.decode("utf-8")
        body = json.loads(text, parse_constant=_reject)
        if "\\u" in text:
            # "\ud800" escapes decode to lone surrogates, which no database column can store nor any
            # answer encode: refused here, once, for every resource and PATCH (UnicodeError is a ValueError).
            json.dumps(body, ensure_ascii=False).encode("utf-8")
        return body
    except (ValueError, RecursionError):
        raise errors.invalid_syntax("The request body is not valid JSON") from None


def _reject(name):
    raise ValueError(name)


def _search_request(body):
    """A SearchRequest's members as the query string would carry them (lists joined by commas)."""
    if not isinstance(body, dict):
        raise errors.invalid_syntax("The request body must be a JSON object")
    query = {}
    for key in ("filter", "startIndex", "count", "attributes", "excludedAttributes"):
        value = body.get(key)
        if value is None:
            continue
        if key in ("attributes", "excludedAttributes"):
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise errors.invalid_value(f"{key} must be a list of attribute paths")
            value = ",".join(value)
        elif key == "filter" and not isinstance(value, str):
            raise errors.invalid_filter("filter must be a string")
        elif key != "filter" and (isinstance(value, bool) or not isinstance(value, (int, str))):
            raise errors.invalid_value(f"{key} must be an integer")
        query[key] = str(value)
    return query


class Routes:
    """The five operations of one resource type (RFC 7644 §3), for one authenticated connection."""

    module = None
    name = ""

    def __init__(self, request, connection, base):
        self.request, self.connection, self.base = request, connection, base
        self.query = request.GET
        self.max_results = sso_settings.scim.max_results

    def location(self, pk):
        return f"{self.base}/{self.name}/{pk}"

    def route(self, item_id):
        method = self.request.method
        if item_id == ".search" and method == "POST":  # RFC 7644 §3.4.3: the query in the body
            return self.list(_search_request(_body(self.request)))
        if item_id is None:
            if method == "GET":
                return self.list(self.query)
            if method == "POST":
                row = self.module.create(self.connection, _body(self.request))
                return respond(self.render(row), status=201, location=self.location(row.pk))
        else:
            if method == "GET":
                return respond(self.render(self.module.get(self.connection, item_id)))
            if method == "PUT":
                return respond(self.render(self.module.replace(self.connection, item_id, _body(self.request))))
            if method == "PATCH":
                return self.patch(item_id)
            if method == "DELETE":
                self.module.delete(self.connection, item_id)
                return respond(None, status=204)
        raise errors.ScimError(405, "Method not allowed")

    listing = False  # rendering a list: GroupRoutes leaves members out unless asked

    def list(self, query):
        self.listing = True
        params = resources.parameters(query)
        rows = self.module.search(self.connection, query.get("filter"))
        offset, count = resources.paging(query, self.max_results)
        with paging.snapshot(rows.db) as consistent:
            total = self.module.total(self.connection, rows, query.get("filter"))
            page = self.page(rows, offset, count, total, consistent) if count else []
        plain = self.plain(params)
        if plain is not None:
            return respond({"schemas": [LIST_URN], "totalResults": total, "startIndex": offset + 1,
                            "itemsPerPage": len(page), "Resources": [plain(row) for row in page]})
        return respond(resources.list_response(self.model, page, total, offset,
                                               lambda row: self.to_model(row, params), params))

    def render(self, row):
        params = resources.parameters(self.query)
        plain = self.plain(params)
        if plain is not None:
            return plain(row)
        return resources.dump(self.to_model(row, params), params)

    def plain(self, params):
        """A row -> answer function that needs no model for ``params``, or None."""
        return self.to_wire if params is None else None

    def to_wire(self, row):
        return resources.dump(self.to_model(row))


class UserRoutes(Routes):
    module = users
    name = "Users"
    model = users.UserResource

    def page(self, rows, offset, count, total, consistent):
        """The page in two steps: its ids from the ordering index alone (sso/scim/paging.py), then those
        rows and their groups."""
        page = paging.rows(rows, offset, count, total, consistent)
        users.load_groups(page)
        return page

    def to_model(self, row, params=None):
        return users.to_model(row, self.location(row.pk), params)

    def to_wire(self, row):
        return users.to_wire(row, self.location(row.pk))

    def plain(self, params):
        if params is not None and not params.attributes:  # excludedAttributes alone: cut the plain answer
            return lambda row: projection.excluded(self.to_wire(row), params.excluded_attributes)
        return super().plain(params)

    def patch(self, item_id):
        row = users.patch(self.connection, item_id, _body(self.request), sso_settings.scim.max_operations)
        return respond(self.render(row))


class GroupRoutes(Routes):
    module = groups
    name = "Groups"
    model = groups.Group

    def page(self, rows, offset, count, total, consistent):
        return list(rows[offset:offset + count])

    def to_model(self, row, params=None):
        return groups.to_model(row, self.location(row.pk), lambda pk: f"{self.base}/Users/{pk}",
                               with_members=groups.wants_members(params, listing=self.listing))

    def patch(self, item_id):
        """204, or 200 with the group when the client names ``attributes``/``excludedAttributes``
        (RFC 7644 §3.5.2 allows either): a PATCH of a group of 10,000 does not answer all of them."""
        row = groups.patch(self.connection, item_id, _body(self.request), sso_settings.scim.max_operations)
        params = resources.parameters(self.query)
        if params is None:
            return respond(None, status=204)
        return respond(self.render(row))
