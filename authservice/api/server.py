"""``auth.api.<name>(...)``: every registered endpoint as a Python function (core.md §1.10)."""

import functools


class _API:
    def __getattr__(self, name):
        from authservice.api.dispatch import call
        from authservice.api.registry import registry

        if name not in registry:
            raise AttributeError(f"No endpoint named {name!r}")
        endpoint = registry.get(name)

        @functools.wraps(endpoint.handler)
        def run(*, body=None, headers=None, query=None, params=None, request=None,
                return_headers=False, as_response=False):
            return call(endpoint, body=body, headers=headers, query=query, params=params,
                        request=request, return_headers=return_headers, as_response=as_response)

        return run

    def __dir__(self):
        from authservice.api.registry import registry

        return [endpoint.name for endpoint in registry]


class Auth:
    api = _API()


auth = Auth()
