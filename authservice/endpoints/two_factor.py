"""better-auth 1.7.5's ``twoFactor`` endpoints, and ours to list and revoke trusted devices.

Routes exist only while ``AUTHSERVICE["two_factor"]["enabled"]``. Those a user still to enrol
(``two_factor.required_for``) may call are declared ``during_enrolment=True``: enable, get-totp-uri and
the verify/send calls that finish enrolment (two_factor/policy.py). better-auth's ``generateTOTP`` and
``viewBackupCodes`` are server-only there and have no counterpart here (backup codes are stored
hashed: nobody can view them again).
"""

from authservice import cookie_cache, ratelimit, signals, two_factor, users
from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.errors import APIError, codes
from authservice.flows import passwords, sessions
from authservice.models import TwoFactor
from authservice.two_factor import backup_codes, challenge, crypto, devices, otp, reset, totp

# better-auth's plugin rule: 3 requests per 10 s per IP on each /two-factor/ path.
ratelimit.add_rule(lambda path: path.startswith("/two-factor/") and two_factor.enabled(), 10, 3)

_TAGS = ("two-factor",)


def _register(method, path, **options):
    return endpoint(method, path, enabled=two_factor.enabled, tags=_TAGS, no_store=True, **options)


def _check_password(user, password):
    # better-auth's shouldRequirePassword: a user with a password must give it. One without (social
    # or SSO only) is asked for none, as allowPasswordless is not on: refuse as better-auth does.
    passwords.verify(user, password or "")


class EnableInput(inputs.Input):
    password = inputs.String()
    method = inputs.String(required=False)
    issuer = inputs.String(required=False, max_length=200)


@_register("POST", "/two-factor/enable", name="enable_two_factor", body=EnableInput, guard="session",
           during_enrolment=True, summary="Enable two-factor authentication (TOTP by default, or e-mail codes)",
           response="TwoFactorEnabled")
def enable_two_factor(ctx):
    found = sessions.get_session(ctx)
    user = found.user
    method = ctx.body.get("method") or "totp"
    if method not in ("totp", "otp"):
        raise APIError(400, codes.VALIDATION_ERROR, 'Invalid option: expected one of "otp"|"totp"')
    existing = challenge.factor_of(user)
    if users.two_factor_enabled_of(user) or existing is not None:
        # With a factor in place, enable re-issues a secret and backup codes: as strong as disable,
        # so guarded like it. A first enrolment (nothing to take over) keeps better-auth's any-session rule.
        sessions.require_fresh(found)
    _check_password(user, ctx.body["password"])
    if method == "otp":
        if not two_factor.app_settings.two_factor.otp.enabled:
            raise APIError(400, codes.OTP_NOT_CONFIGURED)
        if not users.two_factor_enabled_of(user):
            two_factor.turn_on(user)
            cookie_cache.clear_carried(ctx)  # its user says twoFactorEnabled: false
            signals.two_factor_enabled.send(sender=type(user), user=user, method="otp")
        return {"method": "otp"}
    if existing is not None and existing.verified:
        raise APIError(400, codes.TOTP_ALREADY_ENABLED)
    secret = totp.new_secret()
    skip = two_factor.app_settings.two_factor.skip_verification_on_enable
    TwoFactor.objects.update_or_create(user=user, defaults={
        "secret": crypto.encrypt(secret), "verified": skip, "last_used_step": 0})
    codes_ = backup_codes.replace(user)
    if skip and not users.two_factor_enabled_of(user):
        two_factor.turn_on(user)
        cookie_cache.clear_carried(ctx)
        signals.two_factor_enabled.send(sender=type(user), user=user, method="totp")
    return {"method": "totp", "totpURI": totp.uri(secret, users.email_of(user), ctx.body.get("issuer")),
            "backupCodes": codes_}


class PasswordInput(inputs.Input):
    password = inputs.String()


@_register("POST", "/two-factor/disable", name="disable_two_factor", body=PasswordInput, guard="fresh",
           summary="Disable two-factor authentication", response="Status")
def disable_two_factor(ctx):
    user = sessions.get_session(ctx).user
    _check_password(user, ctx.body["password"])
    reset.clear(user)
    ctx.delete_cookie(devices.COOKIE)
    # A cached answer would go on showing twoFactorEnabled, and without the enrolment flag a
    # required_for user now owes (attack 17d): the next get-session reads the database.
    cookie_cache.clear_carried(ctx)
    signals.two_factor_disabled.send(sender=type(user), user=user, reset_by=None)
    return {"status": True}


@_register("POST", "/two-factor/get-totp-uri", name="get_totp_uri", body=PasswordInput, guard="fresh",
           during_enrolment=True, summary="The TOTP URI (for a new authenticator)", response="TotpURI")
def get_totp_uri(ctx):
    user = sessions.get_session(ctx).user
    factor = challenge.factor_of(user)
    if factor is None:
        raise APIError(400, codes.TOTP_NOT_ENABLED)
    _check_password(user, ctx.body["password"])
    secret = crypto.decrypt(factor.secret)
    if secret is None:  # encrypted under a secret no longer configured: only a reset helps
        raise APIError(400, codes.TOTP_NOT_ENABLED)
    return {"totpURI": totp.uri(secret, users.email_of(user))}


