"""better-auth's passkey plugin (@better-auth/passkey 1.7.6): registration and sign-in ceremonies, and the
caller's passkeys. Paths, bodies, answers and codes are the plugin's; routes exist only while
``AUTHSERVICE["passkey"]["enabled"]`` is on (Endpoint.enabled), as in better-auth with the plugin."""

from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.errors import validation_error
from authservice.flows import sessions
from authservice.passkey import flows
from authservice.passkey.settings import is_enabled

TAGS = ("passkey",)


class RegistrationOptionsQuery(inputs.Input):
    authenticatorAttachment = inputs.String(required=False)
    name = inputs.String(required=False, max_length=255)
    # Bounded so a request line stays well under servers' limits (gunicorn: 4094 bytes, percent-encoded).
    context = inputs.String(required=False, max_length=256)


@endpoint("GET", "/passkey/generate-register-options", name="generate_passkey_registration_options",
          query=RegistrationOptionsQuery, guard="fresh", no_store=True,
          summary="WebAuthn options to register a passkey for the caller", response="PasskeyOptions", tags=TAGS, enabled=is_enabled)
def generate_register_options(ctx):
    attachment = ctx.query.get("authenticatorAttachment")
    if attachment is not None and attachment not in ("platform", "cross-platform"):
        raise validation_error('Invalid option: expected one of "platform"|"cross-platform"')
    return flows.registration_options(ctx, sessions.get_session(ctx).user, name=ctx.query.get("name"),
                                      attachment=attachment, context=ctx.query.get("context"))


class VerifyRegistrationInput(inputs.Input):
    response = inputs.Record(required=False)
    name = inputs.String(required=False, max_length=255)
    createSession = inputs.Boolean(required=False)


@endpoint("POST", "/passkey/verify-registration", name="verify_passkey_registration",
          body=VerifyRegistrationInput, guard="fresh", no_store=True,
          summary="Store the passkey the authenticator created", response="PasskeyRegistered", tags=TAGS, enabled=is_enabled)
def verify_registration(ctx):
    name = (ctx.body.get("name") or "").strip()
    return flows.verify_registration(ctx, sessions.get_session(ctx).user, ctx.body.get("response"),
                                     name=name or None, create_session=bool(ctx.body.get("createSession")))


@endpoint("GET", "/passkey/generate-authenticate-options", name="generate_passkey_authentication_options",
          no_store=True, summary="WebAuthn options to sign in with a passkey", response="PasskeyOptions",
          tags=TAGS, enabled=is_enabled)
def generate_authenticate_options(ctx):
    return flows.authentication_options(ctx)


class VerifyAuthenticationInput(inputs.Input):
    response = inputs.Record()


@endpoint("POST", "/passkey/verify-authentication", name="verify_passkey_authentication",
          body=VerifyAuthenticationInput, login_csrf=True, no_store=True,
          summary="Sign in with a passkey's assertion", response="PasskeySignIn", tags=TAGS, enabled=is_enabled)
def verify_authentication(ctx):
    return flows.verify_authentication(ctx, ctx.body["response"])


@endpoint("GET", "/passkey/list-user-passkeys", name="list_passkeys", guard="session", no_store=True,
          summary="The caller's passkeys", response="PasskeyList", tags=TAGS, enabled=is_enabled)
def list_passkeys(ctx):
    return flows.list_passkeys(sessions.get_session(ctx).user)


class DeletePasskeyInput(inputs.Input):
    id = inputs.String(max_length=64)


@endpoint("POST", "/passkey/delete-passkey", name="delete_passkey", body=DeletePasskeyInput, guard="session",
          summary="Delete one of the caller's passkeys", response="Status", tags=TAGS, enabled=is_enabled)
def delete_passkey(ctx):
    flows.delete_passkey(sessions.get_session(ctx).user, ctx.body["id"])
    return {"status": True}


class UpdatePasskeyInput(inputs.Input):
    id = inputs.String(max_length=64)
    name = inputs.String(max_length=255)


@endpoint("POST", "/passkey/update-passkey", name="update_passkey", body=UpdatePasskeyInput, guard="session",
          summary="Rename one of the caller's passkeys", response="PasskeyUpdated", tags=TAGS, enabled=is_enabled)
def update_passkey(ctx):
    name = ctx.body["name"].strip()
    if not name:
        raise validation_error("Too small: expected string to have >=1 characters")
    return {"passkey": flows.rename_passkey(sessions.get_session(ctx).user, ctx.body["id"], name)}
