"""The error catalogue and the one exception every endpoint raises.

Codes and messages are better-auth's strings (core.md); clients switch on ``code``. Plugins add their
own codes with :func:`define` in their own ``errors.py``.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any


class ErrorCode(str):
    """A code string that also carries its default message."""

    message: str

    def __new__(cls, code: str, message: str) -> ErrorCode:
        obj = super().__new__(cls, code)
        obj.message = message
        return obj


class _Catalogue:
    def __getattr__(self, name: str) -> ErrorCode:
        raise AttributeError(f"Unknown error code {name}")


codes = _Catalogue()


def define(code: str, message: str) -> ErrorCode:
    error_code = ErrorCode(code, message)
    setattr(codes, code, error_code)
    return error_code


for _code, _message in {
    "NOT_FOUND": "Not Found",
    "METHOD_NOT_ALLOWED_DEFER_SESSION_REQUIRED": (
        "POST method requires deferSessionRefresh to be enabled in session config"
    ),
    "BAD_REQUEST": "Invalid JSON in request body",
    "VALIDATION_ERROR": "Invalid input",
    "UNSUPPORTED_MEDIA_TYPE": "Unsupported media type",
    "PAYLOAD_TOO_LARGE": "Request body is too large",
    "TOO_MANY_REQUESTS": "Too many requests. Please try again later.",
    "INTERNAL_SERVER_ERROR": "Internal Server Error",
    "FORBIDDEN": "Forbidden",
    "SERVICE_UNAVAILABLE": "Service temporarily unavailable. Please try again.",
    "MISSING_OR_NULL_ORIGIN": "Missing or null Origin",
    "INVALID_ORIGIN": "Invalid origin",
    "CROSS_SITE_NAVIGATION_LOGIN_BLOCKED": "Cross-site navigation login blocked",
    "INVALID_CALLBACK_URL": "Invalid callbackURL",
    "INVALID_REDIRECT_URL": "Invalid redirectURL",
    "INVALID_ERROR_CALLBACK_URL": "Invalid errorCallbackURL",
    "INVALID_NEW_USER_CALLBACK_URL": "Invalid newUserCallbackURL",
    "UNAUTHORIZED": "Unauthorized",
    "SESSION_NOT_FRESH": "Session is not fresh",
    "SESSION_EXPIRED": "Session expired. Re-authenticate to perform this action.",
    "FAILED_TO_GET_SESSION": "Failed to get session",
    # Ours: two_factor.required_for applies to the caller, who has no second factor yet (docs/mfa.md).
    "TWO_FACTOR_ENROLLMENT_REQUIRED": "Two-factor authentication must be enabled first",
    "FAILED_TO_CREATE_SESSION": "Failed to create session",
    "EMAIL_PASSWORD_DISABLED": "Email and password is not enabled",
    "EMAIL_PASSWORD_SIGN_UP_DISABLED": "Email and password sign up is not enabled",
    "INVALID_EMAIL": "Invalid email",
    "INVALID_EMAIL_OR_PASSWORD": "Invalid email or password",
    "INVALID_PASSWORD": "Invalid password",
    "PASSWORD_TOO_SHORT": "Password too short",
    "PASSWORD_TOO_LONG": "Password too long",
    "EMAIL_NOT_VERIFIED": "Email not verified",
    "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL": "User already exists. Use another email.",
    "FAILED_TO_CREATE_USER": "Failed to create user",
    "FIELD_NOT_ALLOWED": "Field not allowed",
    "MISSING_FIELD": "Missing field",
    "VERIFICATION_EMAIL_NOT_ENABLED": "Verification email isn't enabled",
    "EMAIL_MISMATCH": "Email mismatch",
    "EMAIL_ALREADY_VERIFIED": "Email is already verified",
    "TOKEN_EXPIRED": "Token expired",
    "INVALID_TOKEN": "Invalid token",
    "USER_NOT_FOUND": "User not found",
    "INVALID_USER": "Invalid user",
    "RESET_PASSWORD_DISABLED": "Reset password isn't enabled",
    "CREDENTIAL_ACCOUNT_NOT_FOUND": "Credential account not found",
    "CHANGE_EMAIL_DISABLED": "Change email is disabled",
    "EMAIL_IS_THE_SAME": "Email is the same",
    "EMAIL_CAN_NOT_BE_UPDATED": "Email can not be updated",
    "NO_FIELDS_TO_UPDATE": "No fields to update",
    "FAILED_TO_GET_USER_INFO": "Failed to get user info",
    "FAILED_TO_UNLINK_LAST_ACCOUNT": "You can't unlink your last account",
    "ACCOUNT_NOT_FOUND": "Account not found",
    "PROVIDER_NOT_FOUND": "Provider not found",
}.items():
    define(_code, _message)

# Messages that differ from the code's default for one use.
DELETE_DISABLED_MESSAGE = "Not found"
HEADERS_REQUIRED_MESSAGE = "Headers is required"


def status_name(status_code: int) -> str:
    """``401`` -> ``"UNAUTHORIZED"`` (core.md §1.5)."""
    if status_code == 413:
        return "PAYLOAD_TOO_LARGE"
    try:
        return HTTPStatus(status_code).name
    except ValueError:
        return str(status_code)


class APIError(Exception):
    """A failed operation: rendered as ``{message, code, status}`` over HTTP, raised in-process.

    ``status`` is the status name (``"UNAUTHORIZED"``) [D3]; ``status_code`` the integer.
    """

    def __init__(self, status_code: int, code: str, message: str | None = None,
                 headers: dict[str, Any] | None = None) -> None:
        self.status_code = int(status_code)
        self.code = str(code)
        self.message = message if message is not None else getattr(code, "message", str(code))
        self.headers = headers if headers is not None else {}
        super().__init__(self.message)

    @property
    def status(self) -> str:
        return status_name(self.status_code)

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "code": self.code, "status": self.status_code}

    def __repr__(self) -> str:
        return f"APIError({self.status_code}, {self.code!r}, {self.message!r})"


def validation_error(message: str) -> APIError:
    return APIError(400, codes.VALIDATION_ERROR, message)


# --- social sign-in (issue 5; core.md §4.19, §5.1) -------------------------------------------------
for _code, _message in {
    "CALLBACK_URL_REQUIRED": "callbackURL is required",
    "ID_TOKEN_NOT_SUPPORTED": "id_token not supported",
    "USER_EMAIL_NOT_FOUND": "User email not found",
    "SOCIAL_ACCOUNT_ALREADY_LINKED": "Social account already linked",
    "LINKING_NOT_ALLOWED": "Account not linked - linking not allowed",
    "LINKING_DIFFERENT_EMAILS_NOT_ALLOWED": "Account not linked - different emails not allowed",
    "LINKING_FAILED": "Account not linked - unable to create account",
    # The message is the reason ("account not linked", "signup disabled", ...).
    "OAUTH_LINK_ERROR": "account not linked",
    "INVALID_OAUTH_CONFIGURATION": "Invalid OAuth configuration",
    "FAILED_TO_CREATE_VERIFICATION": "Unable to create verification",
}.items():
    define(_code, _message)


class OAuthCallbackError:
    """The ``?error=`` values of GET /callback/:provider redirects (core.md §5.3), in step order."""

    INVALID_CALLBACK_REQUEST = "invalid_callback_request"
    STATE_NOT_FOUND = "state_not_found"
    STATE_MISMATCH = "state_mismatch"
    INTERNAL_SERVER_ERROR = "internal_server_error"
    NO_CODE = "no_code"
    PROVIDER_NOT_FOUND = "oauth_provider_not_found"
    ISSUER_MISMATCH = "issuer_mismatch"
    NONCE_BINDING_MISSING = "nonce_binding_missing"
    INVALID_CODE = "invalid_code"
    UNABLE_TO_GET_USER_INFO = "unable_to_get_user_info"
    NO_CALLBACK_URL = "no_callback_url"
    UNABLE_TO_LINK_ACCOUNT = "unable_to_link_account"
    EMAIL_DOES_NOT_MATCH = "email_does_not_match"
    ACCOUNT_ALREADY_LINKED = "account_already_linked_to_different_user"
    EMAIL_NOT_FOUND = "email_not_found"
    EMAIL_NOT_VERIFIED = "email_not_verified"
    # Sign-in failure reasons (better-auth's words; the redirect replaces spaces with "_").
    ACCOUNT_NOT_LINKED = "account not linked"
    SIGNUP_DISABLED = "signup disabled"
    UNABLE_TO_CREATE_USER = "unable to create user"
    LINK_FAILED = "unable to link account"
    UNABLE_TO_UPDATE_ACCOUNT = "unable to update account"
    UNABLE_TO_CREATE_SESSION = "unable to create session"
    # Refusals of the one external-identity flow (authservice/flows/external_identity.py, issue 12).
    # I1: the provider is not trusted for the user's e-mail domain (SSO domain verification).
    EMAIL_DOMAIN_NOT_TRUSTED = "email_domain_not_trusted"
    # The user is deactivated (is_active false): no session from any provider.
    USER_INACTIVE = "user_inactive"
