"""The passkey ceremonies and the management of a user's passkeys (@better-auth/passkey's routes).

WebAuthn itself (CBOR, COSE keys, signatures, flags, the challenge/origin/RP ID comparison and the sign
counter rule) is py_webauthn's; this module decides what it is compared with and what is stored.
"""

import base64
import json

import webauthn
from django.db import IntegrityError, transaction
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AttestationConveyancePreference,
    AuthenticatorAttachment,
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    CredentialDeviceType,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from authservice import signals, tokens, users, wire
from authservice.errors import APIError, codes
from authservice.flows import email_password, sessions
from authservice.models import Passkey, Session
from authservice.passkey import challenges, errors
from authservice.passkey import settings as rp
from authservice.two_factor import challenge as two_factor_challenge

DEVICE_TYPES = {CredentialDeviceType.SINGLE_DEVICE: "singleDevice", CredentialDeviceType.MULTI_DEVICE: "multiDevice"}
_TRANSPORTS = {transport.value for transport in AuthenticatorTransport}
# What py_webauthn raises on a response it refuses, and what parsing a malformed one raises on the way.
_REFUSED = (WebAuthnException, ValueError, TypeError, KeyError, AttributeError)
MAX_CREDENTIAL_ID_BYTES = 1023


def _descriptors(passkeys):
    return [
        PublicKeyCredentialDescriptor(
            id=webauthn.base64url_to_bytes(passkey.credential_id),
            transports=[AuthenticatorTransport(t) for t in passkey.transports.split(",") if t in _TRANSPORTS],
        )
        for passkey in passkeys
    ]


def _user_name(user):
    return users.email_of(user) or str(user.pk)


# --- registration -----------------------------------------------------------------------------------
def registration_options(ctx, user, *, name=None, attachment=None, context=None):
    selection = rp.options().authenticator_selection
    attachment = attachment or selection.authenticator_attachment
    user_name = _user_name(user)
    options = webauthn.generate_registration_options(
        rp_id=rp.rp_id(),
        rp_name=rp.rp_name(),
        # A random handle, as better-auth: the authenticator never learns the account's id.
        user_id=tokens.random_string(32, tokens.LOWER_ALNUM).encode(),
        user_name=name or user_name,
        user_display_name=user_name,
        attestation=AttestationConveyancePreference.NONE,
        exclude_credentials=_descriptors(Passkey.objects.filter(user=user)),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement(selection.resident_key),
            user_verification=UserVerificationRequirement(selection.user_verification),
            authenticator_attachment=AuthenticatorAttachment(attachment) if attachment else None,
        ),
    )
    answer = json.loads(webauthn.options_to_json(options))
    challenges.store(ctx, challenges.REGISTRATION, answer["challenge"],
                     {"id": str(user.pk), "name": user_name, "displayName": user_name}, context)
    return answer


def _transports(response):
    found = (response.get("response") or {}).get("transports") if isinstance(response, dict) else None
    if not isinstance(found, list):
        return ""
    return ",".join(t for t in dict.fromkeys(found) if isinstance(t, str) and t in _TRANSPORTS)


def verify_registration(ctx, user, response, *, name=None, create_session=False):
    data = challenges.consume(ctx, challenges.REGISTRATION)
    # The challenge was issued to this browser for this account; a session switched since is refused.
    if (data.get("userData") or {}).get("id") != str(user.pk):
        raise APIError(401, errors.NOT_ALLOWED)
    if not isinstance(response, dict):
        raise APIError(400, errors.FAILED_TO_VERIFY_REGISTRATION)
    try:
        verified = webauthn.verify_registration_response(
            credential=response,
            expected_challenge=webauthn.base64url_to_bytes(data["expectedChallenge"]),
            expected_rp_id=rp.rp_id(),
            expected_origin=rp.expected_origins(),
            require_user_verification=rp.require_user_verification(),
        )
    except _REFUSED:
        # better-auth answers 500 here; a refused credential is the client's error, never a 5xx.
        raise APIError(400, errors.FAILED_TO_VERIFY_REGISTRATION) from None
    # WebAuthn caps a credential ID at 1023 bytes (§5.8.3) and py_webauthn does not check it: longer is
    # no browser's credential, and past the column's width PostgreSQL would refuse the INSERT.
    if len(verified.credential_id) > MAX_CREDENTIAL_ID_BYTES:
        raise APIError(400, errors.FAILED_TO_VERIFY_REGISTRATION)
    credential_id = bytes_to_base64url(verified.credential_id)
    # One credential, one account: a second registration of an ID (replayed, or copied from a victim's
    # listing with the attacker's own key) would let its holder choose the account (I1). The unique
    # index decides, so two registrations racing one ID cannot both pass a look-up; the savepoint lets
    # the loser answer instead of breaking the request's transaction.
    session_id = _session_id(ctx)
    try:
        with transaction.atomic():
            # Written only while the session it is registered from still exists: a reset, proof or
            # revocation that ended it while the ceremony ran would otherwise retire nothing of a
            # passkey written after it (I1). The user's lock orders the two (passkey/retirement.py).
            users.lock(user)
            if not Session.objects.filter(pk=session_id, user=user).exists():
                raise APIError(401, errors.SESSION_REQUIRED)
            passkey = Passkey.objects.create(
                name=name or None,
                user=user,
                credential_id=credential_id,
                public_key=base64.b64encode(verified.credential_public_key).decode(),
                counter=verified.sign_count,
                device_type=DEVICE_TYPES[verified.credential_device_type],
                backed_up=verified.credential_backed_up,
                transports=_transports(response),
                aaguid=verified.aaguid,
                # A revocation of this session ends this passkey too (passkey/retirement.py).
                created_by_session_id=session_id,
            )
    except IntegrityError:
        raise APIError(400, errors.FAILED_TO_VERIFY_REGISTRATION) from None
    signals.passkey_added.send(sender=Passkey, user=user, passkey=passkey)
    answer = wire.passkey(passkey)
    if create_session:
        session = sessions.create_session(ctx, user, method="passkey")
        answer.update(session=wire.session(session), user=wire.user(user))
    return answer


