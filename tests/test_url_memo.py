"""authservice.url_memo: the API's WSGI path remembers URL matches only where Django's answer is the same.

Each test compares with ``resolver.resolve`` itself, the trusted path.
"""

import random
import string

import pytest
from django.urls import Resolver404, get_resolver, include, path, re_path, register_converter
from django.urls.converters import IntConverter

from authservice import url_memo


def _same(a, b):
    return (a.func, a.args, a.kwargs, a.url_name, a.app_names, a.namespaces, a.route, a.view_name) == (
        b.func, b.args, b.kwargs, b.url_name, b.app_names, b.namespaces, b.route, b.view_name)


PATHS = [
    "/api/auth/get-session", "/api/auth/ok", "/api/auth/", "/api/auth", "/api/auth/callback/google",
    "/api/auth/sso/saml2/sp/acs/okta", "/api/auth/scim/v2/Users", "/api/auth/scim/v2/Users/abc",
    "/api/auth/scim/v2/", "/api/auth/scim/v2/%0A", "/api/auth/no-such-endpoint", "/api/auth//get-session",
    "/me/", "/", "/admin/", "/admin/login/", "/api/authx", "/api/auth/get-session/",
]


def test_the_example_projects_urlconf_is_remembered():
    assert url_memo.pure(get_resolver())


@pytest.mark.parametrize("path_info", PATHS)
def test_a_remembered_match_is_djangos_match(path_info):
    resolver = get_resolver()
    try:
        expected = resolver.resolve(path_info)
    except Resolver404:
        with pytest.raises(Resolver404):
            url_memo.resolve(resolver, path_info)
        return
    for _ in range(3):  # the first resolves, the next are remembered
        assert _same(url_memo.resolve(resolver, path_info), expected)


def test_random_paths_under_the_api_resolve_as_django_resolves_them():
    resolver = get_resolver()
    rng = random.Random(18)
    alphabet = string.ascii_letters + string.digits + "/-_.%~:@!$&'()*+,;=\n"
    for _ in range(500):
        path_info = "/api/auth/" + "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        try:
            expected = resolver.resolve(path_info)
        except Resolver404:
            with pytest.raises(Resolver404):
                url_memo.resolve(resolver, path_info)
            continue
        assert _same(url_memo.resolve(resolver, path_info), expected)
        assert _same(url_memo.resolve(resolver, path_info), expected)


def test_each_request_gets_its_own_copy_of_the_match():
    resolver = get_resolver()
    first = url_memo.resolve(resolver, "/api/auth/get-session")
    first.kwargs["subpath"] = "/sign-out"  # a middleware editing callback_kwargs
    first.app_names.append("edited")
    second = url_memo.resolve(resolver, "/api/auth/get-session")
    assert second.kwargs == {"subpath": "/get-session"}
    assert "edited" not in second.app_names


def _view(request, **kwargs):
    return None


class _DatabaseConverter(IntConverter):
    """What a project may register: a converter whose answer depends on more than the path."""


register_converter(_DatabaseConverter, "authservice_url_memo_test")


class urlconf_with_a_registered_converter:
    urlpatterns = [path("thing/<authservice_url_memo_test:pk>/", _view), path("", include("authservice.urls"))]


class urlconf_with_builtin_converters:
    urlpatterns = [path("thing/<int:pk>/<slug:name>/<uuid:id>/<path:rest>", _view),
                   re_path(r"^plain/(?P<x>\d+)$", _view), path("", include("authservice.urls"))]


class urlconf_with_i18n_patterns:
    from django.conf.urls.i18n import i18n_patterns

    urlpatterns = [*i18n_patterns(path("page/", _view)), path("", include("authservice.urls"))]


class urlconf_with_a_translated_route:
    from django.utils.translation import gettext_lazy

    urlpatterns = [path(gettext_lazy("page/"), _view), path("", include("authservice.urls"))]


def test_django_converters_and_plain_patterns_are_pure():
    assert url_memo.pure(get_resolver(urlconf_with_builtin_converters))


@pytest.mark.parametrize("urlconf", [urlconf_with_a_registered_converter, urlconf_with_i18n_patterns,
                                     urlconf_with_a_translated_route])
def test_what_depends_on_more_than_the_path_is_never_remembered(urlconf, monkeypatch):
    resolver = get_resolver(urlconf)
    assert not url_memo.pure(resolver)
    monkeypatch.setattr(url_memo, "_remembered", lambda *args: pytest.fail("remembered"))
    assert url_memo.resolve(resolver, "/api/auth/get-session").kwargs == {"subpath": "/get-session"}


def test_a_changed_urlconf_is_resolved_afresh(settings):
    assert url_memo.resolve(get_resolver(), "/api/auth/ok").url_name == "api"
    settings.ROOT_URLCONF = urlconf_with_builtin_converters  # clears Django's resolver cache
    match = url_memo.resolve(get_resolver(), "/plain/7")
    assert match.func is _view and match.kwargs == {"x": "7"}
