"""The example project as bench/enumeration.py runs it: sign-up requires a verified address.

Then a taken address gets the no-session answer of a new one (core.md §4.3), so sign-up is an
endpoint whose answer hides the account and whose time must too (I7). Everything else is
project/settings.py, configured from the environment as usual (AUTH_TASKS_BACKEND, EMAIL_URL, ...).
"""

from project.settings import *  # noqa: F403 - this module is those settings plus one change
from project.settings import AUTHSERVICE

AUTHSERVICE["email_and_password"] = {
    **AUTHSERVICE.get("email_and_password", {}), "require_email_verification": True,
}
