"""@better-auth/passkey's error codes (its ``PASSKEY_ERROR_CODES``), with its messages."""

from authservice.errors import define

CHALLENGE_NOT_FOUND = define("CHALLENGE_NOT_FOUND", "Challenge not found")
NOT_ALLOWED = define("YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY", "You are not allowed to register this passkey")
FAILED_TO_VERIFY_REGISTRATION = define("FAILED_TO_VERIFY_REGISTRATION", "Failed to verify registration")
PASSKEY_NOT_FOUND = define("PASSKEY_NOT_FOUND", "Passkey not found")
AUTHENTICATION_FAILED = define("AUTHENTICATION_FAILED", "Authentication failed")
UNABLE_TO_CREATE_SESSION = define("UNABLE_TO_CREATE_SESSION", "Unable to create session")
FAILED_TO_UPDATE_PASSKEY = define("FAILED_TO_UPDATE_PASSKEY", "Failed to update passkey")
SESSION_REQUIRED = define("SESSION_REQUIRED", "Passkey registration requires an authenticated session")
