"""URL resolution for the API's WSGI path, remembered per path when that gives the same answer.

Django resolves every request by walking the project's URL patterns (the admin's, the project's, SCIM's,
then authservice's catch-all), building a ``ResolverMatch`` each time: on get-session answered from the
cookie cache that was a tenth of the request's Python (bench/README.md, issue 18). For most projects the
walk is a pure function of the path: every pattern is a plain regex or route string and every path
converter is one of Django's own (``int``, ``str``, ``slug``, ``uuid``, ``path``), none of which reads
anything but the path. Then the match of a path can be kept and handed out again.

What is not pure is never remembered: a converter the project registered (its ``to_python`` may read
the database), ``i18n_patterns`` and translated routes (they depend on the active language). Any of those
anywhere in the URLconf and every request is resolved by Django, as before. A path that matches nothing
(``Resolver404``) is not remembered either. The memory is bounded: :data:`SIZE` paths in all (least
recently used out), each of at most :data:`MAX_PATH` characters, so paths made up by a client cost a
resolution each, never memory. The length bound matters because under the API's base path *every* path
matches (authservice's catch-all answers the JSON 404 itself), and a match keeps its path twice (key
and ``subpath``): 512 made-up 60 KB paths kept 63 MB for good before it (attack pass 18b, I6). Real
endpoints' paths, ids included, are far shorter. A changed
URLconf (``ROOT_URLCONF``, ``clear_url_caches()``) is a new resolver object, hence new entries. Each request gets
its own copy of the match, so a middleware that edits ``callback_kwargs`` edits only its own.
"""

import functools

from django.urls.converters import DEFAULT_CONVERTERS
from django.urls.resolvers import RegexPattern, ResolverMatch, RoutePattern, URLPattern, URLResolver

SIZE = 512
# Longer paths are resolved each time: at most SIZE * MAX_PATH characters of paths are kept (I6).
MAX_PATH = 256

_PURE_CONVERTERS = frozenset(type(converter) for converter in DEFAULT_CONVERTERS.values())


def _pure_pattern(pattern):
    if type(pattern) is RegexPattern:
        return isinstance(pattern._regex, str)  # a lazily translated regex depends on the language
    if type(pattern) is RoutePattern:
        return isinstance(pattern._route, str) and all(
            type(converter) in _PURE_CONVERTERS for converter in pattern.converters.values())
    return False  # LocalePrefixPattern (i18n_patterns) and anything a project defines


def pure(resolver):
    """Whether resolving a path with ``resolver`` depends on nothing but the path."""
    pending = [resolver]
    while pending:
        entry = pending.pop()
        if not _pure_pattern(entry.pattern):
            return False
        if isinstance(entry, URLResolver):
            pending.extend(entry.url_patterns)
        elif not isinstance(entry, URLPattern):
            return False
    return True


@functools.lru_cache(maxsize=32)
def _is_pure(resolver):
    return pure(resolver)


@functools.lru_cache(maxsize=SIZE)
def _remembered(resolver, path):
    return resolver.resolve(path)


def resolve(resolver, path):
    """``resolver.resolve(path)``: the same match (a copy of one kept earlier when the URLconf is pure)."""
    if len(path) > MAX_PATH or not _is_pure(resolver):
        return resolver.resolve(path)
    return _copy(_remembered(resolver, path))


def _copy(match):
    copy = ResolverMatch.__new__(ResolverMatch)
    copy.__dict__.update(match.__dict__)
    copy.args = tuple(match.args)
    copy.kwargs = dict(match.kwargs)
    if match.captured_kwargs is not None:
        copy.captured_kwargs = dict(match.captured_kwargs)
    if match.extra_kwargs is not None:
        copy.extra_kwargs = dict(match.extra_kwargs)
    copy.app_names, copy.namespaces = list(match.app_names), list(match.namespaces)
    return copy
