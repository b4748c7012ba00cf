"""E-mail verification tokens and mails (core.md §4.7, §4.8, §7.2).

Tokens are stateless, signed with the app secret and carry their own expiry, so expired and forged
tokens are told apart (``TOKEN_EXPIRED`` vs ``INVALID_TOKEN``).
"""

import time

from django.core import signing

from authservice import app_settings, links
from authservice.adapter import get_adapter
from authservice.cookies import encode_component
from authservice.errors import APIError, codes

SALT = "authservice.email-verification"


def make_token(email, update_to=None, request_type=None, expires_in=None):
    payload = {"email": email.lower(), "exp": int(time.time()) + (
        expires_in or app_settings.email_verification.expires_in)}
    if update_to:
        payload["updateTo"] = update_to.lower()
    if request_type:
        payload["requestType"] = request_type
    return signing.dumps(payload, key=app_settings.secret(), salt=SALT)


def read_token(token):
    """The token's payload; raises 401 INVALID_TOKEN or TOKEN_EXPIRED."""
    try:
        payload = signing.loads(token, key=app_settings.secret(), salt=SALT)
    except signing.BadSignature:
        raise APIError(401, codes.INVALID_TOKEN) from None
    if not isinstance(payload, dict) or "email" not in payload or "exp" not in payload:
        raise APIError(401, codes.INVALID_TOKEN)
    if payload["exp"] < time.time():
        raise APIError(401, codes.TOKEN_EXPIRED)
    return payload


def verify_url(ctx, token, callback_url):
    return (f"{links.base(ctx)}/verify-email?token={token}"
            f"&callbackURL={encode_component(callback_url or '/')}")


def send_verification_mail(ctx, user, callback_url=None, *, email=None, update_to=None,
                           request_type=None, kind="verify-email"):
    """Mail a verification link for ``email`` (default the user's) to that address."""
    if not app_settings.email_verification.enabled:
        raise APIError(400, codes.VERIFICATION_EMAIL_NOT_ENABLED)
    address = email or user.email
    token = make_token(address if not update_to else user.email, update_to, request_type)
    to = update_to if (update_to and request_type != "change-email-confirmation") else address
    get_adapter().send_mail(kind, to, {
        "user": user, "email": to, "new_email": update_to, "token": token,
        "url": verify_url(ctx, token, callback_url),
    })
    return token
