"""Records as they go over the wire: camelCase keys, ISO dates with milliseconds (core.md §1.6, §6)."""

from datetime import timezone as dt_timezone


def iso(value):
    if value is None:
        return None
    # isoformat pads years below 1000 to four digits (strftime's %Y does not, on glibc) and cuts to
    # milliseconds as JavaScript's toISOString does.
    return value.astimezone(dt_timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def user(record):
    """better-auth's user object; the mapping onto the project's user model is authservice.users."""
    from authservice import users

    return users.to_wire(record)


def session(record):
    return {
        "id": record.pk,
        "token": record.token,
        "userId": str(record.user_id),
        "expiresAt": iso(record.expires_at),
        "createdAt": iso(record.created_at),
        "updatedAt": iso(record.updated_at),
        "ipAddress": record.ip_address,
        "userAgent": record.user_agent,
    }


def account(record):
    return {
        "id": record.pk,
        "accountId": record.account_id,
        "providerId": record.provider_id,
        "userId": str(record.user_id),
        "scopes": [scope.strip() for scope in (record.scope or "").split(",") if scope.strip()],
        "createdAt": iso(record.created_at),
        "updatedAt": iso(record.updated_at),
    }


def passkey(record):
    """@better-auth/passkey's record; the public key is public, the credential ID names no account."""
    return {
        "id": record.pk,
        "name": record.name,
        "publicKey": record.public_key,
        "userId": str(record.user_id),
        "credentialID": record.credential_id,
        "counter": record.counter,
        "deviceType": record.device_type,
        "backedUp": record.backed_up,
        "transports": record.transports,
        "createdAt": iso(record.created_at),
        "aaguid": record.aaguid,
    }