def _session_id(ctx):
    found = sessions.get_session(ctx)
    return found.session.pk if found else None


# --- authentication ---------------------------------------------------------------------------------
def authentication_options(ctx):
    found = sessions.resolve_session(ctx)
    passkeys = Passkey.objects.filter(user=found.user) if found else Passkey.objects.none()
    options = webauthn.generate_authentication_options(
        rp_id=rp.rp_id(),
        allow_credentials=_descriptors(passkeys) or None,
        user_verification=UserVerificationRequirement(rp.options().authenticator_selection.user_verification),
    )
    answer = json.loads(webauthn.options_to_json(options))
    challenges.store(ctx, challenges.AUTHENTICATION, answer["challenge"],
                     {"id": str(found.user.pk) if found else ""})
    return answer


def verify_authentication(ctx, response):
    data = challenges.consume(ctx, challenges.AUTHENTICATION)
    credential_id = response.get("id")
    passkey = None
    if isinstance(credential_id, str) and 0 < len(credential_id) <= 1400:
        passkey = Passkey.objects.select_related("user").filter(credential_id=credential_id).first()
    if passkey is None:
        raise APIError(401, errors.PASSKEY_NOT_FOUND)
    try:
        verified = webauthn.verify_authentication_response(
            credential=response,
            expected_challenge=webauthn.base64url_to_bytes(data["expectedChallenge"]),
            expected_rp_id=rp.rp_id(),
            expected_origin=rp.expected_origins(),
            credential_public_key=base64.b64decode(passkey.public_key),
            # py_webauthn refuses a counter that did not increase: a cloned authenticator.
            credential_current_sign_count=passkey.counter,
            require_user_verification=rp.require_user_verification(),
        )
    except _REFUSED:
        raise APIError(400, errors.AUTHENTICATION_FAILED) from None
    device_type = DEVICE_TYPES[verified.credential_device_type]
    # The backup-eligible flag is fixed when the credential is made; a change means another authenticator.
    if device_type != passkey.device_type:
        raise APIError(400, errors.AUTHENTICATION_FAILED)
    user = passkey.user
    if not getattr(user, "is_active", True):
        raise APIError(401, errors.AUTHENTICATION_FAILED)
    email_password.check_email_verified(ctx, user)
    _advance_counter(passkey, verified.new_sign_count, verified.credential_backed_up)
    return _sign_in(ctx, user, verified.user_verified)


def _sign_in(ctx, user, user_verified):
    """A user-verifying assertion (PIN, biometric: the UV flag) is two factors in one, as in better-auth.
    One without is possession alone, a key found on a desk: for a user with 2FA it is the first step
    only, answered as a password sign-in of that user is (``twoFactorRedirect``, no session)."""
    if not user_verified:
        pending = two_factor_challenge.begin_sign_in(ctx, user, True)
        if pending is not None:
            return pending
    session = sessions.create_session(ctx, user, method="passkey")
    return {"session": wire.session(session), "user": wire.user(user)}


def _advance_counter(passkey, new_count, backed_up):
    """Store the new counter only over a lower one (or 0 over 0, an authenticator without a counter):
    of two assertions with the same counter racing in, the second finds no row to update."""
    rows = Passkey.objects.filter(pk=passkey.pk)
    rows = rows.filter(counter=0) if new_count == 0 else rows.filter(counter__lt=new_count)
    if not rows.update(counter=new_count, backed_up=backed_up):
        raise APIError(400, errors.AUTHENTICATION_FAILED)


# --- management -------------------------------------------------------------------------------------
def list_passkeys(user):
    return [wire.passkey(passkey) for passkey in Passkey.objects.filter(user=user).order_by("created_at", "id")]


def _owned(user, passkey_id, forbidden):
    if not passkey_id:
        raise APIError(400, codes.VALIDATION_ERROR, "Missing required parameter: id")
    passkey = Passkey.objects.filter(pk=passkey_id).first()
    if passkey is None:
        raise APIError(404, errors.PASSKEY_NOT_FOUND)
    if passkey.user_id != user.pk:
        raise APIError(401, forbidden)
    return passkey


def delete_passkey(user, passkey_id):
    passkey = _owned(user, passkey_id, codes.UNAUTHORIZED)
    # A queryset delete keeps the instance's id for the receivers; a concurrent delete sends nothing.
    if Passkey.objects.filter(pk=passkey.pk, user=user).delete()[0]:
        signals.passkey_removed.send(sender=Passkey, user=user, passkey=passkey)


def rename_passkey(user, passkey_id, name):
    passkey = _owned(user, passkey_id, errors.NOT_ALLOWED)
    passkey.name = name
    passkey.save(update_fields=["name"])
    return wire.passkey(passkey)
