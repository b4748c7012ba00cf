"""Every auth event, as a Django signal. Receivers get ``sender`` plus the keyword arguments listed.

Connect with ``@receiver(authservice.signals.user_signed_in)``. Signals are sent after the change
is written; a receiver that raises does not undo it. The one exception is named ``*_committing``: it
is sent inside the transaction, so what its receivers write commits with the change, or not at all.
"""

from django.dispatch import Signal

# user: the new user; provider: "credential" or a social/SSO provider id.
user_created: Signal = Signal()
# user, session.
user_signed_in: Signal = Signal()
# user, session: the session that was ended by sign-out.
user_signed_out: Signal = Signal()
# user, session: a session ended by revoke-session(s), password change or reset.
session_revoked: Signal = Signal()
# user.
email_verified: Signal = Signal()
# user.
password_changed: Signal = Signal()
# user.
password_reset: Signal = Signal()
# user, old_email, new_email.
email_changed: Signal = Signal()
# user_id, email: sent after the user row and its sessions and accounts are gone.
user_deleted: Signal = Signal()
# user, provider (id), account, session, is_new_user: a sign-in through a social provider (issue 5).
social_sign_in: Signal = Signal()
# user, provider (id), is_new_user: sent *inside* a social sign-in's transaction, right after the session
# row, before it commits. What receivers write commits with the session, so its first request sees it
# (the sso plugin's membership by e-mail domain); a receiver that raises rolls the sign-in back.
social_sign_in_committing: Signal = Signal()
# user, provider (id), account: a provider account attached to an existing user.
account_linked: Signal = Signal()
# user, method ("totp" or "otp"): a second factor turned on (after its first valid code).
two_factor_enabled: Signal = Signal()
# user, reset_by (None, or "admin"/"command" for a reset): every factor and trusted device gone.
two_factor_disabled: Signal = Signal()
# user, method ("totp", "otp", "backup_code"), session (the new one for a sign-in, else the caller's).
two_factor_verified: Signal = Signal()
# user, passkey: a WebAuthn credential registered by the user (passkey plugin).
passkey_added: Signal = Signal()
# user, passkey: a passkey deleted by its user or in the admin (the row is gone; its fields are kept).
passkey_removed: Signal = Signal()