@_register("POST", "/two-factor/generate-backup-codes", name="generate_backup_codes", body=PasswordInput,
           guard="fresh", summary="Replace the backup codes", response="BackupCodes")
def generate_backup_codes(ctx):
    user = sessions.get_session(ctx).user
    if not users.two_factor_enabled_of(user):
        raise APIError(400, codes.TWO_FACTOR_NOT_ENABLED)
    _check_password(user, ctx.body["password"])
    if challenge.factor_of(user) is None:
        raise APIError(400, codes.TWO_FACTOR_NOT_ENABLED)
    return {"status": True, "backupCodes": backup_codes.replace(user)}


class VerifyInput(inputs.Input):
    code = inputs.String(max_length=64)
    trustDevice = inputs.Boolean(required=False)


@_register("POST", "/two-factor/verify-totp", name="verify_totp", body=VerifyInput, during_enrolment=True,
           summary="Verify a TOTP code (finishes a sign-in, or turns TOTP on)", response="TokenUser")
def verify_totp(ctx):
    return challenge.verify(ctx, lambda check: _verify_totp(ctx, check))


def _verify_totp(ctx, check):
    factor = challenge.factor_for(check)
    if factor is None or (check.is_sign_in and not factor.verified):
        raise APIError(400, codes.TOTP_NOT_ENABLED)

    def compare():
        secret = crypto.decrypt(factor.secret)
        step = totp.matching_step(secret, ctx.body["code"]) if secret else None
        # A replay (a step at or below the last one used) fails exactly as a wrong code does.
        return step is not None and totp.use_step(factor, step)

    challenge.guess(ctx, check, compare, APIError(401, codes.INVALID_CODE))
    if not factor.verified:
        TwoFactor.objects.filter(pk=factor.pk).update(verified=True)
        if not users.two_factor_enabled_of(check.user):
            two_factor.turn_on(check.user)
            signals.two_factor_enabled.send(sender=type(check.user), user=check.user, method="totp")
    return challenge.succeed(ctx, check, "totp", trust_device=ctx.body.get("trustDevice") is True)


class SendOtpInput(inputs.Input):
    trustDevice = inputs.Boolean(required=False)


@_register("POST", "/two-factor/send-otp", name="send_two_factor_otp", body=SendOtpInput, body_optional=True,
           during_enrolment=True,
           summary="Mail a two-factor code", response="Status")
def send_two_factor_otp(ctx):
    return otp.send(ctx, challenge.start(ctx))


@_register("POST", "/two-factor/verify-otp", name="verify_two_factor_otp", body=VerifyInput, during_enrolment=True,
           summary="Verify a mailed code (finishes a sign-in, or turns e-mail codes on)", response="TokenUser")
def verify_two_factor_otp(ctx):
    return challenge.verify(ctx, lambda check: _verify_otp(ctx, check))


def _verify_otp(ctx, check):
    challenge.guess(ctx, check, lambda: otp.verify(check, ctx.body["code"]), APIError(401, codes.INVALID_CODE))
    if not users.two_factor_enabled_of(check.user):
        two_factor.turn_on(check.user)
        signals.two_factor_enabled.send(sender=type(check.user), user=check.user, method="otp")
    return challenge.succeed(ctx, check, "otp", trust_device=ctx.body.get("trustDevice") is True)


class VerifyBackupCodeInput(VerifyInput):
    disableSession = inputs.Boolean(required=False)


@_register("POST", "/two-factor/verify-backup-code", name="verify_backup_code", body=VerifyBackupCodeInput,
           summary="Use a backup code (finishes a sign-in)", response="TokenUser")
def verify_backup_code(ctx):
    return challenge.verify(ctx, lambda check: _verify_backup_code(ctx, check))


def _verify_backup_code(ctx, check):
    factor = challenge.factor_for(check)
    # The codes come with TOTP and count only once it is confirmed: those of an enrolment nobody
    # finished (``enable`` alone, maybe by whoever holds an old cookie and the password) open nothing.
    if factor is None or not factor.verified:
        raise APIError(400, codes.BACKUP_CODES_NOT_ENABLED)
    challenge.guess(ctx, check, lambda: backup_codes.consume(check.user, ctx.body["code"]),
                    APIError(401, codes.INVALID_BACKUP_CODE))
    return challenge.succeed(ctx, check, "backup_code", trust_device=ctx.body.get("trustDevice") is True,
                             create_session=ctx.body.get("disableSession") is not True)


@_register("GET", "/two-factor/trusted-devices", name="list_trusted_devices", guard="session",
           summary="The caller's trusted devices", response="TrustedDeviceList")
def list_trusted_devices(ctx):
    return [devices.to_wire(device) for device in devices.live(sessions.get_session(ctx).user)]


class RevokeTrustedDeviceInput(inputs.Input):
    id = inputs.String(max_length=64)


@_register("POST", "/two-factor/revoke-trusted-device", name="revoke_trusted_device",
           body=RevokeTrustedDeviceInput, guard="sensitive", summary="Revoke one of the caller's trusted devices",
           response="Status")
def revoke_trusted_device(ctx):
    if not devices.revoke(sessions.get_session(ctx).user, ctx.body["id"]):
        raise APIError(404, codes.TRUSTED_DEVICE_NOT_FOUND)
    return {"status": True}
