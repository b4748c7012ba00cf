"""``auth.api.<name>(...)``: every registered endpoint as a Python function (core.md §1.10)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Protocol

from django.http import HttpRequest


class EndpointFunction(Protocol):
    """What ``auth.api.<name>`` is: keyword arguments only, as better-auth's ``auth.api`` takes them.

    Returns the endpoint's data (``None`` from get-session without a session), ``{"headers",
    "response"}`` with ``return_headers=True``, or an ``HttpResponse`` with ``as_response=True``;
    raises :class:`authservice.errors.APIError` otherwise.
    """

    def __call__(self, *, body: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
                 query: Mapping[str, Any] | None = None, params: Mapping[str, str] | None = None,
                 request: HttpRequest | None = None, return_headers: bool = False,
                 as_response: bool = False) -> Any: ...


class _API:
    def __getattr__(self, name: str) -> EndpointFunction:
        from authservice.api.dispatch import call
        from authservice.api.registry import registry

        if name not in registry:
            raise AttributeError(f"No endpoint named {name!r}")
        endpoint = registry.get(name)

        @functools.wraps(endpoint.handler)
        def run(*, body: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
                query: Mapping[str, Any] | None = None, params: Mapping[str, str] | None = None,
                request: HttpRequest | None = None, return_headers: bool = False,
                as_response: bool = False) -> Any:
            return call(endpoint, body=body, headers=headers, query=query, params=params,
                        request=request, return_headers=return_headers, as_response=as_response)

        return run

    def __dir__(self) -> list[str]:
        from authservice.api.registry import registry

        return [endpoint.name for endpoint in registry]


class Auth:
    api: _API = _API()


auth = Auth()
