"""The only place that builds responses: JSON bodies, error bodies, redirects and cookies.

I3: every answer that is not JSON (XML, HTML, redirects, empty bodies) leaves through :func:`harden`.
``nosniff`` stops a browser from guessing a script or a page out of a body; the sandboxing CSP makes
whatever does render a document with no script, no plugin, no form and an opaque origin, so even a
document we did not write cannot act on the auth origin. Our own HTML pages relax only ``style-src``.

Caches (I10): an answer that read the caller's session, or sets a cookie, varies on ``Cookie`` (and
``Authorization`` with bearer tokens on); one that sets a cookie is also ``private``, so no shared
cache (Django's site-wide cache included) stores it or hands it to someone else. Endpoints marked
``no_store`` (get-session, sign-in, ...) are ``no-store`` outright.
"""

import json
from http.cookies import Morsel

from django.http import HttpResponse
from django.utils.cache import patch_cache_control, patch_vary_headers

from authservice import bearer, cookies
from authservice.api.context import Headers, Redirect
from authservice.errors import APIError, codes


# json.dumps with any option builds a JSONEncoder per call; one built once writes the same bytes.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _json(data):
    return _ENCODER.encode(data)


NOSNIFF = "nosniff"
SANDBOX_CSP = "default-src 'none'; sandbox"
OWN_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"  # our escaped pages' inline <style>


def harden(response):
    """``nosniff`` and, unless a stricter builder set one, the sandboxing CSP on a non-JSON answer."""
    if (response.get("Content-Type") or "").split(";", 1)[0].strip().lower() == "application/json":
        return response
    response["X-Content-Type-Options"] = NOSNIFF
    if "Content-Security-Policy" not in response:
        response["Content-Security-Policy"] = SANDBOX_CSP
    return response


def _cache_policy(ctx):
    """(the headers to vary on, whether ``private``): varies on what names the session when ``ctx``
    read it or sets a cookie; private when it sets one. The one rule for HTTP and in-process answers."""
    varies = ctx._session_loaded or ctx._session_cached or bool(ctx.response_cookies)
    vary = (["Cookie", "Authorization"] if bearer.enabled() else ["Cookie"]) if varies else []
    return vary, bool(ctx.response_cookies)


def keep_out_of_shared_caches(ctx, response):
    """Apply :func:`_cache_policy` to ``response``. Header patching only: no lookup of its own."""
    vary, private = _cache_policy(ctx)
    if vary:
        patch_vary_headers(response, vary)
    if private:
        patch_cache_control(response, private=True)


def _apply(ctx, response):
    if ctx is None:
        return harden(response)
    for key, value in ctx.response_headers.items():
        response[key] = value
    apply_cookies(ctx, response)
    keep_out_of_shared_caches(ctx, response)
    if ctx.endpoint is not None and ctx.endpoint.no_store:
        response["Cache-Control"] = "no-store"
        response["Pragma"] = "no-cache"
    return harden(response)


def apply_cookies(ctx, response, keep_existing=False):
    """``ctx``'s cookies (and, with bearer tokens on, ``set-auth-token``) onto ``response``.

    ``keep_existing``: a cookie the response already sets wins (the middleware's refresh must not
    overwrite what a view wrote).
    """
    kept = set()
    for name, (value, attrs) in ctx.response_cookies.items():
        if keep_existing and name in response.cookies:
            kept.add(name)
            continue
        # Written by hand: Django's set_cookie quotes an empty value (``=""``) and adds Expires.
        morsel = Morsel()
        morsel.set(name, value, value)
        if attrs.get("max_age") is not None:
            morsel["max-age"] = attrs["max_age"]
        if attrs.get("domain"):
            morsel["domain"] = attrs["domain"]
        morsel["path"] = attrs["path"]
        morsel["httponly"] = attrs["httponly"]
        morsel["secure"] = attrs["secure"]
        morsel["samesite"] = attrs["samesite"]
        response.cookies[name] = morsel
    token = bearer.exposed_token(ctx)
    if token is not None and cookies.cookie_name(cookies.SESSION_TOKEN) not in kept:
        response[bearer.HEADER] = token
        response["Access-Control-Expose-Headers"] = bearer.add_exposed_header(
            response.get("Access-Control-Expose-Headers"))


def success(ctx, result):
    if isinstance(result, Redirect):
        response = HttpResponse(status=302)
        response["Location"] = result.location
        del response["Content-Type"]
        return _apply(ctx, response)
    if isinstance(result, HttpResponse):  # endpoints that answer HTML or XML build it through here
        return _apply(ctx, result)
    if ctx is not None and ctx.status_code == 204:  # "No Content" has no body, not even ``null``
        response = HttpResponse(status=204)
        del response["Content-Type"]
        return _apply(ctx, response)
    response = HttpResponse(_json(result), status=ctx.status_code, content_type="application/json")
    return _apply(ctx, response)


def error(err, ctx=None):
    response = HttpResponse(_json(err.body()), status=err.status_code, content_type="application/json")
    for key, value in (err.headers.items() if isinstance(err.headers, (dict, Headers)) else []):
        if key.lower() != "set-cookie":
            response[key] = value
    return _apply(ctx, response)


def not_found_response():
    return error(APIError(404, codes.NOT_FOUND))


def html(content, status=200):
    """One of our own pages (every value escaped by its builder); hardened when it leaves."""
    response = HttpResponse(content, status=status, content_type="text/html; charset=utf-8")
    response["Content-Security-Policy"] = OWN_PAGE_CSP
    return harden(response)


def xml(content, status=200):
    """An XML document; it may carry user-supplied values, so it gets the sandboxing CSP."""
    return harden(HttpResponse(content, status=status, content_type="application/xml"))


def headers_of(ctx, extra=None):
    """Response headers for an in-process caller, ``Set-Cookie`` lines included."""
    headers = Headers(extra or {})
    if ctx is None:
        return headers
    for key, value in ctx.response_headers.items():
        headers.add(key, value)
    for name, (value, attrs) in ctx.response_cookies.items():
        headers.add("set-cookie", cookies.format_set_cookie(name, value, **attrs))
    token = bearer.exposed_token(ctx)
    if token is not None:
        headers.set(bearer.HEADER, token)
        headers.set("access-control-expose-headers",
                    bearer.add_exposed_header(headers.get("access-control-expose-headers")))
    vary, private = _cache_policy(ctx)
    if vary:
        present = [v.strip() for v in (headers.get("vary") or "").split(",") if v.strip()]
        present += [name for name in vary if name.lower() not in {v.lower() for v in present}]
        headers.set("vary", ", ".join(present))
    if private:
        headers.set("cache-control", "private")
    if ctx.endpoint is not None and ctx.endpoint.no_store:
        headers.set("cache-control", "no-store")
        headers.set("pragma", "no-cache")
    if "content-type" not in headers:
        headers.add("content-type", "application/json")
    return headers
