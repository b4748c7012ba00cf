"""authservice: a Django auth service that speaks better-auth's wire protocol.

In-process calls::

    from authservice import auth
    result = auth.api.sign_in_email(body={"email": ..., "password": ...}, headers=request.headers)
"""

from authservice.api.server import auth  # noqa: F401

__all__ = ["auth"]
