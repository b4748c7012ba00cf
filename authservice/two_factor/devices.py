"""Trusted devices: the ``trust_device`` cookie, bound to one user, backed by a revocable row.

The cookie's value is better-auth's: ``{HMAC(secret, "{userId}!{id}")}!{id}``, signed like our other
cookies. A sign-in accepts it only for the user the HMAC names and while the row lives; each use
replaces row and cookie (rotation). Disabling 2FA and every password change delete all the rows.
"""

import base64
import hashlib
import hmac
from datetime import timedelta

from django.utils import timezone

from authservice import app_settings, tokens
from authservice.cookies import signed_value
from authservice.models import TrustedDevice

COOKIE = "trust_device"


def _mac(user_id, identifier):
    digest = hmac.new(app_settings.secret().encode(), f"{user_id}!{identifier}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def trust(ctx, user):
    """A new trusted device for ``user`` and its cookie."""
    max_age = app_settings.two_factor.trust_device_max_age
    identifier = "trust-device-" + tokens.random_string(32)
    TrustedDevice.objects.create(
        id=identifier, user=user, expires_at=timezone.now() + timedelta(seconds=max_age),
        user_agent=ctx.user_agent[:512], ip_address=ctx.client_ip,
    )
    ctx.set_cookie(COOKIE, signed_value(f"{_mac(user.pk, identifier)}!{identifier}"), max_age=max_age)


def _presented(ctx):
    value = ctx.signed_cookie(COOKIE)
    if not value:
        return None, None
    mac, _, identifier = value.partition("!")
    return mac, identifier


def skip_for(ctx, user):
    """Whether the request's trust cookie lets ``user`` skip the second factor; rotates it if so.

    A cookie of another user, an expired or revoked one, is cleared and skips nothing.
    """
    mac, identifier = _presented(ctx)
    if not identifier:
        return False
    if tokens.constant_time_equals(mac, _mac(user.pk, identifier)):
        deleted, _ = TrustedDevice.objects.filter(
            pk=identifier, user=user, expires_at__gt=timezone.now()).delete()
        if deleted:
            trust(ctx, user)
            return True
    ctx.delete_cookie(COOKIE)
    return False


def forget(ctx):
    """Revoke the request's own trusted device (if any) and clear its cookie."""
    _, identifier = _presented(ctx)
    if identifier:
        TrustedDevice.objects.filter(pk=identifier).delete()
        ctx.delete_cookie(COOKIE)


def revoke_all(user):
    TrustedDevice.objects.filter(user=user).delete()


def live(user):
    return TrustedDevice.objects.filter(user=user, expires_at__gt=timezone.now()).order_by("created_at")


def revoke(user, identifier):
    deleted, _ = TrustedDevice.objects.filter(user=user, pk=identifier).delete()
    return deleted > 0


def to_wire(device):
    from authservice import wire

    return {"id": device.pk, "userAgent": device.user_agent, "ipAddress": device.ip_address,
            "createdAt": wire.iso(device.created_at), "expiresAt": wire.iso(device.expires_at)}
