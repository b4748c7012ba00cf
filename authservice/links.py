"""Public URLs: ``{base}`` = the public origin + the base path; every mailed link is built on it."""

from urllib.parse import urlencode, urlsplit, urlunsplit

from authservice import app_settings
from authservice.cookies import encode_component


def public_origin(ctx=None):
    if app_settings.base_url:
        return app_settings.base_url.rstrip("/")
    if ctx is not None and ctx.request is not None:
        return f"{ctx.request.scheme}://{ctx.request.get_host()}"
    return "http://localhost:8000"


def base(ctx=None):
    return public_origin(ctx) + app_settings.base_path.rstrip("/")


def with_params(url, **params):
    """``url`` with ``params`` appended, ``?`` or ``&`` as it needs, before any fragment."""
    url, hash_mark, fragment = url.partition("#")
    separator = "&" if "?" in url else "?"
    return url + separator + urlencode(params) + hash_mark + fragment


def set_param(url, key, value):
    """``url`` with exactly one ``key=value`` in its query (other keys kept)."""
    parts = urlsplit(url)
    kept = [pair for pair in parts.query.split("&") if pair and pair.split("=", 1)[0] != key]
    kept.append(f"{key}={encode_component(value)}")
    return urlunsplit(parts._replace(query="&".join(kept)))


def with_error(target, error, description=None):
    """``target`` with ``error`` (and ``error_description``) for a browser flow's failure redirect.

    A relative target gets ``?``/``&`` appended; an absolute one is re-serialised with a form-encoded
    query, so a bare origin becomes ``http://host/?error=...`` (sso.md §9).
    """
    params = {"error": error}
    if description:
        params["error_description"] = description
    if "://" not in target:
        return with_params(target, **params)
    parts = urlsplit(target)
    query = f"{parts.query}&{urlencode(params)}" if parts.query else urlencode(params)
    return urlunsplit(parts._replace(path=parts.path or "/", query=query))
